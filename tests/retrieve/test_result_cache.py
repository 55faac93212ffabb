"""Stage 1, the result cache: hits, invalidation, scopes, TTL, and a real Redis server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import make_docs
from trilha.access.principal import Principal
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.ingest.loaders import SourceDocument
from trilha.retrieve.cache import MemoryStore, RedisStore, ResultCache, normalise_query
from trilha.retrieve.pipeline import cache_key_of, retrieve
from trilha.retrieve.plan import SearchPlan
from trilha.settings import TrilhaSettings, uncached
from trilha.types import SearchResult
from trilha.workspace import Workspace

ANA = Principal(user_id="ana", org_ids=["acme"])
BIA = Principal(user_id="bia", org_ids=["beta"], project_ids=["atlas"], clearance=2)
PRINCIPALS = [Principal.anonymous(), ANA, BIA, Principal(user_id="caio", org_ids=["acme"])]
QUESTIONS = ["prazo para comunicar incidente", "security incident", "trabalho remoto VPN"]


def _scoped_docs() -> list[SourceDocument]:
    """The eight test documents, each readable by a different set of callers."""
    scopes = [
        {"visibility": "public"},
        {"visibility": "org", "org_id": "acme"},
        {"visibility": "private", "owner_id": "ana"},
        {"visibility": "project", "project_id": "atlas", "sensitivity": 2},
        {"visibility": "org", "org_id": "beta"},
        {"visibility": "private", "owner_id": "bia"},
        {"visibility": "public"},
        {"visibility": "org", "org_id": "acme", "sensitivity": 1},
    ]
    docs = make_docs()
    for doc, scope in zip(docs, scopes, strict=True):
        doc.meta.update(scope)
    return docs


@pytest.fixture()
def scoped_ws(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> Iterator[Workspace]:
    ws = Workspace.open(
        tmp_path / "ws", TrilhaSettings(graph_backend="none"), embedder=embedder, create=True
    )
    ws.ingest(_scoped_docs())
    yield ws
    ws.close()


def _ids(result: SearchResult) -> list[str]:
    return [h.unit.unit_id for h in result.hits]


def _key(ws: Workspace, planned: SearchPlan) -> str:
    return cache_key_of(planned, None, ws.collaborators(planned))


def _fresh(ws: Workspace, question: str, who: Principal) -> SearchResult:
    """The search run again, past the cache."""
    planned = ws.plan(question, top_k=8, principal=who)
    return retrieve(planned, None, ws.collaborators(planned))


def test_the_same_search_again_is_a_hit_with_one_cache_stage(scoped_ws: Workspace) -> None:
    first = scoped_ws.search("prazo para comunicar incidente", top_k=3, principal=ANA)
    again = scoped_ws.search("  prazo para   comunicar incidente ", top_k=3, principal=ANA)
    assert not first.trace.cache_hit and first.trace.stages[0].note == "miss"
    assert again.trace.cache_hit
    assert [s.name for s in again.trace.stages] == ["cache"]
    assert _ids(again) == _ids(first) and again.trace.bm25_hits == first.trace.bm25_hits
    other_k = scoped_ws.search("prazo para comunicar incidente", top_k=2, principal=ANA)
    assert not other_k.trace.cache_hit  # every parameter is part of the key


def test_another_scope_never_gets_a_cached_result(scoped_ws: Workspace) -> None:
    question = "prazo para comunicar incidente"
    for who in PRINCIPALS:
        scoped_ws.search(question, top_k=8, principal=who)
    for who in PRINCIPALS:
        hit = scoped_ws.search(question, top_k=8, principal=who)
        fresh = _fresh(scoped_ws, question, who)
        assert hit.trace.cache_hit and _ids(hit) == _ids(fresh)
    seen = {tuple(_ids(scoped_ws.search(question, top_k=8, principal=w))) for w in PRINCIPALS}
    assert len(seen) == len(PRINCIPALS)  # four callers, four different answers


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    calls=st.lists(st.tuples(st.sampled_from(PRINCIPALS), st.sampled_from(QUESTIONS)), max_size=12)
)
def test_property_what_the_cache_serves_is_what_the_caller_may_see(
    scoped_ws: Workspace, calls: list[tuple[Principal, str]]
) -> None:
    for who, question in calls:
        served = scoped_ws.search(question, top_k=8, principal=who)
        fresh = _fresh(scoped_ws, question, who)
        assert _ids(served) == _ids(fresh)


def test_an_ingest_or_a_deletion_invalidates(scoped_ws: Workspace) -> None:
    before = scoped_ws.search("reembolso de viagem", top_k=3)
    extra = SourceDocument(doc_id="new", text="Reembolso de viagem internacional em dólares.")
    scoped_ws.ingest([extra])
    after = scoped_ws.search("reembolso de viagem", top_k=3)
    assert not after.trace.cache_hit and "new" in {h.unit.doc_id for h in after.hits}
    assert "new" not in {h.unit.doc_id for h in before.hits}
    scoped_ws.delete("new")
    gone = scoped_ws.search("reembolso de viagem", top_k=3)
    assert not gone.trace.cache_hit and "new" not in {h.unit.doc_id for h in gone.hits}


def test_a_graph_write_moves_the_key_of_graph_boosted_searches_only(scoped_ws: Workspace) -> None:
    boosted, plain = scoped_ws.plan("prazo", kg=True), scoped_ws.plan("prazo")
    keys = (
        cache_key_of(boosted, None, scoped_ws.collaborators(boosted)),
        cache_key_of(plain, None, scoped_ws.collaborators(plain)),
    )
    scoped_ws.store.bump_graph()
    assert cache_key_of(boosted, None, scoped_ws.collaborators(boosted)) != keys[0]
    assert cache_key_of(plain, None, scoped_ws.collaborators(plain)) == keys[1]


def test_a_given_vector_or_a_zero_ttl_bypasses_the_cache(
    scoped_ws: Workspace, tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    vector = embedder.encode_queries(["prazo"])[0]
    scoped_ws.search("prazo", vector=vector)
    assert not scoped_ws.search("prazo", vector=vector).trace.cache_hit
    with Workspace.open(tmp_path / "off", uncached(None), embedder=embedder, create=True) as off:
        assert off.cache is None
        off.ingest(make_docs())
        assert off.search("prazo").trace.stages[0].name != "cache"


def test_entries_expire_after_their_ttl_and_the_oldest_go_first() -> None:
    now = [100.0]
    store = MemoryStore(ttl_s=10, max_entries=2, clock=lambda: now[0])
    store.put("a", "1")
    store.put("b", "2")
    assert store.get("a") == "1"  # a is now the most recently used
    store.put("c", "3")
    assert (store.get("a"), store.get("b"), store.get("c")) == ("1", None, "3")
    now[0] = 110.5
    assert store.get("a") is None and store.get("c") is None
    assert normalise_query(" a\u0301gua \n fria ") == "água fria"


def test_results_live_in_redis_when_a_url_is_set(
    redis_url: str, tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    settings = TrilhaSettings(graph_backend="none", redis_url=redis_url, result_cache_ttl_s=30)
    import redis

    client = redis.Redis.from_url(redis_url)  # shared by the session's tests
    before = set(client.keys("trilha:result:*"))
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        ws.ingest(make_docs())
        first = ws.search("security incident", top_k=2, principal=ANA)
        assert isinstance(ws.cache, ResultCache) and isinstance(ws.cache.store, RedisStore)
        keys = list(set(client.keys("trilha:result:*")) - before)
        assert len(keys) == 1 and 0 < client.pttl(keys[0]) <= 30_000
        again = ws.search("security incident", top_k=2, principal=ANA)
        assert again.trace.cache_hit and _ids(again) == _ids(first)


def test_a_redis_that_is_down_degrades_to_no_cache_with_a_warning(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    down = f"unix://{tmp_path / 'nobody.sock'}"
    settings = TrilhaSettings(graph_backend="none", redis_url=down)
    with Workspace.open(tmp_path / "ws", settings, embedder=embedder, create=True) as ws:
        ws.ingest(make_docs())
        result = ws.search("security incident", top_k=2)
        assert result.hits and not result.trace.cache_hit
        assert any(
            w.startswith("result cache unavailable (Redis at unix://")
            for w in result.trace.warnings
        )
