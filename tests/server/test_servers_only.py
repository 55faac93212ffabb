"""Service processes that share nothing but servers (issue 35's last configuration).

Two ``trilha serve`` processes, each in an empty folder of its own, read one corpus while a
writer process, in a third folder, adds documents to it. They share only servers this test
starts on 127.0.0.1: PostgreSQL (the unit store, memory and job log, ``TRILHA_STORE_URL``; a real
server), Qdrant (the dense index; :mod:`trilha.testing.qdrant_server`'s stand-in, the one
allowed), FalkorDB (the graph) and Redis (the result cache).

What is checked: every reader finds each committed document within :data:`BOUND_S` of the
writer's commit, and no answer ever holds part of a document (all of its units or none).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import wait_until_serving
from trilha.errors import ConfigurationError
from trilha.graph.stores.falkordb_server import EmbeddedFalkorServer
from trilha.server import Projects, ServiceConfig
from trilha.server.config import ProjectEntry
from trilha.settings import TrilhaSettings
from trilha.testing.loopback import free_port
from trilha.testing.qdrant_server import QdrantTestServer

#: How long after the writer's commit every reader must find the document.
BOUND_S = 2.0
#: Documents the writer adds while the readers are asked.
DOCUMENTS = 6
#: All a reader's folder may hold: the log of the graph reads it made.
LOCAL_FILES = {"graph", "retrieval-log.jsonl"}
KEY = {"X-API-Key": "key-of-the-reader-0001"}
SERVICE = """
projects:
  main: {{workspace: {folder}, tenant: acme}}
keys:
  - {{key: key-of-the-reader-0001, tenant: acme, principal: {{user_id: reader}}}}
"""

#: The writer: a first document (so that the store records its encoder and collection), then
#: "ready"; then, one line in at a time, document N of several units, each unit carrying the
#: word markN (so a search for it finds every unit of N a reader holds); it answers with the
#: time its ingest returned and how many units it wrote.
WRITER = """
import sys, time
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

def paragraph(n, i):  # the mark in every sentence: in every unit, wherever chunks are cut
    words = " ".join(f"mark{n} reactor{j % 37} cladding{j % 11}." for j in range(45))
    return f"Section {i} of document mark{n}. {words}"

with Workspace.open(sys.argv[1], TrilhaSettings(), create=True) as ws:
    ws.ingest([SourceDocument(doc_id="first", text="Report incidents within one hour.",
                              meta={"lang": "en"})])
    print("ready", flush=True)
    for line in sys.stdin:
        n = int(line)
        text = "\\n\\n".join(paragraph(n, i) for i in range(4))
        ws.ingest([SourceDocument(doc_id=f"doc{n}", text=text, meta={"lang": "en"})])
        print(time.time(), len(ws.store.unit_ids_of(f"doc{n}")), flush=True)
"""


@pytest.fixture()
def servers(store_url: str, redis_url: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of every process: each index on a server."""
    graph = EmbeddedFalkorServer(tmp_path / "graph-server")
    with QdrantTestServer() as qdrant:
        yield {
            **os.environ,
            "TRILHA_STORE_URL": store_url,
            "TRILHA_QDRANT_URL": qdrant.url,
            "TRILHA_GRAPH_URL": f"unix://{graph.start()}",
            "TRILHA_REDIS_URL": redis_url,
        }
    graph.stop()


def _serve(tmp_path: Path, name: str, env: dict[str, str]) -> tuple[str, subprocess.Popen[str]]:
    """A read-only ``trilha serve`` over an empty folder of its own."""
    folder = tmp_path / name
    folder.mkdir()
    config = tmp_path / f"{name}.yaml"
    config.write_text(SERVICE.format(folder=folder), encoding="utf-8")
    port = free_port()
    cmd = [sys.executable, "-m", "trilha.cli.main", "serve", "--config", str(config)]
    cmd += ["--port", str(port)]
    proc = subprocess.Popen(cmd, env={**env, "TRILHA_READ_ONLY": "1"}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    return f"http://127.0.0.1:{port}", proc


def _units_of(base: str, n: int) -> int:
    """How many units of document ``n`` one reader returns for its mark."""
    body = {"query": f"mark{n}", "top_k": 50, "include_kg": False}
    r = httpx.post(f"{base}/v1/retrieve", json=body, headers=KEY, timeout=30)
    assert r.status_code == 200, r.text
    return sum(h["unit"]["doc_id"] == f"doc{n}" for h in r.json()["hits"])


def test_readers_on_servers_only_see_whole_documents_soon_after_the_writer_commits(
    tmp_path: Path, servers: dict[str, str]
) -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path / "writer")],
        env=servers, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert writer.stdin is not None and writer.stdout is not None
    readers: list[tuple[str, subprocess.Popen[str]]] = []
    try:
        assert writer.stdout.readline().strip() == "ready"
        readers = [_serve(tmp_path, name, servers) for name in ("a", "b")]
        for base, proc in readers:
            wait_until_serving(base, proc)
        lags: list[float] = []
        for n in range(DOCUMENTS):
            writer.stdin.write(f"{n}\n")
            writer.stdin.flush()
            seen: dict[str, float] = {}
            counts: set[int] = set()
            committed = None
            while len(seen) < len(readers):
                for base, _ in readers:
                    counts.add(found := _units_of(base, n))
                    if found and base not in seen:
                        seen[base] = time.time()
                if committed is None:  # the writer answers once its ingest returned
                    line = writer.stdout.readline().split()
                    committed, units = float(line[0]), int(line[1])
                assert time.time() - committed < BOUND_S + 30, "a reader never saw it"
            assert units > 1  # a document of several units, or "half" means nothing
            assert counts <= {0, units}, f"doc{n} has {units} units; readers saw {counts}"
            lags += [max(0.0, t - committed) for t in seen.values()]
        assert max(lags) <= BOUND_S, lags  # measured: 0.06-0.19 s
        for name in ("a", "b"):  # a folder keeps its process's own graph log, no corpus
            assert {p.name for p in (tmp_path / name).rglob("*")} <= LOCAL_FILES
    finally:
        writer.stdin.close()
        writer.wait(timeout=60)
        for _, proc in readers:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=60)
    assert writer.returncode == 0


def test_a_service_file_of_several_projects_cannot_share_one_store(tmp_path: Path) -> None:
    projects = {n: ProjectEntry(workspace=tmp_path / n, tenant="t") for n in ("a", "b")}
    config = ServiceConfig(projects=projects, keys=[], anonymous=True)
    settings = TrilhaSettings(store_url="postgresql://trilha@127.0.0.1:1/corpus")
    with pytest.raises(ConfigurationError, match="service file has 2 projects: serve each"):
        Projects.open(config, settings)
    assert not any((tmp_path / n).exists() for n in ("a", "b"))  # refused before opening any
