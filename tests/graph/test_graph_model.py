"""The model's pure parts: names, allow-lists, display ids, weights, dialect statements."""

from __future__ import annotations

import pytest

from trilha.errors import ConfigurationError
from trilha.graph.model import (
    EDGE_SPECS,
    NODE_SPECS,
    cooccurrence_weight,
    display_id,
    node_key,
    normalise_name,
)
from trilha.graph.stores.dialect import (
    CYPHER,
    FALKORDB,
    get_dialect,
    index_statement,
)


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("GraphRAG", "graphrag"),
        ("  Superior   Tribunal\nde Justiça ", "superior tribunal de justiça"),
        ("STRASSE", "strasse"),
        ("Straße", "strasse"),
        ("Cafe\u0301", "café"),
        ("", ""),
    ],
)
def test_normalise_name(raw: str, key: str) -> None:
    assert normalise_name(raw) == key


def test_keys_and_display_ids() -> None:
    assert node_key("Entity", "Neo4j") == "neo4j" and node_key("Doc", "A/b") == "A/b"
    assert display_id("Entity", {"id": "neo4j", "name": "Neo4j"}) == "Entity:Neo4j"
    assert display_id("Doc", {"id": "zh/guide/x", "name": "ignored"}) == "Doc:zh/guide/x"


def test_allow_lists_cover_the_seeds() -> None:
    assert {
        "Doc",
        "Chunk",
        "Entity",
        "Category",
        "Tag",
        "Criterio",
        "Fato",
        "Prova",
        "Task",
        "Project",
        "User",
        "Org",
        "Department",
        "Process",
        "DecisionPoint",
        "Purpose",
        "StrategicObjective",
        "OKR",
        "DocSummary",
        "Claim",
        "Memory",
        "RetrievalJob",
    } == set(NODE_SPECS)
    for spec in EDGE_SPECS.values():
        assert spec.sources <= set(NODE_SPECS) and spec.targets <= set(NODE_SPECS)
    assert not EDGE_SPECS["RELATED"].directed


@pytest.mark.parametrize(("n", "w"), [(0, 0.0), (1, 0.5), (2, 2 / 3), (3, 0.75), (9, 0.9)])
def test_cooccurrence_weight(n: int, w: float) -> None:
    assert cooccurrence_weight(n) == pytest.approx(w)


def test_dialect_table() -> None:
    assert index_statement(FALKORDB, "Doc", "id") == "CREATE INDEX FOR (n:Doc) ON (n.id)"
    assert (
        index_statement(CYPHER, "Doc", "id") == "CREATE INDEX IF NOT EXISTS FOR (n:Doc) ON (n.id)"
    )
    assert get_dialect("falkordb") is FALKORDB
    with pytest.raises(ConfigurationError):
        get_dialect("gremlin")
