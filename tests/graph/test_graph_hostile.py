"""Hostile input never reaches Cypher text: names are parameters, labels are allow-listed."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.graph.conftest import counts, snapshot, unit
from trilha.errors import BadRequestError
from trilha.graph.boost.score import compute_kg_boost
from trilha.graph.build.extract import ExtractedEntity
from trilha.graph.build.writer import GraphWriter
from trilha.graph.model import check_label, check_prop_name, check_rel_type
from trilha.graph.read.path import path
from trilha.graph.read.subgraph import subgraph
from trilha.graph.read.topn import topn
from trilha.graph.stores.base import GraphStore
from trilha.graph.stores.dialect import CYPHER, index_statement

HOSTILE = [
    "'",
    '"',
    "`",
    "{}",
    "}) MATCH (n) DETACH DELETE n //",
    "x' OR 1=1 --",
    '") RETURN 1 //',
    "`Entity`",
    "e.id} DETACH DELETE e //",
    "$names",
    "\\",
    "a\nb\tc",
    "MATCH (n) RETURN n",
    "Ünïcødé 日本語 🚀",
    "CALL db.labels()",
    "\\' }) DETACH DELETE n //",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_find_nothing_and_change_nothing(corpus: GraphStore, name: str) -> None:
    before = snapshot(corpus)
    assert subgraph(corpus, name, [name], 2, 30).nodes == []
    assert subgraph(corpus, "guide/graphrag", [name], 2, 30).nodes[0].id == "Doc:guide/graphrag"
    assert not path(corpus, name, "Neo4j", 4).meta.found
    assert topn(corpus, [name], name, "pt", 5).items == []
    with pytest.raises(BadRequestError, match="is not a language code"):  # no code at all
        topn(corpus, [name], name, name, 5)
    assert compute_kg_boost(corpus, [name], [name], 5.0).scores == {name: 0.0}
    assert snapshot(corpus) == before


def test_hostile_values_round_trip_through_writes(store: GraphStore) -> None:
    nasty = "}) MATCH (n) DETACH DELETE n // `x` \"q\" 'q' {b} 日本"
    writer = GraphWriter(store)
    u = unit(f"{nasty}#0", "São Paulo 日本 and the STJ.", title=nasty, tags=[nasty], lang="pt")
    found_in_text = [
        ExtractedEntity("São Paulo 日本", "Place", 0.9),
        ExtractedEntity(nasty, "Concept", 0.5),
        ExtractedEntity("STJ", "Org", 0.4),
    ]
    writer.upsert_units([u], {u.unit_id: found_in_text})
    doc = subgraph(store, nasty, None, 1, 30)
    assert doc.nodes[0].title == nasty and doc.query.doc_id == nasty
    assert f"Tag:{nasty}" in {n.id for n in doc.nodes}
    found = path(store, "são paulo 日本", "STJ", 2)
    assert found.meta.found and found.path[0].id == "Entity:São Paulo 日本"
    assert path(store, nasty.upper(), "stj", 2).path[0].name == nasty
    writer.delete_doc(nasty)
    assert counts(store) == {}


@pytest.mark.parametrize(
    "call",
    [
        lambda s: subgraph(s, "", None),
        lambda s: subgraph(s, "   ", None),
        lambda s: subgraph(s, "guide/graphrag", [""]),
        lambda s: subgraph(s, "guide/graphrag", ["Neo4j", "  "]),
        lambda s: subgraph(s, "guide/graphrag", "Neo4j"),
        lambda s: subgraph(s, "guide/graphrag", [123]),
        lambda s: subgraph(s, "a\x00b", None),
        lambda s: subgraph(s, "guide/graphrag", ["x"] * 51),
        lambda s: subgraph(s, "guide/graphrag", ["x" * 301]),
        lambda s: path(s, "", "Neo4j"),
        lambda s: path(s, "Neo4j", "\x00"),
        lambda s: topn(s, [""]),
        lambda s: topn(s, ["Neo4j"], category=""),
        lambda s: topn(s, ["Neo4j"], language=" "),
    ],
)
def test_empty_and_malformed_arguments_are_rejected(corpus: GraphStore, call: object) -> None:
    with pytest.raises(BadRequestError):
        call(corpus)  # type: ignore[operator]


@pytest.mark.parametrize(
    "call",
    [
        lambda s: subgraph(s, "guide/graphrag", None, rel_types=["RELATED]-() DETACH DELETE"]),
        lambda s: path(s, "a", "b", rel_types=["FOO"]),
        lambda s: check_label("Doc) DETACH DELETE (n"),
        lambda s: check_rel_type("related"),
        lambda s: check_prop_name("a`b"),
        lambda s: index_statement(CYPHER, "Doc", "id) DETACH"),
    ],
)
def test_labels_and_types_outside_the_allow_list(corpus: GraphStore, call: object) -> None:
    with pytest.raises(BadRequestError):
        call(corpus)  # type: ignore[operator]


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(names=st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=3))
def test_any_text_is_safe(corpus: GraphStore, names: list[str]) -> None:
    before = counts(corpus)
    for call in (
        lambda: subgraph(corpus, names[0], names, 2, 10),
        lambda: path(corpus, names[0], names[-1], 3),
        lambda: topn(corpus, names, names[0], None, 5),
    ):
        try:
            call()
        except BadRequestError:
            assert any(not n.strip() or "\x00" in n for n in names)
    assert counts(corpus) == before
