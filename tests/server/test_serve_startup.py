"""``trilha serve`` that cannot start: one line on stderr naming the cause and what to do, exit 2,
no traceback and no "serving on" line. The held workspace runs the command in its own process,
as a user runs it; the others call the CLI's ``main`` here (the same code, seconds faster)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import make_docs
from trilha.cli.main import main
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.settings import TrilhaSettings
from trilha.testing.loopback import free_port
from trilha.workspace import Workspace

SERVICE = """
projects:
  main: {workspace: nowhere, tenant: acme}
keys:
  - {key: key-of-the-reader-0001, tenant: acme, principal: {user_id: reader}}
"""


@pytest.fixture(scope="module")
def free_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Path:
    """A workspace no process holds."""
    folder = tmp_path_factory.mktemp("serve-startup") / "ws"
    settings = TrilhaSettings(graph_backend="none")
    ws = Workspace.open(folder, settings, embedder=embedder, create=True)
    ws.ingest(make_docs()[:2])
    ws.close()
    return folder


@pytest.fixture()
def busy_port() -> Iterator[int]:
    """A port another socket listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield int(other.getsockname()[1])


def _serve(*args: str) -> tuple[int, str, str]:
    """``trilha serve ARGS`` in a process of its own: exit status, stdout, stderr."""
    env = {**os.environ, "TRILHA_GRAPH_BACKEND": "none"}
    cmd = [sys.executable, "-m", "trilha.cli.main", "serve", *args]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``trilha serve ARGS`` through the CLI's main in this process."""
    capsys.readouterr()
    code = main(["serve", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _refused(result: tuple[int, str, str], *words: str) -> None:
    code, out, err = result
    assert code == 2, err
    assert "serving" not in out + err and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trilha serve: error: "), err
    assert all(w in lines[0] for w in words), lines[0]


def test_a_workspace_held_by_another_process(org_ws: Workspace) -> None:
    # this test process holds the session's workspace open
    port = str(free_port())
    _refused(_serve("-w", str(org_ws.path), "--port", port), "in use by another")


def test_a_service_file_naming_a_missing_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "service.yaml").write_text(SERVICE, encoding="utf-8")
    config = str(tmp_path / "service.yaml")
    result = _main(capsys, "--config", config, "--port", str(free_port()))
    _refused(result, "no trilha workspace", str(tmp_path / "nowhere"), "trilha ingest")


def test_a_port_in_use(free_ws: Path, busy_port: int, capsys: pytest.CaptureFixture[str]) -> None:
    result = _main(capsys, "-w", str(free_ws), "--port", str(busy_port))
    _refused(result, f"port {busy_port}", "in use", "--port")


def test_a_host_that_is_no_address(free_ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _main(capsys, "-w", str(free_ws), "--host", "256.1.1.1", "--port", str(free_port()))
    _refused(result, "--host 256.1.1.1", "127.0.0.1")
