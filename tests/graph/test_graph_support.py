"""Access summaries stay exact through every write: what a principal reads from a RELATED edge's
or an entity's summary is what walking to the visible chunks gives, after ingest, replacement,
deletion, an access change and records, on both backends. A hidden chunk's co-occurrence never
shows an edge nor counts in its weight."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.graph.conftest import _e, unit
from trilha.access import Principal
from trilha.graph.build.records import loads_records
from trilha.graph.build.writer import GraphWriter
from trilha.graph.model import cooccurrence_weight
from trilha.graph.service import GraphService
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import Visibility

ANA = Principal(user_id="ana", org_ids=["acme"], roles=["it"], hierarchy_level=2, clearance=1)
BOB = Principal(user_id="bob")
WHO = [None, ANA, BOB, Principal(roles=["it", "hr"], clearance=3, hierarchy_level=5)]
PUBLIC: dict[str, Any] = {}
ACME: dict[str, Any] = {"visibility": "org", "org_id": "acme"}
BOBS: dict[str, Any] = {"visibility": "private", "owner_id": "bob"}
SECRET: dict[str, Any] = {"sensitivity": 2, "acl": ["it", "hr"]}
UNITS = [
    unit("pub#0", "Alpha and Bravo.", **PUBLIC),
    unit("acme#0", "Alpha, Bravo and Charlie.", **ACME),
    unit("bob#0", "Bravo and Charlie.", **BOBS),
    unit("sec#0", "Alpha and Charlie.", **SECRET),
]
NAMES = {"pub#0": "AB", "acme#0": "ABC", "bob#0": "BC", "sec#0": "AC"}
FULL = {"A": "Alpha", "B": "Bravo", "C": "Charlie"}


def _entities(names: dict[str, str]) -> dict[str, list[Any]]:
    return {u: [_e(FULL[n], "Concept", 0.5) for n in ns] for u, ns in names.items()}


def _related(
    store: GraphStore, principal: Principal | None, walk_too: bool = True
) -> dict[frozenset[str], int]:
    """Visible support of every RELATED edge: from its summary, checked against the walk
    (unless not ``walk_too``)."""
    vis = Visibility.of(principal)
    walk = f"size([(a)<-[:MENTIONS]-(c:Chunk)-[:MENTIONS]->(b) WHERE {vis.own('c')} | c.id])"
    rows = store.run(
        "MATCH (a:Entity)-[r:RELATED]->(b:Entity) "
        f"RETURN a.id AS a, b.id AS b, {vis.support('r')} AS summary, {walk} AS walk",
        vis.params,
    )
    assert not walk_too or [r["summary"] for r in rows] == [r["walk"] for r in rows], rows
    return {frozenset((r["a"], r["b"])): r["summary"] for r in rows if r["summary"] > 0}


def _entity_chunks(store: GraphStore, principal: Principal | None) -> dict[str, int]:
    """Visible chunks mentioning each entity: from its summary, checked against the walk."""
    vis = Visibility.of(principal)
    rows = store.run(
        f"MATCH (e:Entity) RETURN e.id AS id, {vis.support('e')} AS summary, "
        f"size([(e)<-[:MENTIONS]-(c:Chunk) WHERE {vis.own('c')} | c.id]) AS walk",
        vis.params,
    )
    assert [r["summary"] for r in rows] == [r["walk"] for r in rows], rows
    return {r["id"]: r["summary"] for r in rows}


def _exact(store: GraphStore) -> dict[str, dict[frozenset[str], int]]:
    out = {}
    for who in WHO:
        _entity_chunks(store, who)
        out[who.describe() if who else "anonymous"] = _related(store, who)
    return out


AB, AC, BC = (
    frozenset(p) for p in (("alpha", "bravo"), ("alpha", "charlie"), ("bravo", "charlie"))
)


@pytest.fixture
def written(store: GraphStore) -> GraphWriter:
    writer = GraphWriter(store)
    writer.upsert_units(UNITS, _entities(NAMES))
    return writer


def test_summaries_count_only_visible_chunks(written: GraphWriter) -> None:
    seen = _exact(written.store)
    assert seen["anonymous"] == {AB: 1}
    assert seen[ANA.describe()] == {AB: 2, AC: 1, BC: 1}  # acme#0 (org), not sec#0 (clearance)
    assert seen[BOB.describe()] == {AB: 1, BC: 1}  # pub#0, and his own bob#0


def test_an_access_change_on_reingest_hides_the_co_occurrence(written: GraphWriter) -> None:
    hidden = [unit("pub#0", "Alpha and Bravo.", **BOBS)]
    written.upsert_units(hidden, _entities({"pub#0": "AB"}))
    seen = _exact(written.store)
    assert seen["anonymous"] == {}  # the edge exists, supported only by chunks anon cannot see
    assert seen[BOB.describe()] == {AB: 1, BC: 1}
    assert written.store.run("MATCH ()-[r:RELATED]->() RETURN count(r) AS n") == [{"n": 3}]


def test_replace_and_delete_keep_summaries_exact(written: GraphWriter) -> None:
    written.replace_doc("acme", [unit("acme#1", "Charlie alone.", **ACME)])
    written.store.write("MATCH (c:Chunk {id: 'acme#1'}) SET c.ordinal = 1")
    seen = _exact(written.store)
    assert seen[ANA.describe()] == {AB: 1}  # acme#0 is gone: no more A-C or B-C for ana
    written.delete_doc("pub")
    seen = _exact(written.store)
    assert seen["anonymous"] == {} and seen[ANA.describe()] == {}
    assert seen[BOB.describe()] == {BC: 1}


def test_write_access_and_upgrade_keep_summaries_exact(written: GraphWriter) -> None:
    written.write_access([unit("bob#0", "Bravo and Charlie.", **PUBLIC)])
    assert _exact(written.store)["anonymous"] == {AB: 1, BC: 1}
    written.store.write("MATCH ()-[r:RELATED]->() REMOVE r.support_n")  # an older graph
    assert (
        _related(written.store, None, walk_too=False) == {}
    )  # no summary: seen by nobody, fail closed
    assert written.upgrade_support() == 3
    assert _exact(written.store)["anonymous"] == {AB: 1, BC: 1}
    assert written.upgrade_support() == 0
    written.store.write("MATCH (e:Entity) REMOVE e.support_salience")  # before per-entry salience
    assert written.upgrade_support() == 3  # alpha, bravo, charlie
    assert written.store.run("MATCH (e:Entity {id: 'bravo'}) RETURN e.support_salience AS s") == [
        {"s": [0.5, 0.5]}  # public (pub#0, bob#0 now), acme
    ]
    assert written.upgrade_support() == 0


def test_records_of_hidden_chunks_add_no_visible_support(written: GraphWriter) -> None:
    records = loads_records(
        '{"kind":"edge","type":"MENTIONS","source":"Chunk:bob#0","target":"Entity:Delta"}\n'
        '{"kind":"edge","type":"RELATED","source":"Entity:Bravo","target":"Entity:Delta",'
        '"props":{"weight":0.9}}\n'
        '{"kind":"edge","type":"RELATED","source":"Entity:Alpha","target":"Entity:Delta"}'
    )
    written.write_records(records)
    bd, ad = frozenset(("bravo", "delta")), frozenset(("alpha", "delta"))
    seen = _exact(written.store)
    assert bd not in seen["anonymous"] and ad not in seen[BOB.describe()]
    assert seen[BOB.describe()][bd] == 1  # bob#0 mentions both; the record's weight is kept
    service = GraphService(written.store, cache_ttl_s=0.0001)
    assert not service.path("Bravo", "Delta").meta.found
    shown = service.path("Bravo", "Delta", principal=BOB)
    assert shown.meta.found and shown.edges[0].weight == 0.9


def test_reingest_keeps_summaries_of_what_records_say_a_chunk_mentions(
    written: GraphWriter,
) -> None:
    records = '{"kind":"edge","type":"MENTIONS","source":"Chunk:bob#0","target":"Entity:Delta"}'
    written.write_records(loads_records(records))
    assert _entity_chunks(written.store, None)["delta"] == 0
    written.upsert_units(
        [unit("bob#0", "Bravo and Charlie.", **PUBLIC)], _entities({"bob#0": "BC"})
    )
    assert _entity_chunks(written.store, None)["delta"] == 1  # bob#0 is public now
    assert _exact(written.store)["anonymous"] == {AB: 1, BC: 1}


def test_a_chunk_counts_in_edges_it_does_not_pair(store: GraphStore) -> None:
    writer = GraphWriter(store, pair_entities=2)  # a chunk pairs its two most salient entities
    sal = {"A": 0.9, "B": 0.5, "C": 0.4}
    ents = {"x#0": [_e("Bravo", "Concept", 0.9), _e("Charlie", "Concept", 0.8)]}
    writer.upsert_units([unit("x#0", "Bravo, Charlie.")], ents)
    abc = {"y#0": [_e(FULL[n], "Concept", sal[n]) for n in "ABC"]}
    writer.upsert_units([unit("y#0", "Alpha, Bravo, Charlie.", **ACME)], abc)
    assert _exact(store)[ANA.describe()] == {AB: 1, BC: 2}  # y#0 is behind B-C too
    writer.upsert_units([unit("y#0", "Alpha, Bravo, Charlie.")], abc)
    assert _exact(store)["anonymous"] == {AB: 1, BC: 2}


def test_reads_weigh_by_the_visible_chunks(written: GraphWriter) -> None:
    service = GraphService(written.store, cache_ttl_s=0.0001)
    sub = service.subgraph("acme", None, 2, 50, principal=ANA)
    related = {(e.source, e.target): e.weight for e in sub.edges if e.type == "RELATED"}
    assert related[("Entity:Alpha", "Entity:Bravo")] == pytest.approx(cooccurrence_weight(2))
    found = service.path("Alpha", "Charlie", principal=None)
    assert not found.meta.found  # only sec#0 and acme#0 join them, neither public
    found = service.path("Alpha", "Charlie", principal=ANA)
    assert found.meta.length == 1 and found.edges[0].weight == pytest.approx(0.5)


def _zeta(uid: str, **access: Any) -> Any:
    return unit(uid, "Zeta here.", **access)


def test_kg_boost_reads_only_what_the_principal_sees(store: GraphStore) -> None:
    service = GraphService(store, cache_ttl_s=0.0001, entities_alone=True)
    zeta = {u: [_e("Zeta", "Concept", 0.8)] for u in ("pub#0", "pub#1", "bob#0", "bob#1")}
    service.ingest([_zeta("pub#0"), unit("pub#1", "Other.")], {"pub#0": zeta["pub#0"]})
    alone = service.booster.boost_entities(["pub#0", "bob#0"], ["Zeta"]).raw
    hidden = [_zeta("bob#0", **BOBS), _zeta("bob#1", **BOBS)]
    service.ingest(hidden, {u.unit_id: zeta[u.unit_id] for u in hidden})
    # a chunk anonymous may not see neither scores nor moves df or N: the same boost as before
    assert service.booster.boost_entities(["pub#0", "bob#0"], ["Zeta"]).raw == alone
    assert alone["pub#0"] == pytest.approx(0.8 * math.log(2 / 1) / math.log(2))
    for_bob = service.booster.boost_entities(["pub#0", "bob#0"], ["Zeta"], principal=BOB).raw
    assert for_bob["pub#0"] == pytest.approx(0.8 * math.log(4 / 3) / math.log(4))


def test_kg_boost_skips_evidence_behind_a_hidden_doc(store: GraphStore) -> None:
    service = GraphService(store, cache_ttl_s=0.0001)
    service.ingest([unit("mixed#0", "Open part."), unit("mixed#1", "Bob's part.", **BOBS)])
    service.write_records(
        loads_records('{"kind":"edge","type":"HAS_FATO","source":"Doc:mixed","target":"Fato:f1"}')
    )
    assert service.booster.boost_entities(["mixed#0"], []).raw == {
        "mixed#0": 0.0
    }  # the Doc is bob's
    assert service.booster.boost_entities(["mixed#0"], [], principal=BOB).raw == {"mixed#0": 0.5}


def _saliences(service: GraphService, principal: Principal | None) -> dict[str, Any]:
    """Entity saliences shown in the subgraph of doc 'pub' and on the path Zeta-Yota."""
    sub = service.subgraph("pub", None, 2, 50, principal=principal)
    on_path = service.path("Zeta", "Yota", principal=principal).path
    return {
        "subgraph": {n.id: n.salience for n in sub.nodes if n.label == "Entity"},
        "path": [(n.id, n.salience) for n in on_path],
    }


def test_entity_salience_comes_from_the_chunks_the_principal_sees(store: GraphStore) -> None:
    service = GraphService(store, cache_ttl_s=0.0001)
    service.ingest(
        [unit("pub#0", "Zeta and Yota.")],
        {"pub#0": [_e("Zeta", "Concept", 0.4), _e("Yota", "Concept", 0.3)]},
    )
    alone = _saliences(service, None)
    assert alone["subgraph"] == {"Entity:Zeta": 0.4, "Entity:Yota": 0.3}
    assert alone["path"] == [("Entity:Zeta", 0.4), ("Entity:Yota", 0.3)]
    service.ingest(
        [unit("bob#0", "Zeta and Yota, louder.", **BOBS)],
        {"bob#0": [_e("Zeta", "Concept", 0.9), _e("Yota", "Concept", 0.95)]},
    )
    for who in (None, ANA):  # bob's chunk moves nothing they are shown
        assert _saliences(service, who) == alone
    for_bob = _saliences(service, BOB)
    assert for_bob["subgraph"] == {"Entity:Zeta": 0.9, "Entity:Yota": 0.95}
    assert for_bob["path"] == [("Entity:Zeta", 0.9), ("Entity:Yota", 0.95)]


def test_evidence_only_its_readers_see_does_not_turn_the_boost_on_for_others(
    store: GraphStore,
) -> None:
    service = GraphService(store, cache_ttl_s=60.0)
    zeta = [_e("Zeta", "Concept", 0.8)]
    service.ingest(
        [_zeta("pub#0"), unit("pub#1", "Other."), _zeta("bob#0", **BOBS)],
        {"pub#0": zeta, "bob#0": zeta},
    )
    service.write_records(
        loads_records('{"kind":"edge","type":"HAS_FATO","source":"Doc:bob","target":"Fato:f1"}')
    )
    ids = ["pub#0", "pub#1"]
    for who in (None, ANA):  # bob's Fato is not theirs to see: no boost, as without it
        assert service.booster.boost_entities(ids, ["Zeta"], principal=who).raw == {
            "pub#0": 0.0,
            "pub#1": 0.0,
        }
    seen_by_bob = service.booster.boost_entities([*ids, "bob#0"], ["Zeta"], principal=BOB).raw
    assert seen_by_bob["pub#0"] > 0 and seen_by_bob["bob#0"] > seen_by_bob["pub#0"]
