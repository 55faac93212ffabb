"""What MCP over streamable HTTP adds to a tool call: ``trilha_search`` called in-process (the
LlamaIndex tool's ``acall``) and through one MCP HTTP session (the SDK's client against
``trilha mcp --transport http`` on a loopback port, in its own process over a copy of the
workspace), interleaved, in one run.

Usage: ``python -m trilha.mcp.bench -w WORKSPACE [--user USER] [--calls 200]``.

Two series: ``distinct`` (every call a new query, so each runs the whole search) and
``cached`` (one query again and again: the workspace's result cache answers, so what is left
is the tools' and the protocol's own cost). Prints one JSON line per series: P50 and P90 in
milliseconds of each path and the P50 overhead (MCP minus in-process).
"""

from __future__ import annotations

import argparse
import json
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from trilha.cli.serve import listen
from trilha.server import Projects
from trilha.server.config import ServiceConfig
from trilha.testing.copying import copy_workspace
from trilha.workspace import Workspace


def _p(values: list[float], q: float) -> float:
    return round(statistics.quantiles(values, n=100)[int(q) - 1] * 1000, 2)


async def _series(
    name: str, calls: int, query: Callable[[int], str], local: Any, remote: Client
) -> dict[str, Any]:
    """``calls`` interleaved calls of each path; the first of each is not counted."""
    times: dict[str, list[float]] = {"in_process": [], "mcp_http": []}
    paths: dict[str, Callable[[str], Awaitable[Any]]] = {
        "in_process": lambda q: local.acall(query=q, top_k=5),
        "mcp_http": lambda q: remote.call_tool("trilha_search", {"query": q, "top_k": 5}),
    }
    for i in range(calls + 1):
        for path, run in paths.items():
            start = time.perf_counter()
            await run(query(i) + (" " + path if name == "distinct" else ""))
            if i:
                times[path].append(time.perf_counter() - start)
    row: dict[str, Any] = {"series": name, "calls": calls}
    for path, values in times.items():
        row[f"{path}_p50_ms"], row[f"{path}_p90_ms"] = _p(values, 50), _p(values, 90)
    row["overhead_p50_ms"] = round(row["mcp_http_p50_ms"] - row["in_process_p50_ms"], 2)
    return row


async def _measure(projects: Projects, key: str, url: str, calls: int) -> list[dict[str, Any]]:
    from trilha.mcp.tools import make_tools

    resolved = projects.resolve(projects.caller(None, key), None)
    local = make_tools(resolved.project, resolved.principal)[0]  # trilha_search
    http = httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=60)
    async with http, Client(streamable_http_client(url, http_client=http)) as remote:
        return [
            await _series("distinct", calls, lambda i: f"incident report {i}", local, remote),
            await _series("cached", calls, lambda _: "incident report", local, remote),
        ]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-w", "--workspace", type=Path, required=True)
    ap.add_argument("--user", help="a user of the workspace's principals.yaml (else anonymous)")
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args(argv)
    key = secrets.token_hex(16)
    with tempfile.TemporaryDirectory() as tmp:
        served = Path(tmp) / "ws"  # the server's own copy: a workspace is one process's
        copy_workspace(args.workspace, served)  # sparse: the shard's holes stay holes
        entry = {"key": key, "tenant": "t", **({"user": args.user} if args.user else {})}
        config = {"projects": {"bench": {"workspace": str(served), "tenant": "t"}}, "keys": [entry]}
        (Path(tmp) / "service.yaml").write_text(json.dumps(config), encoding="utf-8")
        with _served(Path(tmp) / "service.yaml") as url, Workspace.open(args.workspace) as ws:
            projects = Projects.over(ServiceConfig.model_validate(config), {"bench": ws})
            for row in anyio.run(_measure, projects, key, url, args.calls):
                print(json.dumps(row))


@contextmanager
def _served(config: Path) -> Iterator[str]:
    """``trilha mcp --transport http`` over ``config`` in its own process, once it answers."""
    with listen("127.0.0.1", 0) as sock:
        port = sock.getsockname()[1]
    cmd = [sys.executable, "-m", "trilha.cli.main", "mcp", "--config", str(config),
           "--transport", "http", "--port", str(port)]  # fmt: skip
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait(url, proc)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)


def _wait(url: str, proc: subprocess.Popen[bytes], seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            httpx2.post(url, json={}, timeout=5)  # any answer (a 401 here) means it serves
            return
        except httpx2.TransportError:
            time.sleep(0.2)
    raise SystemExit(f"trilha mcp did not start (exit status {proc.poll()})")


if __name__ == "__main__":
    main()
