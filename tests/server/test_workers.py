"""Several service processes over one corpus: ``trilha serve --workers 2`` on a Qdrant server
(:mod:`trilha.testing.qdrant_server`), a FalkorDB server and Redis, while another process
ingests into the same workspace."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import wait_until_serving
from trilha.cli.main import main
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import ConfigurationError
from trilha.graph.stores.falkordb_server import EmbeddedFalkorServer
from trilha.server import Projects, ServiceConfig
from trilha.server.config import ProjectEntry
from trilha.settings import TrilhaSettings
from trilha.testing.loopback import free_port
from trilha.testing.qdrant_server import QdrantTestServer
from trilha.workspace import Workspace

DOC = "---\nlang: en\n---\n# Incidents\n\nReport incidents to the SOC within one hour.\n"
SERVICE = """
projects:
  main: {workspace: ws, tenant: acme}
keys:
  - {key: key-of-the-reader-0001, tenant: acme, principal: {user_id: reader}}
"""
KEY = {"X-API-Key": "key-of-the-reader-0001"}
NEW = "---\nlang: en\n---\n# Alloys\n\nZirconium alloys resist corrosion in reactor cladding.\n"


@pytest.fixture()
def shared_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, redis_url: str
) -> Iterator[dict[str, str]]:
    """Every index a server: Qdrant, FalkorDB (no process owns it but this test), Redis."""
    graph = EmbeddedFalkorServer(tmp_path / "graph-server")
    with QdrantTestServer() as qdrant:
        env = {
            "TRILHA_QDRANT_URL": qdrant.url,
            "TRILHA_GRAPH_URL": f"unix://{graph.start()}",
            "TRILHA_REDIS_URL": redis_url,
        }
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        yield env
    graph.stop()


def _children(pid: int) -> list[str]:
    found = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return found.stdout.split()


def _top_docs(base: str, query: str) -> set[str]:
    """The top document of the same query asked eight times (the workers share the calls)."""
    tops = set()
    for _ in range(8):
        body = {"query": query, "top_k": 1}
        r = httpx.post(f"{base}/v1/retrieve", json=body, headers=KEY, timeout=30)
        assert r.status_code == 200, r.text
        hits = r.json()["hits"]
        tops.add(hits[0]["unit"]["doc_id"] if hits else "")
    return tops


def test_two_workers_share_a_corpus_that_another_process_writes(
    tmp_path: Path, shared_env: dict[str, str]
) -> None:
    for name, text in (("docs", DOC), ("more", NEW)):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.md").write_text(text, encoding="utf-8")
    ws = tmp_path / "ws"
    assert main(["ingest", "-q", "-w", str(ws), str(tmp_path / "docs")]) == 0
    (tmp_path / "service.yaml").write_text(SERVICE, encoding="utf-8")
    port = free_port()
    cmd = [sys.executable, "-m", "trilha.cli.main", "serve", "--config"]
    cmd += [str(tmp_path / "service.yaml"), "--port", str(port), "--workers", "2"]
    env = {**os.environ, **shared_env}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, proc)
        assert len(_children(proc.pid)) >= 2  # the workers (uvicorn may add a helper process)
        assert _top_docs(base, "incident SOC") == {"docs"}
        assert _top_docs(base, "zirconium corrosion") != {"more"}
        # a writer beside the running service: the workspace is not locked by its readers
        assert main(["ingest", "-q", "-w", str(ws), str(tmp_path / "more")]) == 0
        assert _top_docs(base, "zirconium corrosion") == {"more"}
        r = httpx.post(f"{base}/graphrag/subgraph", json={"doc_id": "more"}, headers=KEY)
        assert r.status_code == 200 and "more" in r.text, r.text  # the graph is shared too
        for turn in range(6):  # both workers record turns and jobs in one memory.sqlite
            body = {"conversation_id": "c1", "raw_query": f"zirconium alloys {turn}"}
            r = httpx.post(f"{base}/v1/context", json=body, headers=KEY, timeout=60)
            assert r.status_code == 200, r.text
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "serving main on" in out and "in 2 processes" in out


def test_workers_refuse_indices_that_one_process_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(DOC, encoding="utf-8")
    ws = str(tmp_path / "ws")
    assert main(["ingest", "-q", "-w", ws, str(tmp_path / "docs")]) == 0
    capsys.readouterr()
    assert main(["serve", "-w", ws, "--workers", "2"]) == 2
    assert "set TRILHA_QDRANT_URL" in capsys.readouterr().err
    assert main(["serve", "-w", ws, "--workers", "0"]) == 2
    assert "give 1–64 service processes" in capsys.readouterr().err


def test_two_projects_may_not_share_a_qdrant_collection(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    with QdrantTestServer() as qdrant:
        same = TrilhaSettings(qdrant_url=qdrant.url, graph_backend="none", qdrant_collection="c")
        for name in ("a", "b"):
            Workspace.open(tmp_path / name, same, embedder=embedder, create=True).close()
        projects = {n: ProjectEntry(workspace=tmp_path / n, tenant="t") for n in ("a", "b")}
        config = ServiceConfig(projects=projects, keys=[], anonymous=True)
        with pytest.raises(ConfigurationError, match="would share Qdrant collection 'c'"):
            Projects.open(config, same)
