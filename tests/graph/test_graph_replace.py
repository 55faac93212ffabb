"""Document replacement keeps curated evidence; orphan chunks go; the stored KG prior follows."""

from __future__ import annotations

import pytest

from tests.graph.conftest import ENTITIES, UNITS, _e, counts, snapshot, unit
from trilha.errors import BadRequestError
from trilha.graph.boost.score import compute_kg_boost
from trilha.graph.build.records import loads_records
from trilha.graph.build.writer import GraphWriter
from trilha.graph.service import GraphService
from trilha.graph.stores.base import GraphStore

RESP1 = {"lang": "pt", "title": "REsp 1", "tema": "decisao", "date": "2023-03-10"}
TWO = [
    unit("stj/resp-1#0", "O STJ reconheceu o dano moral.", **RESP1),
    unit("stj/resp-1#1", "A LGPD foi aplicada ao caso.", **RESP1),
]
TWO_ENTITIES = {
    "stj/resp-1#0": [_e("STJ", "Acronym", 1.0), _e("Dano Moral", "Concept", 0.5)],
    "stj/resp-1#1": [_e("LGPD", "Acronym", 0.7), _e("Recurso Especial", "Concept", 0.4)],
}
CURATED = """
{"kind":"node","label":"Criterio","id":"Dano moral","props":{"peso":"alto"}}
{"kind":"node","label":"Prova","id":"p1","props":{"text":"bilhete"}}
{"kind":"node","label":"Fato","id":"f1","props":{"text":"atraso"}}
{"kind":"node","label":"Task","id":"t1","props":{"title":"Revisar"}}
{"kind":"node","label":"Project","id":"p-lgpd","props":{"title":"LGPD"}}
{"kind":"edge","type":"HAS_CRITERIO","source":"Doc:stj/resp-1","target":"Criterio:Dano moral"}
{"kind":"edge","type":"BELONGS_TO","source":"Doc:stj/resp-1","target":"Project:p-lgpd"}
{"kind":"edge","type":"HAS_PROVA","source":"Chunk:stj/resp-1#1","target":"Prova:p1"}
{"kind":"edge","type":"HAS_FATO","source":"Chunk:stj/resp-1#0","target":"Fato:f1"}
{"kind":"edge","type":"REFERENCES","source":"Task:t1","target":"Chunk:stj/resp-1#1"}
"""
EDGES = (
    "MATCH (a)-[r]->(b) WHERE r.origin = 'record' "
    "RETURN type(r) AS t, labels(a)[0] + ':' + a.id AS s, labels(b)[0] + ':' + b.id AS o"
)


def record_edges(store: GraphStore) -> set[tuple[str, str, str]]:
    return {(r["t"], r["s"], r["o"]) for r in store.run(EDGES)}


def priors(store: GraphStore) -> dict[str, float]:
    rows = store.run("MATCH (c:Chunk) RETURN c.id AS id, c.kg_prior AS p")
    return {r["id"]: r["p"] for r in rows}


@pytest.fixture
def curated(corpus: GraphStore) -> GraphStore:
    writer = GraphWriter(corpus)
    writer.replace_doc("stj/resp-1", TWO, TWO_ENTITIES)
    writer.write_records(loads_records(CURATED))
    return corpus


def test_replace_doc_keeps_record_edges_of_kept_chunks(curated: GraphStore) -> None:
    before = record_edges(curated)
    changed = [u.model_copy(update={"text": u.text + " Editado."}) for u in TWO]
    stats = GraphWriter(curated).replace_doc("stj/resp-1", changed, TWO_ENTITIES)
    assert (stats.chunks, stats.removed, stats.reattached) == (2, 0, 0)
    assert record_edges(curated) == before
    assert priors(curated)["stj/resp-1#0"] == pytest.approx(3.0 + 0.5)  # criterio + fato


def test_replace_doc_moves_record_edges_of_removed_chunks_to_the_doc(curated: GraphStore) -> None:
    stats = GraphWriter(curated).replace_doc("stj/resp-1", TWO[:1], TWO_ENTITIES)
    assert (stats.removed, stats.reattached) == (1, 2)
    assert record_edges(curated) == {
        ("HAS_CRITERIO", "Doc:stj/resp-1", "Criterio:dano moral"),
        ("BELONGS_TO", "Doc:stj/resp-1", "Project:p-lgpd"),
        ("HAS_FATO", "Chunk:stj/resp-1#0", "Fato:f1"),
        ("HAS_PROVA", "Doc:stj/resp-1", "Prova:p1"),  # was on the removed chunk #1
        ("REFERENCES", "Task:t1", "Doc:stj/resp-1"),  # pointed at the removed chunk #1
    }
    ids = {r["id"] for r in curated.run("MATCH (c:Chunk) RETURN c.id AS id")}
    assert "stj/resp-1#1" not in ids
    entities = {r["id"] for r in curated.run("MATCH (e:Entity) RETURN e.id AS id")}
    assert "recurso especial" not in entities  # only the removed chunk mentioned it
    # the prior moved with the evidence: criterio 3 + fato 0.5 + the prova now on the Doc 0.5
    assert priors(curated)["stj/resp-1#0"] == pytest.approx(4.0)
    boost = compute_kg_boost(curated, ["stj/resp-1#0", "stj/resp-2#0"], [], timeout_s=5.0)
    assert boost.raw == pytest.approx({"stj/resp-1#0": 4.0, "stj/resp-2#0": 0.0})


def test_delete_then_ingest_would_lose_what_replace_keeps(curated: GraphStore) -> None:
    writer = GraphWriter(curated)
    writer.delete_doc("stj/resp-1")
    writer.upsert_units(TWO, TWO_ENTITIES)
    assert not {e for e in record_edges(curated) if "stj/resp-1" in e[1] + e[2]}
    assert priors(curated)["stj/resp-1#0"] == 0.0


def test_replace_doc_refuses_strangers_and_empty_means_delete(curated: GraphStore) -> None:
    before = snapshot(curated)
    with pytest.raises(BadRequestError, match="units of other documents: stj/resp-2"):
        GraphWriter(curated).replace_doc("stj/resp-1", [*TWO, UNITS[4]])
    assert snapshot(curated) == before
    GraphWriter(curated).replace_doc("stj/resp-1", [])
    assert not curated.run("MATCH (d:Doc {id: 'stj/resp-1'}) RETURN d.id AS id")


def test_prior_is_recomputed_when_records_are_written(curated: GraphStore) -> None:
    assert priors(curated)["stj/resp-2#0"] == 0.0
    writer = GraphWriter(curated)
    writer.write_records(
        loads_records(
            '{"kind":"edge","type":"HAS_CRITERIO","source":"Doc:stj/resp-2",'
            '"target":"Criterio:Dano moral"}'
        )
    )
    assert priors(curated)["stj/resp-2#0"] == pytest.approx(3.0)
    # a new peso on the Criterio node changes every chunk that cites it, directly or via a doc
    writer.write_records(
        loads_records('{"kind":"node","label":"Criterio","id":"Dano moral","props":{"peso":1}}')
    )
    got = priors(curated)
    assert (got["stj/resp-2#0"], got["stj/resp-1#1"]) == pytest.approx((1.0, 1.0 + 0.5))


def test_remove_chunks_and_id_sets(curated: GraphStore) -> None:
    service = GraphService(curated)
    assert service.chunk_ids() == {u.unit_id for u in UNITS} | {"stj/resp-1#1"}
    assert service.doc_ids() == {"guide/graphrag", "guide/old", "stj/resp-1", "stj/resp-2"}
    # a doc the unit store still holds keeps its Doc node (and curated edges) when emptied
    assert service.remove_chunks(["stj/resp-2#0", "nope#0"], keep_docs={"stj/resp-2"}) == 1
    assert "stj/resp-2" in service.doc_ids()
    # one it does not hold goes, record edges and all
    assert service.remove_chunks(["stj/resp-1#0", "stj/resp-1#1"]) == 2
    assert service.doc_ids() == {"guide/graphrag", "guide/old", "stj/resp-2"}
    assert not {e for e in record_edges(curated) if "stj/resp-1" in e[1] + e[2]}
    c = counts(curated)
    assert (c["Chunk"], c["MENTIONS"]) == (3, 7)
    entities = {r["id"] for r in curated.run("MATCH (e:Entity) RETURN e.id AS id")}
    assert entities == {"graphrag", "knowledge graph", "neo4j", "cypher"}


def test_older_graphs_get_their_prior_on_the_first_boost(curated: GraphStore) -> None:
    curated.write("MATCH (c:Chunk) REMOVE c.kg_prior")
    service = GraphService(curated)
    result = service.booster.boost_entities(["stj/resp-1#0", "guide/old#0"], [])
    assert result.raw == pytest.approx({"stj/resp-1#0": 3.5, "guide/old#0": 0.0})
    assert None not in priors(curated).values()


def test_ingest_sets_every_prior(corpus: GraphStore) -> None:
    GraphWriter(corpus).upsert_units(UNITS, ENTITIES)
    assert set(priors(corpus).values()) == {0.0}
