"""A ``trilha serve`` process on a free loopback port, for measurements that need the service
as callers see it (``trilha load``); stopped, and its workspaces released, on exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from trilha.errors import BackendUnavailableError
from trilha.testing.loopback import free_port

#: Seconds ``trilha serve`` may take to answer its first /healthz (models load at start).
START_TIMEOUT_S = 180.0


@contextmanager
def served(config: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run ``trilha serve --config config`` until the block ends; yields its base URL. Its
    log goes to ``serve.log`` beside ``config`` (a pipe nobody reads would fill and stall it)."""
    port = free_port()
    cmd = [sys.executable, "-m", "trilha.cli.main", "serve", "--config", str(config),
           "--port", str(port)]  # fmt: skip
    log = config.with_name("serve.log")
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            cmd, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=sink
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(proc, url, log)
        yield url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            lines = log.read_text(errors="replace").strip().splitlines()
            raise BackendUnavailableError(f"trilha serve exited: {lines[-1] if lines else '?'}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code in (200, 503):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise BackendUnavailableError(f"trilha serve did not answer in {START_TIMEOUT_S:.0f} s")
