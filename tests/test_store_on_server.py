"""A workspace whose every index is a server: the unit store, memory and job log on PostgreSQL
(``TRILHA_STORE_URL``, a real server), the dense index on Qdrant (the stand-in of
:mod:`trilha.testing.qdrant_server`, the one allowed), the graph off. Processes in folders of
their own share the corpus; the folders keep no part of it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import make_docs
from tests.memory.jobs_helpers import job
from tests.test_shared_workspace import NEW, assert_follows
from trilha.cli.main import main
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import WorkspaceError
from trilha.memory import JobLog, MemoryStore, memory_at
from trilha.settings import TrilhaSettings
from trilha.testing.qdrant_server import QdrantTestServer
from trilha.workspace import Workspace

#: What a workspace folder holds of its corpus when the corpus is in files.
CORPUS_FILES = {"units.sqlite", "memory.sqlite", "qdrant.json", "workspace.json"}


@pytest.fixture()
def servers(store_url: str) -> Iterator[TrilhaSettings]:
    with QdrantTestServer() as qdrant:
        yield TrilhaSettings(store_url=store_url, qdrant_url=qdrant.url, graph_backend="none")


def _docs(ws: Workspace, query: str) -> list[str]:
    return [h.unit.doc_id for h in ws.search(query, top_k=5).hits]


def test_a_workspace_on_servers_ranks_as_one_in_files_and_its_folder_holds_none_of_it(
    tmp_path: Path, servers: TrilhaSettings, embedder: SentenceTransformerEmbedder
) -> None:
    files = TrilhaSettings(graph_backend="none")
    queries = ("security incident", "zirconium corrosion", "política de senhas")
    with (
        Workspace.open(tmp_path / "files", files, embedder=embedder, create=True) as local,
        Workspace.open(tmp_path / "servers", servers, embedder=embedder, create=True) as ws,
    ):
        for each in (local, ws):
            each.ingest([*make_docs(), NEW])
            each.delete("runbook")
        assert ws.store.on_server and len(ws) == len(local) > 0
        for query in queries:
            mine = [(h.unit.unit_id, round(h.score, 4)) for h in ws.search(query, top_k=5).hits]
            theirs = [(h.unit.unit_id, round(h.score, 4)) for h in local.search(query).hits[:5]]
            assert mine == theirs
        assert ws.check().consistent
    assert not CORPUS_FILES & {p.name for p in (tmp_path / "servers").iterdir()}
    with Workspace.open(tmp_path / "elsewhere", servers, embedder=embedder) as again:
        assert len(again) == len(local) and _docs(again, "zirconium corrosion")[0] == "zr"


def test_readers_in_their_own_folders_follow_the_one_writer(
    tmp_path: Path, servers: TrilhaSettings, embedder: SentenceTransformerEmbedder
) -> None:
    reading = servers.model_copy(update={"read_only": True})
    with pytest.raises(WorkspaceError, match="holds no workspace yet: open it read-write once"):
        Workspace.open(tmp_path / "early", reading, embedder=embedder)
    with Workspace.open(tmp_path / "writer", servers, embedder=embedder, create=True) as writer:
        writer.ingest(make_docs())
        with pytest.raises(WorkspaceError, match="written by another trilha process; open this"):
            Workspace.open(tmp_path / "second", servers, embedder=embedder, create=True)
        with Workspace.open(tmp_path / "reader", reading) as reader:  # encoder from the store
            assert reader.read_only and reader.embedder.model_id == writer.embedder.model_id
            assert_follows(writer, reader)
            with pytest.raises(WorkspaceError, match="open read-only"):
                reader.ingest([NEW])


def test_memory_and_jobs_of_every_process_are_in_the_store(
    store_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    at = memory_at(tmp_path / "a", store_url)
    assert at == store_url and memory_at(tmp_path / "a", None) == tmp_path / "a" / "memory.sqlite"
    first, second = MemoryStore(at), MemoryStore(memory_at(tmp_path / "b", store_url))
    jobs = JobLog(at)
    try:
        first.record_turn("ana", "c1", "user", "first process")
        second.record_turn("ana", "c1", "user", "second process")
        assert {t.text for t in first.turns("ana")} == {"first process", "second process"}
        jobs.record(job(0, "ana"))
        jobs.record(job(1, "bia"))
    finally:
        for store in (first, second, jobs):
            store.close()
    monkeypatch.setenv("TRILHA_STORE_URL", store_url)
    assert main(["jobs", "stats", "--json", "-w", str(tmp_path / "elsewhere")]) == 0
    assert json.loads(capsys.readouterr().out)["jobs"] == 2
