"""A filter that keeps few units is scored exactly on the dense side, whatever the dense index's
planner estimates: the search counts the units on its lexical snapshot and says so in its trace."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import SAMPLES
from trilha.access.principal import Principal
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.index.filter_input import coerce_filters
from trilha.index.filters import combine
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
        assert dense.note is not None and dense.note.endswith("units: scored exactly")
        kept = int(dense.note.split()[3])
        assert 0 < kept < 10  # the public English units an anonymous caller sees
        assert not result.trace.warnings  # what the stage did, not a degraded search

        # the same units as an exact search of the public English points
        policy = ws.searcher.policies.get(Principal.anonymous())
        expr = combine(policy.expr, coerce_filters({"lang": ["en", "en-US", "en-GB"]}))
        vector = embedder.encode_queries([QUERY])[0]
        exact = ws.dense.search(vector, 5, expr, exact=True)
        assert [h.unit.unit_id for h in result.hits] == [u for u, _ in exact]

        # every public unit (19 of them): as many as the threshold or more, the graph is searched
        broad = ws.search(QUERY, sides=("semantic",), top_k=5)
        assert [s.note for s in broad.trace.stages if s.name == "dense"] == [None]
