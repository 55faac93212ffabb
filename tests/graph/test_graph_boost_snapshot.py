"""The KG boost's in-memory snapshot answers exactly as the graph read does, for every principal,
on both backends; the service builds it after a few boosts, stops reading the graph, drops it on
every graph write (not on the memory's), and does without it when the graph is too big."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

from tests.graph.conftest import _e, unit
from tests.graph.test_graph_boost import ConcurrencyProbe
from tests.memory.jobs_helpers import job
from trilha.access import Principal
from trilha.graph.boost.gate import BoostGate
from trilha.graph.boost.score import BoostResult, BoostWeights, compute_kg_boost
from trilha.graph.boost.snapshot import SnapshotSlot, read_snapshot, snapshot_boost
from trilha.graph.build.records import loads_records
from trilha.graph.service import GraphService
from trilha.graph.stores.base import GraphStore
from trilha.memory.graph import JobGraphWriter

BOB = Principal(user_id="bob")
ANA = Principal(user_id="ana", org_ids=["acme"], roles=["it"], hierarchy_level=2, clearance=1)
WHO = [None, ANA, BOB, Principal(roles=["it", "hr"], clearance=3, hierarchy_level=5)]
ACME: dict[str, Any] = {"visibility": "org", "org_id": "acme"}
BOBS: dict[str, Any] = {"visibility": "private", "owner_id": "bob"}
SECRET: dict[str, Any] = {"sensitivity": 2, "acl": ["it", "hr"]}
UNITS = [
    unit("pub#0", "Alpha and Bravo."),
    unit("pub#1", "Bravo alone."),
    unit("mixed#0", "Alpha, open part."),
    unit("mixed#1", "Charlie, Bob's part.", **BOBS),
    unit("acme#0", "Alpha, Bravo and Charlie.", **ACME),
    unit("sec#0", "Alpha and Charlie.", **SECRET),
]
MENTIONS = {
    "pub#0": [_e("Alpha", "Concept", 0.5), _e("Bravo", "Concept", 0.9)],
    "pub#1": [_e("Bravo", "Concept", 0.3)],
    "mixed#0": [_e("Alpha", "Concept", 0.7)],
    "mixed#1": [_e("Charlie", "Concept", 0.6)],
    "acme#0": [_e(n, "Concept", 0.4) for n in ("Alpha", "Bravo", "Charlie")],
    "sec#0": [_e("Alpha", "Concept", 1.0), _e("Charlie", "Concept", 0.2)],
}
RECORDS = """
{"kind":"node","label":"Criterio","id":"Dano moral","props":{"peso":"alto"}}
{"kind":"edge","type":"HAS_FATO","source":"Doc:mixed","target":"Fato:f1"}
{"kind":"edge","type":"HAS_CRITERIO","source":"Chunk:mixed#0","target":"Criterio:Dano moral"}
{"kind":"edge","type":"HAS_PROVA","source":"Doc:acme","target":"Prova:p1"}
{"kind":"edge","type":"HAS_PROVA","source":"Chunk:sec#0","target":"Prova:p2"}
"""
IDS = [u.unit_id for u in UNITS] + ["missing#0"]
QUERIES = [[], ["Alpha"], ["Bravo", "Charlie"], ["alpha", "Delta"], ["Charlie"]]


@pytest.fixture
def service(store: GraphStore) -> GraphService:
    service = GraphService(store, cache_ttl_s=60.0)
    service.ingest(UNITS, MENTIONS)
    service.write_records(loads_records(RECORDS))
    return service


def _from_graph(
    service: GraphService, query: list[str], who: Principal | None, relevant: Any
) -> BoostResult:
    gate: BoostGate = service._gate
    return compute_kg_boost(
        service.store,
        IDS,
        query,
        timeout_s=10.0,
        relevant=relevant,
        corpus_size=gate.corpus_size(who),
        principal=who,
    )


def test_the_snapshot_answers_as_the_graph_does(service: GraphService) -> None:
    snapshot = read_snapshot(service.store)
    assert snapshot is not None
    relevants = [None, {"pub#0", "mixed#0", "sec#0"}, {"acme#0", "mixed#1", "missing#0"}]
    compared = 0
    for who, query, relevant in itertools.product(WHO, QUERIES, relevants):
        graph = _from_graph(service, query, who, relevant)
        copy = snapshot_boost(snapshot, IDS, query, relevant=relevant, principal=who)
        assert graph.warning is None
        assert copy.raw == pytest.approx(graph.raw), (who, query, relevant)
        assert copy.scores == pytest.approx(graph.scores), (who, query, relevant)
        compared += 1
    assert compared == len(WHO) * len(QUERIES) * len(relevants)
    anonymous = snapshot_boost(snapshot, IDS, ["Alpha"], principal=None).raw
    assert anonymous["sec#0"] == anonymous["acme#0"] == anonymous["mixed#1"] == 0.0
    assert [snapshot.corpus_size(who) for who in WHO] == [3, 4, 4, 4]


def _ready(slot: SnapshotSlot, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while slot.get() is None:
        assert time.monotonic() < deadline, "the snapshot was never built"
        time.sleep(0.02)


def test_the_service_boosts_from_the_snapshot_until_a_write(tmp_path: Any) -> None:
    from trilha.graph.stores.falkordb import FalkorDBStore

    probe = ConcurrencyProbe(FalkorDBStore.embedded(tmp_path / "g"), delay_s=0.0)
    service = GraphService(probe)
    try:
        service.ingest(UNITS, MENTIONS)
        service.write_records(loads_records(RECORDS))
        before = service.booster.boost_entities(IDS, ["Alpha"], principal=BOB)
        _ready(service._gate.snapshot)
        for who in WHO:  # each principal's evidence check is read once, then kept
            service.booster.boost_entities(IDS, ["Alpha"], principal=who)
        calls = probe.calls
        for who in WHO * 3:
            service.booster.boost_entities(IDS, ["Alpha"], principal=who)
        assert probe.calls == calls  # no graph read while the snapshot holds
        assert service.booster.boost_entities(IDS, ["Alpha"], principal=BOB).raw == pytest.approx(
            before.raw
        )

        # the memory's writes (a retrieval job) keep it; a unit written drops it
        assert JobGraphWriter.for_service(service).write(job(0, returned=("Chunk:pub#0",))) is None
        assert service._gate.snapshot.get() is not None
        service.ingest([unit("new#0", "Alpha again.")], {"new#0": [_e("Alpha", "Concept", 1.0)]})
        assert service._gate.snapshot.get() is None
        fresh = service.booster.boost_entities([*IDS, "new#0"], ["Alpha"], principal=BOB)
        assert fresh.raw["new#0"] > 0 and fresh.raw != before.raw
        _ready(service._gate.snapshot)
        assert service.booster.boost_entities(
            [*IDS, "new#0"], ["Alpha"], principal=BOB
        ).raw == pytest.approx(fresh.raw)
    finally:
        service.close()


def test_a_graph_too_big_is_not_copied(service: GraphService) -> None:
    slot = SnapshotSlot(service.store, service._gate.pool, ttl_s=60.0, max_mentions=3)
    assert read_snapshot(service.store, max_mentions=3) is None
    assert slot.build() is None
    for _ in range(5):  # resting: no build is started again before ttl_s
        assert slot.get() is None
    assert service.booster.boost_entities(IDS, ["Alpha"]).warning is None


def test_a_store_others_may_write_is_copied_for_ttl_only(service: GraphService) -> None:
    now = [0.0]
    slot = SnapshotSlot(service.store, service._gate.pool, ttl_s=10.0, clock=lambda: now[0])
    assert slot.build() is not None
    now[0] = 9.0
    owned = service.store.name == "falkordb-embedded"
    assert slot.get() is not None
    now[0] = 11.0
    assert (slot.get() is not None) == owned


def test_the_weights_are_the_boosts(service: GraphService) -> None:
    snapshot = read_snapshot(service.store)
    assert snapshot is not None
    heavy = BoostWeights(entity=3.0)
    corpus = service._gate.corpus_size(None)
    graph = compute_kg_boost(service.store, IDS, ["Alpha"], 10.0, weights=heavy, corpus_size=corpus)
    copy = snapshot_boost(snapshot, IDS, ["Alpha"], weights=heavy)
    assert copy.raw == pytest.approx(graph.raw)


def test_a_prepared_boost_answers_from_the_snapshot(service: GraphService) -> None:
    before = service.booster.boost_entities(IDS, ["Alpha"], principal=ANA)
    assert service.booster.prepare()
    after = service.booster.boost_entities(IDS, ["Alpha"], principal=ANA)
    assert after.raw == pytest.approx(before.raw) and after.warning is None


def test_priors_stored_on_first_use_reach_the_snapshot(service: GraphService) -> None:
    expected = service.booster.boost_entities(IDS, ["Alpha"], principal=BOB).raw
    service.store.write("MATCH (c:Chunk) REMOVE c.kg_prior, c.kg_prior_own")  # an older graph
    older = GraphService(service.store, entities_alone=True)
    assert older.booster.prepare()  # stores the missing priors first, then copies
    assert older._gate.snapshot.get() is not None
    assert older.booster.boost_entities(IDS, ["Alpha"], principal=BOB).raw == pytest.approx(
        expected
    )
