"""The workspace on real parts: embedded Qdrant, bm25s, the packaged MiniLM."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.conftest import READER, make_docs
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BadRequestError, ConfigurationError
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace


def _doc_ids(result: object) -> list[str]:
    return [h.unit.doc_id for h in result.hits]  # type: ignore[attr-defined]


def test_hybrid_finds_the_right_documents(small_ws: Workspace) -> None:
    assert _doc_ids(small_ws.search("security incident deadline", top_k=3))[0] == "runbook"
    assert _doc_ids(small_ws.search("prazo para cobrar dívida", top_k=3))[0] == "decisao"


def test_every_stage_score_is_kept(small_ws: Workspace) -> None:
    hits = small_ws.search("VPN laptop for new employees", top_k=8).hits
    top = hits[0].scores
    assert top.fused_rank == 1 and top.bm25_rank is not None and top.semantic_rank is not None
    assert [h.scores.fused_rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(h.scores.fused >= hits[i + 1].scores.fused for i, h in enumerate(hits[:-1]))


def test_rrf_mode(small_ws: Workspace) -> None:
    result = small_ws.search("VPN", top_k=3, merge="rrf")
    assert result.trace.merge == "rrf"
    assert result.hits[0].scores.fused <= 2 / 61


def test_reingest_unchanged_is_a_no_op(small_ws: Workspace) -> None:
    before = small_ws.store.generation
    report = small_ws.ingest(make_docs())
    assert (report.docs_unchanged, report.units_written) == (8, 0)
    assert small_ws.store.generation == before


def test_update_replaces_units_everywhere(small_ws: Workspace) -> None:
    doc = SourceDocument(
        doc_id="runbook",
        text="Incidents go to the helpdesk queue.",
        meta={"lang": "en", "tags": ["ti"], "date": "2023-01-10"},
    )
    report = small_ws.ingest([doc])
    assert report.docs_updated == 1
    assert "one hour" not in " ".join(h.unit.text for h in small_ws.search("SOC hour").hits)
    assert small_ws.dense.count() == len(small_ws)


def test_delete_removes_from_every_index(small_ws: Workspace) -> None:
    assert small_ws.delete("runbook") == 1
    for sides in (("bm25",), ("semantic",), ("bm25", "semantic")):
        ids = _doc_ids(small_ws.search("security incident SOC", top_k=10, sides=sides))
        assert "runbook" not in ids
    assert small_ws.dense.count() == len(small_ws) == 7


def test_reopen_does_not_reencode(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    with Workspace.open(tmp_path / "w", TrilhaSettings(), embedder=embedder, create=True) as ws:
        ws.ingest(make_docs())
        expected = _doc_ids(ws.search("VPN", top_k=4))

    class NoEncode(SentenceTransformerEmbedder):
        def encode_documents(self, texts, show_progress=False):  # type: ignore[no-untyped-def]
            raise AssertionError("re-encoded on reopen")

    again = NoEncode()  # a new encoder of the same model (its export is the shared one)
    with Workspace.open(tmp_path / "w", TrilhaSettings(), embedder=again, create=True) as ws:
        assert len(ws) == 8
        assert ws.ingest(make_docs()).docs_unchanged == 8
        assert _doc_ids(ws.search("VPN", top_k=4)) == expected


def test_lost_dense_folder_is_repaired(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    import shutil

    with Workspace.open(tmp_path / "w", TrilhaSettings(), embedder=embedder, create=True) as ws:
        ws.ingest(make_docs())
    shutil.rmtree(tmp_path / "w" / "qdrant-edge")
    with Workspace.open(tmp_path / "w", TrilhaSettings(), embedder=embedder, create=True) as ws:
        assert ws.dense.count() == 8
        assert _doc_ids(ws.search("security incident", top_k=1, sides=("semantic",))) == ["runbook"]


@pytest.mark.parametrize(
    ("filters", "allowed"),
    [
        ({"lang": "pt"}, {"pol-remote", "pol-travel", "decisao", "lgpd"}),
        ({"tags": ["ti"]}, {"runbook", "vendor", "lgpd"}),
        ({"tags": ["rh", "juridico"]}, {"pol-remote", "onboarding", "decisao", "lgpd"}),
        (
            {"data_inicio": "2021-01-01", "data_fim": "20231231"},
            {"pol-remote", "pol-travel", "runbook"},
        ),
        ({"lang": "en", "tags": ["ti"], "data_inicio": "2024-01-01"}, {"vendor"}),
    ],
)
def test_filters_never_leak_and_fill_k(
    small_ws: Workspace, filters: dict[str, object], allowed: set[str]
) -> None:
    for sides in (("bm25",), ("semantic",), ("bm25", "semantic")):
        for query in ("security incident VPN prazo", "zzzz unrelated words"):
            got = _doc_ids(small_ws.search(query, top_k=len(allowed), filters=filters, sides=sides))
            assert set(got) <= allowed
            if sides != ("bm25",):  # the dense side always has every matching unit
                assert set(got) == allowed


def test_llamaindex_metadata_filters_work_in_search(small_ws: Workspace) -> None:
    from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters

    mf = MetadataFilters(
        filters=[MetadataFilter(key="date", value="2024-01-01", operator=FilterOperator.GTE)]
    )
    assert set(_doc_ids(small_ws.search("data", top_k=5, filters=mf))) == {"vendor", "lgpd"}


def test_fallback_to_dense_is_recorded(small_ws: Workspace) -> None:
    result = small_ws.search("xyzzy qwertz", top_k=3)
    assert result.trace.fallback == "dense_only"
    assert result.trace.bm25_hits == 0 and len(result.hits) == 3
    assert any("one side returned nothing" in w for w in result.trace.warnings)


def test_async_path_matches_sync(small_ws: Workspace) -> None:
    result = asyncio.run(small_ws.asearch("VPN access", top_k=5))
    sync = small_ws.search("VPN access", top_k=5)
    assert _doc_ids(result) == _doc_ids(sync) and sync.trace.cache_hit  # the async path kept it
    assert {s.name for s in result.trace.stages} >= {"cache", "bm25", "encode", "dense", "merge"}
    again = asyncio.run(small_ws.asearch("VPN access", top_k=5))
    assert again.trace.cache_hit and _doc_ids(again) == _doc_ids(sync)


@pytest.mark.parametrize(
    "kwargs", [{"top_k": 0}, {"top_k": -3}, {"merge": "sum"}, {"filters": {"lang": ["en", 3]}}]
)
def test_bad_search_arguments(small_ws: Workspace, kwargs: dict[str, object]) -> None:
    with pytest.raises(BadRequestError):
        small_ws.search("x", **kwargs)  # type: ignore[arg-type]


def test_empty_query_is_a_clear_error(small_ws: Workspace) -> None:
    with pytest.raises(BadRequestError, match="empty"):
        small_ws.search("   ")


def test_empty_workspace_returns_nothing(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    with Workspace.open(tmp_path / "e", TrilhaSettings(), embedder=embedder, create=True) as ws:
        assert ws.search("anything").hits == []


def test_encoder_switch_is_refused(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    Workspace.open(tmp_path / "w", TrilhaSettings(), embedder=embedder, create=True).close()
    with pytest.raises(ConfigurationError, match="built with"):
        Workspace.open(
            tmp_path / "w",
            TrilhaSettings(embedding_model="other/model", embedding_dimension=768),
            create=True,
        )


def test_duplicate_penalty_spreads_documents(sample_ws: Workspace) -> None:
    plain = _doc_ids(sample_ws.search("trabalho remoto requisitos", top_k=5, principal=READER))
    sample_ws.settings.doc_penalty = 0.5
    try:
        spread = _doc_ids(sample_ws.search("trabalho remoto requisitos", top_k=5, principal=READER))
    finally:
        sample_ws.settings.doc_penalty = 0.0
    assert len(set(spread)) > len(set(plain))


def test_a_wrong_size_query_embedding_is_a_clear_error(small_ws: Workspace) -> None:
    import numpy as np

    with pytest.raises(BadRequestError, match=r"shape \(3,\).*\(384,\) vectors"):
        small_ws.search("vpn", vector=np.ones(3, dtype=np.float32))
    with pytest.raises(BadRequestError, match=r"shape \(2, 384\)"):
        small_ws.search("vpn", vector=np.ones((2, 384), dtype=np.float32))


def test_a_request_with_fields_overriding_it_searches_the_new_query(small_ws: Workspace) -> None:
    from trilha import SearchRequest

    base = SearchRequest(query="security incident", top_k=2)
    moved = small_ws.search(base, query="VPN laptop")
    direct = small_ws.search("VPN laptop", top_k=2)
    assert [h.unit.unit_id for h in moved.hits] == [h.unit.unit_id for h in direct.hits]
    assert SearchRequest.make(base) is base  # nothing to override: the request itself
