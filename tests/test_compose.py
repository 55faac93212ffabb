"""The composition root and the workspace's public reads (what callers used to reach into)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import ConfigurationError
from trilha.index.filter_input import coerce_filters
from trilha.retrieve.pipeline import UnavailableBooster
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace
from trilha.workspace.compose import compose

NO_GRAPH = TrilhaSettings(graph_backend="none")


def test_compose_builds_every_part_over_one_store(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    parts = compose(tmp_path, NO_GRAPH, embedder=embedder)
    try:
        assert parts.embedder is embedder and parts.searcher.embedder is embedder
        assert parts.searcher.dense is parts.dense
        assert (parts.graph, parts.graph_warning, parts.booster) == (None, None, None)
        assert len(parts.searcher.lexical) == parts.store.count() == 0
        with pytest.raises(ConfigurationError, match="TRILHA_GRAPH_BACKEND"):
            parts.require_graph()
        with pytest.raises(ConfigurationError, match="TRILHA_RERANKER_MODEL"):
            parts.reranker.get()
    finally:
        parts.close()


def test_an_unreachable_graph_becomes_a_warning_and_a_warning_booster(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    settings = TrilhaSettings(graph_backend="bolt", graph_url=None)  # cannot be opened
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        assert ws.graph is None and ws.graph_warning is not None
        assert ws.graph_warning.startswith("graph unavailable (ConfigurationError")
        assert isinstance(ws.booster, UnavailableBooster)
        with pytest.raises(ConfigurationError, match="graph unavailable"):
            ws.require_graph()


def test_a_part_that_fails_to_open_releases_the_workspace(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    no_server = TrilhaSettings(graph_backend="none", qdrant_mode="server")
    with pytest.raises(ConfigurationError, match="TRILHA_QDRANT_URL"):
        Workspace.open(tmp_path / "ws", no_server, embedder=embedder, create=True)
    with Workspace.open(
        tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True
    ) as ws:  # not locked
        assert len(ws) == 0


def test_the_reads_callers_need(small_ws: Workspace) -> None:
    units = small_ws.all_units()
    assert len(units) == len(small_ws) == 8
    assert small_ws.has_doc("runbook") and not small_ws.has_doc("nope")
    assert [u.unit_id for u in small_ws.doc_units("runbook")] == ["runbook#0"]
    assert small_ws.doc_units("nope") == []
    vectors = small_ws.vectors(["runbook#0", "nope#0"])
    assert list(vectors) == ["runbook#0"] and vectors["runbook#0"].shape == (384,)
    assert small_ws.count_matching(None) == 8
    assert small_ws.count_matching(coerce_filters({"lang": "pt"})) == 4


def test_a_reranker_given_later_is_used_and_can_be_dropped(
    small_ws: Workspace, tiny_cross_encoder: Path
) -> None:
    from trilha.rerank.cross_encoder import CrossEncoderReranker

    with pytest.raises(ConfigurationError, match="TRILHA_RERANKER_MODEL"):
        small_ws.search("vpn", rerank=True)
    reranker = CrossEncoderReranker(str(tiny_cross_encoder), top_n=2)
    small_ws.use_reranker(reranker)
    assert small_ws.reranker is reranker
    result = small_ws.search("vpn laptop", rerank=True, top_k=2)
    assert [h.scores.rerank_rank for h in result.hits] == [1, 2]
    small_ws.use_reranker(None)
    with pytest.raises(ConfigurationError, match="TRILHA_RERANKER_MODEL"):
        small_ws.search("vpn", rerank=True)
