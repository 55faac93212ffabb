"""Ingest: counts, co-occurrence weights, idempotency, re-ingest, delete, explicit records."""

from __future__ import annotations

import pytest

from tests.graph.conftest import ENTITIES, UNITS, _e, counts, snapshot, unit
from trilha.errors import BadRequestError
from trilha.graph.build.records import NodeRecord, loads_records
from trilha.graph.build.rows import doc_rows, link_rows, pairs_of
from trilha.graph.build.writer import GraphWriter
from trilha.graph.stores.base import GraphStore
from trilha.types import TextUnit

RELATED = "MATCH (a:Entity)-[r:RELATED]->(b:Entity) RETURN a.id AS a, b.id AS b, r.weight AS w"


def related(store: GraphStore) -> dict[tuple[str, str], float]:
    return {(r["a"], r["b"]): round(r["w"], 4) for r in store.run(RELATED)}


def test_ingest_counts_and_weights(corpus: GraphStore) -> None:
    assert counts(corpus) == {
        "Doc": 4,
        "Chunk": 5,
        "Entity": 7,
        "Category": 2,
        "Tag": 2,
        "PART_OF": 5,
        "MENTIONS": 12,
        "RELATED": 7,
        "IN_CATEGORY": 4,
        "HAS_TAG": 2,
    }
    assert related(corpus) == {
        ("graphrag", "knowledge graph"): 0.5,
        ("graphrag", "neo4j"): 0.5,
        ("knowledge graph", "neo4j"): 0.6667,  # two chunks mention both: 2/3
        ("cypher", "neo4j"): 0.5,
        ("lgpd", "stj"): 0.6667,
        ("dano moral", "stj"): 0.5,
        ("dano moral", "lgpd"): 0.5,
    }
    sal = corpus.run("MATCH (e:Entity {id: 'neo4j'}) RETURN e.salience AS s, e.name AS n")
    assert sal == [{"s": 0.9, "n": "Neo4j"}]  # the highest mention salience


def test_ingest_is_idempotent(corpus: GraphStore) -> None:
    before = snapshot(corpus)
    GraphWriter(corpus).upsert_units(UNITS, ENTITIES)
    GraphWriter(corpus).upsert_units(UNITS[::-1], ENTITIES)
    assert snapshot(corpus) == before


def test_reingest_replaces_mentions_and_drops_orphans(corpus: GraphStore) -> None:
    GraphWriter(corpus).upsert_units(
        [UNITS[1]], {"guide/graphrag#1": [_e("Neo4j", "Product", 0.9)]}
    )
    ids = {r["id"] for r in corpus.run("MATCH (e:Entity) RETURN e.id AS id")}
    assert "cypher" not in ids  # no chunk mentions it any more
    assert ("cypher", "neo4j") not in related(corpus)


def test_reingest_with_new_tags_unlinks_old_ones(corpus: GraphStore) -> None:
    changed = UNITS[0].model_copy(update={"tags": ["rag"]})
    GraphWriter(corpus).upsert_units([changed], ENTITIES)
    tags = corpus.run("MATCH (:Doc {id: 'guide/graphrag'})-[:HAS_TAG]->(t:Tag) RETURN t.id AS t")
    assert tags == [{"t": "rag"}]
    assert not corpus.run("MATCH (t:Tag {id: 'graphrag'}) RETURN t.id AS t")


def test_delete_doc_removes_chunks_mentions_and_orphans(corpus: GraphStore) -> None:
    stats = GraphWriter(corpus).delete_doc("stj/resp-1")
    assert (stats.found, stats.chunks, stats.entities, stats.tags) == (True, 1, 1, 1)
    c = counts(corpus)
    assert (c["Doc"], c["Chunk"], c["Entity"], c["MENTIONS"], c["Tag"]) == (3, 4, 6, 9, 1)
    ids = {r["id"] for r in corpus.run("MATCH (e:Entity) RETURN e.id AS id")}
    assert "dano moral" not in ids and {"stj", "lgpd"} <= ids
    rel = related(corpus)
    assert rel[("lgpd", "stj")] == 0.5  # one chunk left mentions both
    assert ("dano moral", "stj") not in rel
    assert corpus.run("MATCH (c:Category {id: 'decisao'}) RETURN c.id AS id")  # still used
    assert not corpus.run("MATCH (c:Chunk {doc_id: 'stj/resp-1'}) RETURN c.id AS id")


def test_delete_unknown_doc_changes_nothing(corpus: GraphStore) -> None:
    before = snapshot(corpus)
    stats = GraphWriter(corpus).delete_doc("nope")
    assert not stats.found and stats.chunks == 0
    assert snapshot(corpus) == before


def test_ingest_with_the_rule_extractor(store: GraphStore) -> None:
    GraphWriter(store).upsert_units(
        [unit("d#0", "O Superior Tribunal de Justiça (STJ) aplicou a LGPD.", lang="pt")]
    )
    names = {r["n"] for r in store.run("MATCH (e:Entity) RETURN e.name AS n")}
    assert names == {"Superior Tribunal de Justiça", "STJ", "LGPD"}


RECORDS = """
{"kind": "node", "label": "Org", "id": "o1", "props": {"name": "Startup"}}
{"kind": "node", "label": "User", "id": "u1", "props": {"name": "Ana", "hierarchy_level": 2}}
{"kind": "node", "label": "Project", "id": "p1", "props": {"title": "MVP", "owner_id": "u1"}}
{"kind": "node", "label": "Task", "id": "t1", "props": {"title": "Deploy", "status": "late",
 "due_date": "2024-06-01", "visibility": "org", "org_id": "o1", "hierarchy_level": 1,
 "owner_id": "u1"}}
{"kind": "edge", "type": "BELONGS_TO", "source": "Task:t1", "target": "Project:p1"}
{"kind": "edge", "type": "BELONGS_TO", "source": "Project:p1", "target": "Org:o1"}
{"kind": "edge", "type": "MEMBER_OF", "source": "User:u1", "target": "Org:o1"}
{"kind": "edge", "type": "ASSIGNED_TO", "source": "Task:t1", "target": "User:u1"}
{"kind": "edge", "type": "OWNS", "source": "User:u1", "target": "Project:p1"}
{"kind": "node", "label": "Criterio", "id": "Dano Moral", "props": {"peso": "alto"}}
{"kind": "edge", "type": "HAS_CRITERIO", "source": "Doc:stj/resp-1",
 "target": "Criterio:dano moral"}
{"kind": "edge", "type": "RELATED", "source": "Entity:STJ", "target": "Entity:Dano Moral",
 "props": {"weight": 0.9}}
""".replace("\n ", " ")


def test_records_are_written_and_kept(corpus: GraphStore) -> None:
    writer = GraphWriter(corpus)
    stats = writer.write_records(loads_records(RECORDS))
    assert (stats.nodes, stats.edges) == (5, 7)
    task = corpus.run(
        "MATCH (t:Task {id: 't1'})-[:BELONGS_TO]->(p:Project)-[:BELONGS_TO]->(o:Org) "
        "MATCH (t)-[:ASSIGNED_TO]->(u:User)-[:MEMBER_OF]->(o) "
        "RETURN t.status AS s, t.due_date AS d, t.hierarchy_level AS h, u.name AS u, o.id AS o"
    )
    assert task == [{"s": "late", "d": "2024-06-01", "h": 1, "u": "Ana", "o": "o1"}]
    crit = corpus.run("MATCH (:Doc)-[:HAS_CRITERIO]->(c:Criterio) RETURN c.name AS n, c.peso AS p")
    assert crit == [{"n": "Dano Moral", "p": 3.0}]
    assert related(corpus)[("dano moral", "stj")] == 0.9  # explicit weight wins
    before = snapshot(corpus)
    writer.write_records(loads_records(RECORDS))
    writer.upsert_units(UNITS, ENTITIES)
    assert snapshot(corpus) == before  # idempotent, explicit weight kept
    writer.delete_doc("stj/resp-1")
    assert related(corpus)[("dano moral", "stj")] == 0.9  # record edges survive deletes


@pytest.mark.parametrize(
    ("keys", "top", "expected"),
    [
        (["c", "a", "b"], 2, {("a", "c")}),
        (["a", "b", "c"], 3, {("a", "b"), ("a", "c"), ("b", "c")}),
        (["a"], 5, set()),
    ],
)
def test_pairs_of(keys: list[str], top: int, expected: set[tuple[str, str]]) -> None:
    assert pairs_of(keys, top) == expected


def test_doc_and_link_rows() -> None:
    rows = doc_rows(UNITS)
    assert [r["id"] for r in rows] == ["guide/graphrag", "guide/old", "stj/resp-1", "stj/resp-2"]
    assert rows[0]["props"]["updated_at"] == "2024-05-20T12:00:00Z"
    assert rows[1]["props"]["updated_at"] == "2021-01-01"
    (cat_links, cat_keep), (tag_links, _) = link_rows(UNITS)
    assert {(r["doc"], r["id"]) for r in cat_links} == {
        ("guide/graphrag", "guide"),
        ("guide/old", "guide"),
        ("stj/resp-1", "decisao"),
        ("stj/resp-2", "decisao"),
    }
    assert {r["doc"]: r["keep"] for r in cat_keep}["stj/resp-2"] == ["decisao"]
    assert {(r["doc"], r["id"]) for r in tag_links} == {
        ("guide/graphrag", "graphrag"),
        ("stj/resp-1", "juridico"),
    }


def test_a_bad_record_writes_nothing(corpus: GraphStore) -> None:
    before = snapshot(corpus)
    good = loads_records(RECORDS)
    built = NodeRecord(label="Fato", id="bad\x00id")  # built in code, never parsed
    with pytest.raises(BadRequestError, match=r"record 13: id holds control character U\+0000"):
        GraphWriter(corpus).write_records([*good, built])
    assert snapshot(corpus) == before


def test_records_naming_unknown_docs_or_units_are_refused_whole(corpus: GraphStore) -> None:
    before = snapshot(corpus)
    records = loads_records(
        RECORDS
        + '{"kind":"edge","type":"HAS_FATO","source":"Doc:nope","target":"Fato:f1"}\n'
        + '{"kind":"edge","type":"REFERENCES","source":"Task:t1","target":"Chunk:stj/resp-1#7"}\n'
    )
    docs = {"guide/graphrag", "guide/old", "stj/resp-1", "stj/resp-2"}
    units = {u.unit_id for u in UNITS}
    with pytest.raises(BadRequestError) as err:
        GraphWriter(corpus).write_records(records, known_docs=docs, known_units=units)
    assert str(err.value) == (
        "graph records refused: line 14: source Doc:nope is not a document of this workspace "
        "(ingest it first or fix the id); line 15: target Chunk:stj/resp-1#7 is not a unit of "
        "this workspace (ingest it first or fix the id)"
    )
    assert snapshot(corpus) == before  # no phantom Doc, nothing else either
    stats = GraphWriter(corpus).write_records(records[:12], known_docs=docs, known_units=units)
    assert (stats.nodes, stats.edges) == (5, 7)


def test_record_nodes_get_access_fields_with_the_defaults(store: GraphStore) -> None:
    writer = GraphWriter(store)
    task = '{"kind": "node", "label": "Task", "id": "t9", "props": {"title": "Audit"}}'
    user = '{"kind": "node", "label": "User", "id": "u9", "props": {"visibility": "public"}}'
    defaults = {"visibility": "org", "org_id": "acme", "sensitivity": 1, "hierarchy_level": 0}
    writer.write_records(loads_records(f"{task}\n{user}"), access_defaults=defaults)
    rows = store.run(
        "MATCH (n) WHERE n.id IN ['t9', 'u9'] RETURN n.id AS id, n.visibility AS v, "
        "n.org_id AS o, n.sensitivity AS s, n.acl AS acl ORDER BY id"
    )
    assert rows == [
        {"id": "t9", "v": "org", "o": "acme", "s": 1, "acl": ["*"]},
        {"id": "u9", "v": "public", "o": "acme", "s": 1, "acl": ["*"]},
    ]


def test_a_doc_or_chunk_record_keeps_its_units_access(store: GraphStore) -> None:
    writer = GraphWriter(store)
    secret = TextUnit(
        unit_id="memo#0",
        doc_id="memo",
        text="Budget cut at Acme.",
        visibility="private",
        owner_id="maria",
        sensitivity=3,
    )
    writer.upsert_units([secret])
    note = '{"kind": "node", "label": "Chunk", "id": "memo#0", "props": {"note": "checked"}}'
    writer.write_records(loads_records(note), access_defaults={"visibility": "public"})
    (row,) = store.run(
        "MATCH (c:Chunk {id: 'memo#0'}) RETURN c.visibility AS v, c.owner_id AS o, "
        "c.sensitivity AS s, c.note AS note"
    )
    assert row == {"v": "private", "o": "maria", "s": 3, "note": "checked"}
    opened = '{"kind": "node", "label": "Doc", "id": "memo", "props": {"visibility": "public"}}'
    with pytest.raises(BadRequestError, match="Doc access comes from its document's units"):
        writer.write_records(loads_records(opened))
    (doc,) = store.run("MATCH (d:Doc {id: 'memo'}) RETURN d.visibility AS v")
    assert doc == {"v": "private"}


def test_record_nodes_with_bad_access_are_refused_whole(store: GraphStore) -> None:
    bad = (
        '{"kind": "node", "label": "Task", "id": "a", "props": {"visibility": "team"}}\n'
        '{"kind": "node", "label": "Project", "id": "b", "props": {"visibility": "project"}}\n'
        '{"kind": "node", "label": "Task", "id": "c", "props": {"acl": ["*"]}}'
    )
    with pytest.raises(BadRequestError) as err:
        GraphWriter(store).write_records(loads_records(bad))
    message = str(err.value)
    assert "\n" not in message and message.startswith("invalid graph records: line 1: Task")
    assert "visibility 'team' is not one of" in message
    assert "line 2: Project access: visibility 'project' needs project_id" in message
    assert "line 3: Task access: acl has an invalid role '*'" in message
    assert not store.run("MATCH (n) RETURN n.id AS id")
