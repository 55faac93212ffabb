"""One corpus shared by processes: a Qdrant server behind the dense index, one writer, readers.

The Qdrant server is :mod:`trilha.testing.qdrant_server` (qdrant-client's REST client talking to
a stand-in that answers Qdrant's routes; no Qdrant server can be installed here).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import make_docs
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BackendUnavailableError, ConfigurationError, WorkspaceError
from trilha.index import lexical_store
from trilha.index.lexical import LexicalIndex
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.testing.qdrant_server import QdrantTestServer
from trilha.types import TextUnit
from trilha.workspace import Workspace

NEW = SourceDocument(
    doc_id="zr", text="Zirconium alloys resist corrosion in reactor cladding.", meta={"lang": "en"}
)


@pytest.fixture()
def qdrant() -> Iterator[QdrantTestServer]:
    with QdrantTestServer() as server:
        yield server


@pytest.fixture()
def shared(qdrant: QdrantTestServer) -> TrilhaSettings:
    return TrilhaSettings(qdrant_url=qdrant.url, graph_backend="none")


@pytest.fixture()
def writer(
    tmp_path: Path, shared: TrilhaSettings, embedder: SentenceTransformerEmbedder
) -> Iterator[Workspace]:
    with Workspace.open(tmp_path / "ws", shared, embedder=embedder, create=True) as ws:
        ws.ingest(make_docs())
        yield ws


def _docs(ws: Workspace, query: str) -> list[str]:
    return [h.unit.doc_id for h in ws.search(query, top_k=5).hits]


def test_a_workspace_on_a_qdrant_server_ingests_searches_deletes_and_reopens(
    writer: Workspace, shared: TrilhaSettings, embedder: SentenceTransformerEmbedder
) -> None:
    units = len(writer)
    assert writer.dense.count() == units > 0
    hit = writer.search("security incident", top_k=3).hits[0]
    assert hit.scores.semantic is not None and hit.scores.semantic > 0
    filtered = writer.search("security incident", top_k=10, filters={"lang": "pt"}).hits
    assert filtered and {h.unit.lang for h in filtered} == {"pt"}
    gone = writer.delete(hit.unit.doc_id)
    assert writer.dense.count() == units - gone and writer.check().consistent
    path = writer.path
    writer.close()
    with Workspace.open(
        path, shared, embedder=embedder, create=True
    ) as again:  # the collection is kept
        assert again.dense.count() == units - gone and again.check().consistent


def test_a_reader_follows_the_writer_without_the_lock(
    writer: Workspace, shared: TrilhaSettings, embedder: SentenceTransformerEmbedder
) -> None:
    with Workspace.open(writer.path, shared, embedder=embedder, read_only=True) as reader:
        assert reader.read_only
        assert_follows(writer, reader)


def assert_follows(writer: Workspace, reader: Workspace) -> None:
    """``reader`` ranks as ``writer`` does, finds the document it adds and loses it again when
    it is deleted."""
    assert _docs(reader, "security incident") == _docs(writer, "security incident")
    assert "zr" not in _docs(reader, "zirconium corrosion")
    writer.ingest([NEW])
    assert _docs(reader, "zirconium corrosion")[0] == "zr"
    writer.delete("zr")
    assert "zr" not in _docs(reader, "zirconium corrosion")


def test_a_reader_refuses_every_write_in_one_line(
    writer: Workspace, shared: TrilhaSettings, embedder: SentenceTransformerEmbedder
) -> None:
    units = len(writer)
    with Workspace.open(writer.path, shared, embedder=embedder, read_only=True) as reader:
        for write in (
            lambda: reader.ingest([NEW]),
            lambda: reader.delete("runbook"),
            lambda: reader.repair(),
            lambda: reader.rebuild_graph(),
        ):
            with pytest.raises(WorkspaceError, match=r"open read-only .*trilha ingest PATH -w"):
                write()
    assert len(writer) == units  # nothing was written
    assert "zr" not in _docs(writer, "zirconium corrosion")


def test_read_only_needs_shared_indices_and_an_existing_workspace(
    tmp_path: Path, qdrant: QdrantTestServer, embedder: SentenceTransformerEmbedder
) -> None:
    with pytest.raises(ConfigurationError, match="must be a Qdrant server: set TRILHA_QDRANT_URL"):
        Workspace.open(tmp_path / "a", TrilhaSettings(graph_backend="none", read_only=True))
    embedded_graph = TrilhaSettings(qdrant_url=qdrant.url, read_only=True)
    with pytest.raises(ConfigurationError, match="graph must be a server: set TRILHA_GRAPH_URL"):
        Workspace.open(tmp_path / "a", embedded_graph, create=True)
    shared = TrilhaSettings(qdrant_url=qdrant.url, graph_backend="none", read_only=True)
    with pytest.raises(WorkspaceError, match="no trilha workspace at"):
        Workspace.open(tmp_path / "a", shared, embedder=embedder, create=True)
    assert not (tmp_path / "a").exists()


def test_a_reader_rebuilds_a_missing_snapshot_in_memory_and_writes_nothing(
    writer: Workspace, shared: TrilhaSettings, embedder: SentenceTransformerEmbedder
) -> None:
    lexical = writer.path / "lexical"
    (lexical / "state.json").unlink()
    before = sorted(p.name for p in lexical.iterdir())
    with Workspace.open(writer.path, shared, embedder=embedder, read_only=True) as reader:
        assert len(reader.searcher.lexical) == len(writer)
        assert _docs(reader, "security incident")
    assert sorted(p.name for p in lexical.iterdir()) == before


def test_a_qdrant_server_that_stops_answering_is_a_backend_error(
    writer: Workspace, qdrant: QdrantTestServer
) -> None:
    qdrant.down = True
    with pytest.raises(BackendUnavailableError, match=f"Qdrant at {qdrant.url} did not answer"):
        writer.search("security incident", sides=("semantic",))
    qdrant.down = False
    assert writer.search("security incident").hits


#: A reader process: opens the workspace read-only, answers each query line with the
#: documents of its BM25 hits and how many segments and dead rows its snapshot holds.
READER = """
import json, sys
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace
settings = TrilhaSettings(qdrant_url=sys.argv[2], graph_backend="none", read_only=True)
with Workspace.open(sys.argv[1], settings) as ws:
    print("ready", flush=True)
    for line in sys.stdin:
        hits = ws.search(line.strip(), top_k=5, sides=("bm25",)).hits
        lexical = ws.searcher.lexical
        print(json.dumps([[h.unit.doc_id for h in hits], lexical.segments, lexical.dead]),
              flush=True)
"""


def test_a_reader_process_sees_the_writers_added_and_deleted_documents(
    writer: Workspace, qdrant: QdrantTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process follows the writer by increments: the document added is found, the one
    deleted is gone, and the reader holds them as segments and dead rows (nothing reloaded
    whole) until it merges them on its own thread, with the writer's ranking throughout."""
    monkeypatch.setattr(lexical_store, "MERGE_FRACTION", 10.0)  # the writer keeps its segments
    cmd = [sys.executable, "-c", READER, str(writer.path), qdrant.url]
    reader = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert reader.stdin is not None and reader.stdout is not None

    def ask(query: str) -> tuple[list[str], int, int]:
        assert reader.stdin is not None and reader.stdout is not None
        reader.stdin.write(query + "\n")
        reader.stdin.flush()
        docs, segments, dead = json.loads(reader.stdout.readline())
        return docs, segments, dead

    try:
        assert reader.stdout.readline().strip() == "ready"
        assert "zr" not in ask("zirconium corrosion")[0]
        writer.ingest([NEW])
        docs, segments, dead = ask("zirconium corrosion")
        assert docs[0] == "zr" and segments == 2 and dead == 0
        wanted = [h.unit.doc_id for h in writer.search("security incident", top_k=5,
                                                       sides=("bm25",)).hits]  # fmt: skip
        assert ask("security incident")[0] == wanted
        writer.delete("zr")
        docs, segments, dead = ask("zirconium corrosion")
        assert "zr" not in docs and dead == 1
        writer.delete("runbook")  # past the reader's merge fraction: it merges on a thread
        docs = ask("security incident")[0]
        wanted = [h.unit.doc_id for h in writer.search("security incident", top_k=5,
                                                       sides=("bm25",)).hits]  # fmt: skip
        assert "runbook" not in docs and docs == wanted
        for _ in range(100):
            docs, segments, dead = ask("security incident")
            if (segments, dead) == (1, 0):
                break
            time.sleep(0.05)
        assert (segments, dead) == (1, 0) and docs == wanted  # merged, the same ranking
    finally:
        reader.stdin.close()
        assert reader.wait(timeout=60) == 0


def _index(n: int, generation: int) -> LexicalIndex:
    units = [TextUnit(unit_id=f"u{i}", doc_id="d", text=f"word{i} common") for i in range(n)]
    index = LexicalIndex.build(units, [[f"word{i}", "common"] for i in range(n)])
    index.generation = generation
    return index


def test_the_lexical_base_is_saved_whole_under_a_new_name(tmp_path: Path) -> None:
    lexical_store.write(_index(3, 1), tmp_path)
    lexical_store.write(_index(4, 2), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base-2", "state.json"]
    base = lexical_store.read(tmp_path)
    assert base is not None and base.generation == 2 and base.store_rows.tolist() == [0, 1, 2, 3]
    loaded = LexicalIndex(_index(4, 2).units, base.matrix)
    assert LexicalIndex.top(loaded.score_all("word3"), 1)[0][0] == 3


def test_a_snapshot_saved_by_an_older_trilha_is_rebuilt(tmp_path: Path) -> None:
    """bm25s's precomputed scores hold every unit's statistics: they are not read again."""
    lexical_store.write(_index(3, 5), tmp_path)
    (tmp_path / "base-5").rename(tmp_path / "bm25")
    (tmp_path / "state.json").write_text('{"generation": 5, "units": 3, "empty": false}')
    assert lexical_store.read(tmp_path) is None


def test_two_workspaces_on_one_server_keep_their_own_collections(
    tmp_path: Path, shared: TrilhaSettings, embedder: SentenceTransformerEmbedder
) -> None:
    with Workspace.open(tmp_path / "a", shared, embedder=embedder, create=True) as a:
        a.ingest(make_docs())
        with Workspace.open(tmp_path / "b", shared, embedder=embedder, create=True) as b:
            b.ingest([NEW])
            assert b.check().consistent and a.check().consistent  # neither repaired the other
            assert _docs(b, "security incident") == ["zr"]
            assert "zr" not in _docs(a, "zirconium corrosion")
            collections = {a.dense.collection, b.dense.collection}  # type: ignore[attr-defined]
    assert len(collections) == 2
    with Workspace.open(tmp_path / "a", shared, embedder=embedder, create=True) as again:
        assert again.dense.count() == len(again) > 0  # the recorded collection, reopened
    named = shared.model_copy(update={"qdrant_collection": "other"})
    named.model_fields_set.add("qdrant_collection")
    with pytest.raises(ConfigurationError, match="keeps its vectors in Qdrant collection"):
        Workspace.open(tmp_path / "a", named, embedder=embedder, create=True)


def test_on_a_qdrant_server_selective_filters_are_left_to_the_server(
    tmp_path: Path, qdrant: QdrantTestServer, embedder: SentenceTransformerEmbedder
) -> None:
    # a process would read every vector over the network as it opens to keep a copy of them
    settings = TrilhaSettings(qdrant_url=qdrant.url, graph_backend="none", dense_hnsw_threshold=8)
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as writer:
        writer.ingest(make_docs())
        with Workspace.open(writer.path, settings, embedder=embedder, read_only=True) as reader:

            def dense_en(ws: Workspace) -> tuple[list[str], str | None]:
                result = ws.search(
                    "zirconium corrosion", sides=("semantic",), filters={"lang": "en"}, top_k=3
                )
                (stage,) = [s for s in result.trace.stages if s.name == "dense"]
                return [h.unit.doc_id for h in result.hits], stage.note

            writer.ingest([NEW])
            docs, note = dense_en(reader)
            assert docs[0] == "zr" and docs == dense_en(writer)[0]
            assert note is not None and note.endswith("units: scored exactly")
            assert reader.searcher.lexical.vectors is None
            assert writer.searcher.lexical.vectors is None
