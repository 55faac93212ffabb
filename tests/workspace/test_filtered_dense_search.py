"""A filter that keeps few units is scored exactly on the dense side, whatever the dense index's
planner estimates: the search counts the units on its lexical snapshot and says so in its trace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import SAMPLES, make_docs
from trilha.access.principal import Principal
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.index.filter_input import coerce_filters
from trilha.index.filters import combine
from trilha.index.row_vectors import CODES, SCALES
from trilha.ingest.loaders import load_path
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

QUERY = "VPN access for remote work"


def test_a_selective_filter_is_scored_exactly_and_the_trace_says_so(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    # a graph over every point, too sparse to be trusted under a filter
    settings = TrilhaSettings(
        dense_hnsw_threshold=10,
        dense_hnsw_m=4,
        dense_hnsw_ef_construct=8,
        dense_hnsw_ef=10,
        graph_backend="none",
    )
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        ws.ingest(load_path(SAMPLES))
        ws.dense.settle()  # type: ignore[attr-defined]
        assert ws.dense.hnsw_state()["indexed"] == len(ws)  # type: ignore[attr-defined]
        assert ws.dense.exact_below == 10

        result = ws.search(QUERY, sides=("semantic",), filters={"lang": "en"}, top_k=5)
        (dense,) = [s for s in result.trace.stages if s.name == "dense"]
        assert dense.note is not None and "units: scored exactly" in dense.note
        assert dense.note.endswith("from the snapshot's vectors")  # not Qdrant's exact search
        kept = int(dense.note.split()[3])
        assert 0 < kept < 10  # the public English units an anonymous caller sees
        assert not result.trace.warnings  # what the stage did, not a degraded search

        # the same units as an exact search of the public English points
        policy = ws.searcher.policies.get(Principal.anonymous())
        expr = combine(policy.expr, coerce_filters({"lang": ["en", "en-US", "en-GB"]}))
        vector = embedder.encode_queries([QUERY])[0]
        exact = ws.dense.search(vector, 5, expr, exact=True)
        assert [h.unit.unit_id for h in result.hits] == [u for u, _ in exact]
        cosines = [h.scores.semantic for h in result.hits]
        assert cosines == pytest.approx([c for _, c in exact], abs=1e-6)  # the index's floats

        # every public unit (19 of them): as many as the threshold or more, the graph is searched
        broad = ws.search(QUERY, sides=("semantic",), top_k=5)
        assert [s.note for s in broad.trace.stages if s.name == "dense"] == [None]


SELECTIVE = [{"lang": "en"}, {"lang": "pt", "tags": ["rh"]}, {"tags": ["seguranca"]}]


def _scanned_as_exact(ws: Workspace, embedder: SentenceTransformerEmbedder) -> int:
    """How many of :data:`SELECTIVE`'s searches were scored from the snapshot's vectors,
    each asserted to return the units and cosines of the dense index's exact search."""
    policy = ws.searcher.policies.get(Principal.anonymous())
    vector = embedder.encode_queries([QUERY])[0]
    scanned = 0
    for filters in SELECTIVE:
        result = ws.search(QUERY, sides=("semantic",), filters=filters, top_k=5)
        (dense,) = [s for s in result.trace.stages if s.name == "dense"]
        if dense.note is None or not dense.note.endswith("from the snapshot's vectors"):
            continue
        scanned += 1
        widened = dict(filters)
        if "lang" in widened:
            widened["lang"] = [widened["lang"], f"{widened['lang']}-BR", f"{widened['lang']}-US"]
        exact = ws.dense.search(vector, 5, combine(policy.expr, coerce_filters(widened)), True)
        assert [h.unit.unit_id for h in result.hits] == [u for u, _ in exact], filters
        cosines = [h.scores.semantic for h in result.hits]
        assert cosines == pytest.approx([c for _, c in exact], abs=1e-6)
    return scanned


#: Selective filters are scored exactly in a workspace of the samples.
SCANNED = TrilhaSettings(dense_hnsw_threshold=10, graph_backend="none")


def _samples(path: Path, embedder: SentenceTransformerEmbedder) -> Workspace:
    """A new workspace at ``path`` holding the samples."""
    ws = Workspace.open(path, SCANNED, embedder=embedder, create=True)
    ws.ingest(load_path(SAMPLES))
    return ws


def _base(path: Path) -> Path:
    """The folder of the workspace's saved lexical base."""
    return path / "lexical" / json.loads((path / "lexical" / "state.json").read_text())["folder"]


def test_the_snapshots_vectors_follow_ingests_deletes_saves_and_an_older_base(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    path = tmp_path / "ws"
    with _samples(path, embedder) as ws:
        assert _scanned_as_exact(ws, embedder) >= 2
        ws.ingest(make_docs())  # rows added to the snapshot, their vectors read from Qdrant
        ws.delete("runbook")  # a dead row
        lexical = ws.searcher.lexical
        assert lexical.vectors is not None and len(lexical.vectors) == len(lexical.rows)
        assert _scanned_as_exact(ws, embedder) >= 2
    base = _base(path)
    assert (base / CODES).exists() and (base / SCALES).exists()  # saved with the base
    for name in (CODES, SCALES):  # a base saved by an older trilha: read once from Qdrant
        (base / name).unlink()
    with Workspace.open(path, SCANNED, embedder=embedder) as ws:
        assert _scanned_as_exact(ws, embedder) >= 2
    assert (base / CODES).exists()  # and added to the base
    with Workspace.open(path, SCANNED, embedder=embedder) as ws:
        assert _scanned_as_exact(ws, embedder) >= 2


def test_without_an_hnsw_threshold_the_snapshot_keeps_no_vectors(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    settings = TrilhaSettings(dense_hnsw_threshold=0, graph_backend="none")
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        ws.ingest(make_docs())
        assert ws.searcher.lexical.vectors is None
        assert _scanned_as_exact(ws, embedder) == 0


def test_a_repaired_dense_index_gives_the_snapshot_its_vectors_again(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    path = tmp_path / "ws"
    _samples(path, embedder).close()
    base = _base(path)
    for name in (CODES, SCALES):
        (base / name).unlink()
    shutil.rmtree(path / "qdrant-edge")  # the column is read from a dense index that lost all
    with Workspace.open(path, SCANNED, embedder=embedder) as ws:  # repaired as it opens
        assert ws.dense.count() == len(ws)
        assert _scanned_as_exact(ws, embedder) >= 2
    assert not (base / CODES).exists()  # the incomplete column was not saved
