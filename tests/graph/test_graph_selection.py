"""What a limited subgraph shows: a tree from the document, salient first, room for RELATED."""

from __future__ import annotations

from typing import Any

from trilha.graph.build.extract import ExtractedEntity
from trilha.graph.build.writer import GraphWriter
from trilha.graph.read.selection import EdgeKey, NodeKey, select
from trilha.graph.read.subgraph import subgraph
from trilha.graph.stores.base import GraphStore
from trilha.types import TextUnit

D, D2, K = ("Doc", "d"), ("Doc", "d2"), ("Category", "k")
C1, C2 = ("Chunk", "d#1"), ("Chunk", "d#2")
E1, E2, E3 = ("Entity", "e1"), ("Entity", "e2"), ("Entity", "e3")
NODES: dict[NodeKey, tuple[int, dict[str, Any]]] = {
    D: (0, {}),
    K: (1, {}),
    C1: (1, {}),
    C2: (1, {}),
    E1: (2, {}),
    E2: (2, {}),
    E3: (2, {}),
    D2: (2, {}),
}
EDGES: dict[EdgeKey, tuple[int, dict[str, Any]]] = {
    ("IN_CATEGORY", D, K): (1, {}),
    ("IN_CATEGORY", D2, K): (2, {}),
    ("PART_OF", C1, D): (1, {}),
    ("PART_OF", C2, D): (1, {}),
    ("MENTIONS", C1, E1): (2, {"salience": 0.9}),
    ("MENTIONS", C1, E2): (2, {"salience": 0.5}),
    ("MENTIONS", C2, E3): (2, {"salience": 0.2}),
    ("RELATED", E1, E2): (3, {"weight": 0.7}),
    ("RELATED", E1, E3): (3, {"weight": 0.3}),
}


def shown(limit: int) -> tuple[list[NodeKey], list[EdgeKey], bool]:
    return tuple(select(D, NODES, EDGES, limit, lambda k: k[1]))  # type: ignore[return-value]


def test_nodes_join_with_an_edge_classification_then_most_salient() -> None:
    nodes, edges, dropped = shown(4)
    assert nodes == [D, K, C1, E1] and dropped
    assert edges == [("IN_CATEGORY", D, K), ("PART_OF", C1, D), ("MENTIONS", C1, E1)]


def test_room_is_kept_for_related_edges_and_a_chunk_is_never_last() -> None:
    # E3 (through RELATED e1–e3) would leave 6 - 5 tree edges = 1 place for 2 RELATED edges
    nodes, edges, dropped = shown(6)
    assert nodes == [D, K, C1, E1, E2] and dropped
    assert edges[-1] == ("RELATED", E1, E2) and len(edges) == 5
    # at 5, C2 would be the last node (its entity could not follow it): the sibling joins
    assert shown(5)[0] == [D, K, C1, E1, E2]
    assert shown(8)[0] == [D, K, C1, E1, E2, C2, E3]  # D2 would leave no room for RELATED


def test_everything_fits() -> None:
    nodes, edges, dropped = shown(30)
    assert set(nodes) == set(NODES) and set(edges) == set(EDGES) and not dropped


def test_the_limit_buys_connected_knowledge_not_sibling_documents(store: GraphStore) -> None:
    # one document with 4 chunks of 3 entities each, in a category with 6 other documents
    units = [
        TextUnit(unit_id=f"big#{i}", doc_id="big", text=f"part {i}", ordinal=i, tema="k")
        for i in range(4)
    ] + [TextUnit(unit_id=f"s{i}#0", doc_id=f"s{i}", text="x", tema="k") for i in range(6)]
    entities = {
        f"big#{i}": [ExtractedEntity(f"E{i}{j}", "Concept", 0.9 - 0.2 * j) for j in range(3)]
        for i in range(4)
    }
    GraphWriter(store).upsert_units(units, entities)
    result = subgraph(store, "big", None, 2, 12)
    ids = [n.id for n in result.nodes]
    ends = {e.source for e in result.edges} | {e.target for e in result.edges}
    assert len(ids) <= 12 and len(result.edges) <= 12 and result.constraints.truncated
    assert set(ids[1:]) <= ends  # nothing isolated
    assert not any(i.startswith("Doc:s") for i in ids)  # no sibling documents
    assert sum(i.startswith("Entity:") for i in ids) >= 4
    assert any(e.type == "RELATED" for e in result.edges)
