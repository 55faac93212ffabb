"""Seed 003 contracts: subgraph, path and top-N, on both backends."""

from __future__ import annotations

import pytest

from tests.graph.conftest import _e, unit
from trilha.errors import BadRequestError
from trilha.graph.build.records import loads_records
from trilha.graph.build.writer import GraphWriter
from trilha.graph.read.path import path
from trilha.graph.read.subgraph import subgraph
from trilha.graph.read.topn import topn
from trilha.graph.stores.base import GraphStore

GUIDE_NODES = {
    "Doc:guide/graphrag",
    "Chunk:guide/graphrag#0",
    "Chunk:guide/graphrag#1",
    "Category:guide",
    "Tag:graphrag",
    "Entity:GraphRAG",
    "Entity:Knowledge Graph",
    "Entity:Neo4j",
    "Entity:Cypher",
    "Doc:guide/old",  # shares the category: two hops away
}


def edge_set(result: object) -> set[tuple[str, str, str]]:
    return {(e.source, e.type, e.target) for e in result.edges}  # type: ignore[attr-defined]


def test_subgraph_contract(corpus: GraphStore) -> None:
    result = subgraph(corpus, "guide/graphrag", None, 2, 30)
    data = result.model_dump()
    assert set(data) == {"nodes", "edges", "constraints", "query"}
    assert data["query"] == {"doc_id": "guide/graphrag", "entity_names": None}
    assert data["constraints"] == {"max_hops": 2, "limit": 30, "truncated": False, "notes": []}
    assert data["nodes"][0] == {
        "id": "Doc:guide/graphrag",
        "label": "Doc",
        "title": "GraphRAG intro",
        "updated_at": "2024-05-20T12:00:00Z",
        "lang": "en",
    }
    entity = next(n for n in data["nodes"] if n["id"] == "Entity:Neo4j")
    assert entity == {
        "id": "Entity:Neo4j",
        "label": "Entity",
        "name": "Neo4j",
        "type": "Product",
        "salience": 0.9,
    }
    assert {n["id"] for n in data["nodes"]} == GUIDE_NODES
    assert len(data["nodes"]) == len(GUIDE_NODES)  # Neo4j is reachable twice, listed once
    assert edge_set(result) == {
        ("Doc:guide/graphrag", "HAS_TAG", "Tag:graphrag"),
        ("Doc:guide/graphrag", "IN_CATEGORY", "Category:guide"),
        ("Doc:guide/old", "IN_CATEGORY", "Category:guide"),
        ("Chunk:guide/graphrag#0", "PART_OF", "Doc:guide/graphrag"),
        ("Chunk:guide/graphrag#1", "PART_OF", "Doc:guide/graphrag"),
        ("Chunk:guide/graphrag#0", "MENTIONS", "Entity:GraphRAG"),
        ("Chunk:guide/graphrag#0", "MENTIONS", "Entity:Knowledge Graph"),
        ("Chunk:guide/graphrag#0", "MENTIONS", "Entity:Neo4j"),
        ("Chunk:guide/graphrag#1", "MENTIONS", "Entity:Neo4j"),
        ("Chunk:guide/graphrag#1", "MENTIONS", "Entity:Cypher"),
        # RELATED among returned entities (a triangle: a cycle, each edge once)
        ("Entity:GraphRAG", "RELATED", "Entity:Knowledge Graph"),
        ("Entity:GraphRAG", "RELATED", "Entity:Neo4j"),
        ("Entity:Knowledge Graph", "RELATED", "Entity:Neo4j"),
        ("Entity:Cypher", "RELATED", "Entity:Neo4j"),
    }
    assert len(data["edges"]) == 14
    mention = next(e for e in data["edges"] if e["type"] == "MENTIONS")
    assert set(mention) == {"source", "target", "type", "salience"}
    related = next(
        e
        for e in data["edges"]
        if e["type"] == "RELATED" and "Entity:Cypher" in (e["source"], e["target"])
    )
    assert related["weight"] == 0.5


def test_subgraph_cycles_do_not_duplicate(corpus: GraphStore) -> None:
    records = loads_records(
        '{"kind":"node","label":"Criterio","id":"Prova robusta","props":{"peso":2}}\n'
        '{"kind":"edge","type":"HAS_CRITERIO","source":"Doc:guide/graphrag",'
        '"target":"Criterio:Prova robusta"}\n'
        '{"kind":"edge","type":"HAS_CRITERIO","source":"Chunk:guide/graphrag#0",'
        '"target":"Criterio:Prova robusta"}\n'
    )
    GraphWriter(corpus).write_records(records)
    result = subgraph(corpus, "guide/graphrag", None, 2, 100)
    ids = [n.id for n in result.nodes]
    keys = [(e.source, e.type, e.target) for e in result.edges]
    assert len(ids) == len(set(ids)) and "Criterio:Prova robusta" in ids
    assert len(keys) == len(set(keys))
    assert ("Chunk:guide/graphrag#0", "HAS_CRITERIO", "Criterio:Prova robusta") in keys


def test_subgraph_entity_filter_is_case_insensitive(corpus: GraphStore) -> None:
    result = subgraph(corpus, "guide/graphrag", ["NEO4J"], 2, 30)
    assert [n.id for n in result.nodes] == [
        "Doc:guide/graphrag",
        "Chunk:guide/graphrag#0",
        "Chunk:guide/graphrag#1",
        "Entity:Neo4j",
    ]
    assert {e.type for e in result.edges} == {"PART_OF", "MENTIONS"}
    assert result.query.entity_names == ["NEO4J"]


@pytest.mark.parametrize(
    ("hops", "effective", "count", "note"),
    [
        (0, 0, 1, None),
        (1, 1, 5, None),
        (2, 2, 10, None),
        (3, 2, 10, "max_hops 3 clamped to 2"),
        (10**9, 2, 10, f"max_hops {10**9} clamped to 2"),
    ],
)
def test_subgraph_max_hops(
    corpus: GraphStore, hops: int, effective: int, count: int, note: str | None
) -> None:
    result = subgraph(corpus, "guide/graphrag", None, hops, 30)
    assert result.constraints.max_hops == effective
    assert len(result.nodes) == count
    assert result.constraints.notes == ([note] if note else [])
    if hops == 0:
        assert result.edges == []


@pytest.mark.parametrize("hops", [-1, "2", 2.0, True, None])
def test_subgraph_bad_max_hops(corpus: GraphStore, hops: object) -> None:
    with pytest.raises(BadRequestError, match="max_hops"):
        subgraph(corpus, "guide/graphrag", None, hops, 30)  # type: ignore[arg-type]


def test_subgraph_limits(corpus: GraphStore) -> None:
    small = subgraph(corpus, "guide/graphrag", None, 2, 3)
    assert small.nodes[0].id == "Doc:guide/graphrag" and len(small.nodes) == 3
    assert small.constraints.truncated
    kept = {n.id for n in small.nodes}
    assert all(e.source in kept and e.target in kept for e in small.edges)
    huge = subgraph(corpus, "guide/graphrag", None, 2, 10**9)
    assert huge.constraints.limit == 500 and not huge.constraints.truncated
    assert huge.constraints.notes == [f"limit {10**9} clamped to 500"]
    for bad in (0, -5):
        with pytest.raises(BadRequestError, match="limit"):
            subgraph(corpus, "guide/graphrag", None, 2, bad)


def test_subgraph_unknown_doc_is_empty(corpus: GraphStore) -> None:
    result = subgraph(corpus, "nope", None, 2, 30)
    assert result.nodes == [] and result.edges == []
    assert result.constraints.notes == ["document 'nope' not found"]


def test_path_contract(corpus: GraphStore) -> None:
    data = path(corpus, "GraphRAG", "cypher", 4).model_dump()
    assert data == {
        "path": [
            {
                "id": "Entity:GraphRAG",
                "label": "Entity",
                "name": "GraphRAG",
                "type": "Concept",
                "salience": 1.0,
            },
            {
                "id": "Entity:Neo4j",
                "label": "Entity",
                "name": "Neo4j",
                "type": "Product",
                "salience": 0.9,
            },
            {
                "id": "Entity:Cypher",
                "label": "Entity",
                "name": "Cypher",
                "type": "Language",
                "salience": 0.5,
            },
        ],
        "edges": [
            {
                "source": "Entity:GraphRAG",
                "target": "Entity:Neo4j",
                "type": "RELATED",
                "weight": 0.5,
            },
            {"source": "Entity:Neo4j", "target": "Entity:Cypher", "type": "RELATED", "weight": 0.5},
        ],
        "meta": {"length": 2, "max_length": 4, "found": True, "reason": None, "notes": []},
    }


def test_path_none_is_an_empty_result(corpus: GraphStore) -> None:
    none = path(corpus, "GraphRAG", "STJ", 6)
    assert (none.path, none.edges, none.meta.found, none.meta.length) == ([], [], False, None)
    assert none.meta.reason == "no path of at most 6 edges"
    short = path(corpus, "GraphRAG", "Cypher", 1)
    assert not short.meta.found
    unknown = path(corpus, "GraphRAG", "Kubernetes", 4)
    assert unknown.meta.reason == "unknown entity: Kubernetes"


def test_path_same_entity_and_bounds(corpus: GraphStore) -> None:
    same = path(corpus, "neo4j", "NEO4J", 4)
    assert same.meta.length == 0 and [n.id for n in same.path] == ["Entity:Neo4j"]
    clamped = path(corpus, "GraphRAG", "Cypher", 99)
    assert clamped.meta.max_length == 6 and clamped.meta.notes == ["max_length 99 clamped to 6"]
    with pytest.raises(BadRequestError, match="max_length"):
        path(corpus, "GraphRAG", "Cypher", 0)


def test_path_through_mentions(corpus: GraphStore) -> None:
    found = path(corpus, "Cypher", "GraphRAG", 4, rel_types=("MENTIONS",))
    assert [n.label for n in found.path] == ["Entity", "Chunk", "Entity", "Chunk", "Entity"]
    # directed types keep their stored direction: Chunk -> Entity
    assert all(e.source.startswith("Chunk:") for e in found.edges)


def test_topn_contract_and_ranking(corpus: GraphStore) -> None:
    data = topn(corpus, ["Neo4j"], "guide", None, 5).model_dump()
    assert data["query"] == {"entity_names": ["Neo4j"], "category": "guide", "language": None}
    assert data["meta"] == {"limit": 5, "candidates": 2, "truncated": False, "notes": []}
    first, second = data["items"]
    assert first == {
        "doc_id": "guide/graphrag",
        "title": "GraphRAG intro",
        "updated_at": "2024-05-20T12:00:00Z",
        "score": 1.0,
        "reasons": [  # at most three: the strongest link (+ how many more), date, category
            "mentions entity Neo4j (salience 0.90) (+3 more)",
            "updated 2024-05-20",
            "category match: guide",
        ],
    }
    assert second["updated_at"] == "2021-01-01T00:00:00Z"  # stored as a date, shown as ISO
    # relevance 0.4 + 0.5 * (2/3 * 0.3) = 0.5 against 0.9 + 0.5 * (0.5 + 2/3 * 0.8 + 0.25)
    assert second["doc_id"] == "guide/old"
    assert second["score"] == pytest.approx(
        0.6 * 0.5 / (0.9 + 0.5 * (0.75 + 0.8 * 2 / 3)) + 0.1, abs=1e-4
    )


def test_topn_language_filter_and_portuguese_reasons(corpus: GraphStore) -> None:
    result = topn(corpus, ["stj"], None, "pt", 5, reasons_lang="pt")
    assert [i.doc_id for i in result.items] == ["stj/resp-1", "stj/resp-2"]
    assert result.items[0].reasons[0] == "menciona a entidade STJ (saliência 1.00)"
    assert topn(corpus, ["stj"], None, "en", 5).items == []


def test_topn_language_is_a_code_and_a_bare_code_finds_its_family(corpus: GraphStore) -> None:
    brazil = unit("stj/resp-3#0", "O STJ julgou.", lang="pt-BR", title="REsp 3", date="2021-01-01")
    GraphWriter(corpus).upsert_units([brazil], {"stj/resp-3#0": [_e("STJ", "Organization", 0.5)]})
    found = {
        code: sorted(i.doc_id for i in topn(corpus, ["stj"], None, code, 5).items)
        for code in ("pt", "PT", "pt-BR", "pt_br", "en")
    }
    family = ["stj/resp-1", "stj/resp-2", "stj/resp-3"]
    assert found == {"pt": family, "PT": family, "pt-BR": family[2:], "pt_br": family[2:], "en": []}
    with pytest.raises(BadRequestError, match="'klingon' is not a language code"):
        topn(corpus, ["stj"], None, "klingon", 5)


def test_topn_reasons_follow_the_template_language_not_the_filter(corpus: GraphStore) -> None:
    # pt documents, English template (the default): the filter does not pick the wording
    assert topn(corpus, ["stj"], None, "pt", 5).items[1].reasons == [
        "mentions entity STJ (salience 0.90)",
        "related to STJ via LGPD (weight 0.67)",
        "updated 2022-08-01",
    ]
    zh = topn(corpus, ["STJ", "LGPD"], "decisao", None, 5, reasons_lang="zh").items[0]
    assert zh.reasons == [
        "包含实体 STJ（salience 1.00）（另有 3 项）",
        "最近更新：2023-03-10",
        "分类匹配 decisao",
    ]
    assert topn(corpus, ["stj"], reasons_lang="pt-BR").items[0].reasons[0].startswith("menciona")
    with pytest.raises(BadRequestError, match="template language 'fr'"):
        topn(corpus, ["stj"], reasons_lang="fr")


def test_topn_without_entities_is_by_recency(corpus: GraphStore) -> None:
    result = topn(corpus, None, None, None, 10)
    assert [i.doc_id for i in result.items] == [
        "guide/graphrag",
        "stj/resp-1",
        "stj/resp-2",
        "guide/old",
    ]
    assert result.items[0].score == 0.3 and result.items[-1].score == 0.0
    cat = {i.doc_id: i for i in topn(corpus, [], "decisao", None, 10).items}
    assert cat["stj/resp-1"].reasons == ["updated 2023-03-10", "category match: decisao"]
    assert cat["guide/old"].reasons == ["updated 2021-01-01"]


def test_topn_limits(corpus: GraphStore) -> None:
    one = topn(corpus, ["Neo4j"], None, None, 1)
    assert len(one.items) == 1 and one.meta.truncated and one.meta.candidates == 2
    with pytest.raises(BadRequestError):
        topn(corpus, ["Neo4j"], None, None, 0)
    assert topn(corpus, ["Neo4j"], None, None, 10**6).meta.limit == 500
