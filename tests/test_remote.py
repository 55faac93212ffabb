"""Remote encoder and reranker over text-embeddings-inference's protocol, against a local
server; and what a search does when either is down."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import make_docs
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BackendUnavailableError, ConfigurationError
from trilha.remote import TEIClient, TEIEmbedder, TEIReranker
from trilha.settings import TrilhaSettings
from trilha.testing.tei_server import TEITestServer
from trilha.workspace import Workspace
from trilha.workspace.compose import configured_reranker, make_embedder


def _served(embedder: SentenceTransformerEmbedder) -> TEITestServer:
    """A TEI server whose /embed is the packaged MiniLM (so results mean something), loaded
    first (a first load inside a request can outlast the client's timeout, then it retries)."""
    embedder.encode_documents(["load the model"])
    return TEITestServer(embed=lambda texts: embedder.encode_documents(texts).tolist(),
                         model_id="sentence-transformers/all-MiniLM-L6-v2")  # fmt: skip


def test_embed_batches_and_matches_the_local_model(embedder: SentenceTransformerEmbedder) -> None:
    with _served(embedder) as tei:
        remote = TEIEmbedder(TEIClient(tei.url), None, 384, batch_size=2)
        texts = ["security incident", "prazo de recurso", "vpn", "ferias", "budget"]
        got = remote.encode_documents(texts)
        assert remote.model_id == "tei:sentence-transformers/all-MiniLM-L6-v2"
        embeds = [body for path, body in tei.requests if path == "/embed"]
    assert [len(b["inputs"]) for b in embeds] == [2, 2, 1]
    assert embeds[0]["normalize"] is True and embeds[0]["truncate"] is True
    assert np.allclose(got, embedder.encode_documents(texts), atol=1e-5)


def test_prompts_are_prepended() -> None:
    with TEITestServer() as tei:
        remote = TEIEmbedder(TEIClient(tei.url), "e5", 3, query_prompt="query: ",
                             passage_prompt="passage: ")  # fmt: skip
        remote.encode_queries(["a"])
        remote.encode_documents(["b"])
        assert [b["inputs"] for _, b in tei.requests] == [["query: a"], ["passage: b"]]
    assert remote.model_id == "tei:e5"


def test_retries_then_one_clear_line() -> None:
    with TEITestServer() as tei:
        client = TEIClient(tei.url, timeout_s=2.0, retries=2)
        tei.fail_next = 2
        assert TEIEmbedder(client, "m", 3).encode_queries(["x"]).shape == (1, 3)
        assert len(tei.requests) == 3
        tei.fail_next = 5
        with pytest.raises(
            BackendUnavailableError, match=r"did not answer after 3 tries \(HTTP 503\)"
        ):
            TEIEmbedder(client, "m", 3).encode_queries(["x"])


def test_timeouts_and_refusals() -> None:
    with TEITestServer() as tei:
        tei.delay_s = 0.5
        slow = TEIClient(tei.url, timeout_s=0.1, retries=0)
        with pytest.raises(BackendUnavailableError, match="ReadTimeout"):
            slow.post("/embed", {"inputs": ["x"]})
        tei.delay_s = 0.0
        with pytest.raises(BackendUnavailableError, match="HTTP 404"):
            TEIClient(tei.url).post("/nowhere", {})
    with pytest.raises(ConfigurationError, match="not an http"):
        TEIClient("localhost:8080")


def test_wrong_dimension_says_what_to_set() -> None:
    with TEITestServer() as tei, pytest.raises(ConfigurationError, match="DIMENSION=3"):
        TEIEmbedder(TEIClient(tei.url), "m", 384).encode_queries(["x"])


def test_rerank_orders_hits_by_the_servers_scores(sample_ws: Workspace) -> None:
    hits = sample_ws.search("security incident report", top_k=6).hits
    with TEITestServer() as tei:
        reranker = TEIReranker(TEIClient(tei.url), top_n=3, batch_size=4)
        reranked = reranker.rerank("security incident report", hits)
        bodies = [b for p, b in tei.requests if p == "/rerank"]
    assert [len(b["texts"]) for b in bodies] == [4, 2]
    assert len(reranked) == 3 and [h.scores.rerank_rank for h in reranked] == [1, 2, 3]
    scores = [h.scores.rerank for h in reranked]
    assert scores == sorted(scores, reverse=True)


def test_settings_choose_the_remote_backends(tmp_path: Path) -> None:
    with TEITestServer(model_id="BAAI/bge-small") as tei:
        settings = TrilhaSettings(embedding_url=tei.url, reranker_url=tei.url,
                                  embedding_dimension=3)  # fmt: skip
        embedder = make_embedder(settings, tmp_path)
        assert isinstance(embedder, TEIEmbedder) and embedder.model_id == "tei:BAAI/bge-small"
        assert isinstance(configured_reranker(settings, tmp_path), TEIReranker)


def test_a_workspace_on_a_remote_encoder_and_its_degradation(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    with _served(embedder) as tei:
        settings = TrilhaSettings(embedding_url=tei.url, reranker_url=tei.url,
                                  remote_retries=0)  # fmt: skip
        with Workspace.open(tmp_path / "ws", settings, create=True) as ws:
            ws.ingest(make_docs())
            good = ws.search("security incident", top_k=3, rerank=True)
            assert good.hits and good.trace.ann_hits > 0 and good.trace.stage("rerank")
            tei.fail_next = 10
            down = ws.search("remote work policy", top_k=3, rerank=True)
    assert down.hits and down.trace.fallback == "bm25_only" and down.trace.ann_hits == 0
    assert any("did not answer" in w for w in down.trace.warnings)
    assert any("rerank unavailable" in w for w in down.trace.warnings)


def test_a_search_whose_reranker_is_down_keeps_the_fused_order(
    sample_ws: Workspace, caplog: pytest.LogCaptureFixture
) -> None:
    query = "laptop theft reported to the service desk"
    fused = sample_ws.search(query, top_k=4, candidates=12)
    with TEITestServer() as tei:
        tei.fail_next = 10
        sample_ws.use_reranker(TEIReranker(TEIClient(tei.url, retries=0), top_n=4))
        try:
            down = sample_ws.search(query, top_k=4, candidates=12, rerank=True)
        finally:
            sample_ws.use_reranker(None)
        assert [p for p, _ in tei.requests] == ["/rerank"]
    assert [h.unit.unit_id for h in down.hits] == [h.unit.unit_id for h in fused.hits]
    assert down.trace.stage("rerank") is None and all(h.scores.rerank is None for h in down.hits)
    warned = [w for w in down.trace.warnings if w.startswith("rerank unavailable (")]
    assert len(warned) == 1 and "HTTP 503" in warned[0]
    assert warned[0].endswith("; kept the fused order")
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == warned


def test_a_search_degraded_by_a_reranker_down_is_not_cached(sample_ws: Workspace) -> None:
    """The fused order a reranker that was down left is not kept: the same search asked again
    within the cache's TTL reranks once the server answers."""
    assert sample_ws.cache is not None
    query = "a degraded search is asked again once the reranker is back"
    with TEITestServer() as tei:
        sample_ws.use_reranker(TEIReranker(TEIClient(tei.url, retries=0), top_n=4))
        try:
            tei.fail_next = 1
            down = sample_ws.search(query, top_k=4, candidates=12, rerank=True)
            back = sample_ws.search(query, top_k=4, candidates=12, rerank=True)
            again = sample_ws.search(query, top_k=4, candidates=12, rerank=True)
        finally:
            sample_ws.use_reranker(None)
        assert [p for p, _ in tei.requests] == ["/rerank", "/rerank"]
    assert down.trace.stage("rerank") is None and any(
        "rerank unavailable" in w for w in down.trace.warnings
    )
    assert not back.trace.cache_hit and back.trace.stage("rerank") is not None
    assert all(h.scores.rerank is not None for h in back.hits)
    assert again.trace.cache_hit and [h.unit.unit_id for h in again.hits] == [
        h.unit.unit_id for h in back.hits
    ]
