"""``trilha serve`` as a user runs it: a real uvicorn process on a free port."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import wait_until_serving
from trilha.cli.main import main
from trilha.testing.loopback import free_port
from trilha.workspace import Workspace

DOC = "---\nlang: en\n---\n# Incidents\n\nReport incidents to the SOC within one hour.\n"


@pytest.fixture()
def served_ws(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "runbook.md").write_text(DOC, encoding="utf-8")
    ws = tmp_path / "ws"
    assert main(["ingest", "-q", "-w", str(ws), str(tmp_path / "docs")]) == 0
    return ws


def test_serve_answers_until_stopped_then_frees_the_workspace(served_ws: Path) -> None:
    port = free_port()
    env = {**os.environ, "TRILHA_GRAPH_BACKEND": "none"}
    cmd = [
        sys.executable,
        "-m",
        "trilha.cli.main",
        "serve",
        "-w",
        str(served_ws),
        "--port",
        str(port),
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, proc, 120)
        r = httpx.post(f"{base}/v1/retrieve", json={"query": "incident SOC"}, timeout=30)
        assert r.status_code == 200 and r.json()["hits"][0]["unit"]["doc_id"] == "runbook"
        assert "anonymous" in r.json()["trace"]["principal"]
        assert httpx.get(f"{base}/openapi.json", timeout=5).json()["info"]["title"] == "trilha"
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "serving default on" in out
    Workspace.open(served_ws, create=False).close()  # the lock was released


def test_serve_refuses_what_it_cannot_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "-w", str(tmp_path / "none")]) == 2
    assert "no trilha workspace" in capsys.readouterr().err
    (tmp_path / "service.yaml").write_text("projects: {}\n", encoding="utf-8")
    assert main(["serve", "--config", str(tmp_path / "service.yaml")]) == 2
    assert "service.yaml" in capsys.readouterr().err
