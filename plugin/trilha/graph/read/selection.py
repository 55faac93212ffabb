"""Which of the walked nodes and edges a subgraph shows within its ``limit`` (seed 003 §1).

The walk around a document finds more than fits. The nodes shown grow as a tree from the
document (in the manner of Prim's algorithm): a node joins only together with an edge to a node
already shown, so no node is drawn isolated, and among the nodes that can join the next is the
first by :func:`priority`:

1. the document's own classification and curated evidence (Category, Tag, Criterio, Fato, Prova);
2. chunks and entities, the most salient first (an entity by its strongest MENTIONS, a chunk by
   the strongest entity it mentions), so the limit goes to the document's knowledge;
3. anything else (documents sharing a category or tag, work items), nearest first.

``limit`` caps nodes and edges alike. The tree takes one edge per node; up to a third of the
edges are kept for RELATED edges among the shown entities, strongest first (nodes stop joining
when the next one would make the tree eat into that share); what is left of the edge budget
goes to the other edges among the shown nodes, nearest first.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

NodeKey = tuple[str, str]
EdgeKey = tuple[str, NodeKey, NodeKey]
Found = Mapping[NodeKey, tuple[int, dict[str, Any]]]
FoundEdges = Mapping[EdgeKey, tuple[int, dict[str, Any]]]

_TIERS = {"Category": 0, "Tag": 0, "Criterio": 0, "Fato": 0, "Prova": 0, "Chunk": 1, "Entity": 1}


class Shown(NamedTuple):
    """The nodes and edges a subgraph shows, and whether anything walked was left out."""

    nodes: list[NodeKey]
    edges: list[EdgeKey]
    dropped: bool


def strengths(edges: FoundEdges) -> dict[NodeKey, float]:
    """The strongest MENTIONS salience at each end of every MENTIONS edge."""
    out: dict[NodeKey, float] = {}
    for (rel_type, source, target), (_, props) in edges.items():
        if rel_type == "MENTIONS":
            value = float(props.get("salience") or 0.0)
            for end in (source, target):
                out[end] = max(out.get(end, 0.0), value)
    return out


def priority(
    key: NodeKey, dist: int, strength: float, display: str
) -> tuple[int, float, int, str, str]:
    """The order in which nodes that can join the tree join it (smallest first)."""
    return _TIERS.get(key[0], 2), -strength, dist, key[0], display


def select(
    root: NodeKey,
    nodes: Found,
    edges: FoundEdges,
    limit: int,
    display: Callable[[NodeKey], str],
) -> Shown:
    """The nodes (in joining order) and edges shown of the walked ``nodes`` and ``edges``."""
    if root not in nodes:
        return Shown([], [], bool(nodes))
    power, links = strengths(edges), _links(edges)
    reserve = limit // 3
    shown, tree, related, kept = [root], list[EdgeKey](), 0, {root}
    queue: list[tuple[tuple[int, float, int, str, str], tuple[int, str, str], EdgeKey]] = []

    def offer(node: NodeKey) -> None:
        for e in links.get(node, []):
            other = e[2] if e[1] == node else e[1]
            if other not in kept:
                rank = priority(other, nodes[other][0], power.get(other, 0.0), display(other))
                how = (edges[e][0], e[0], display(node))
                heapq.heappush(queue, (rank, how, e))

    offer(root)
    while queue and len(shown) < limit:
        _, _, e = heapq.heappop(queue)
        node = e[2] if e[1] in kept else e[1]
        if node in kept or (node[0] == "Chunk" and len(shown) + 1 == limit):
            continue  # a chunk is shown for its entities: not as the last node
        new_related = sum(1 for r in links.get(node, []) if _related_to(r, node, kept))
        if len(tree) + 1 + min(related + new_related, reserve) > limit:
            break
        shown.append(node)
        kept.add(node)
        tree.append(e)
        related += new_related
        offer(node)
    chosen = _edges(edges, kept, tree, limit)
    among = sum(1 for e in edges if e[1] in kept and e[2] in kept)
    return Shown(shown, chosen, len(shown) < len(nodes) or len(chosen) < among)


def _links(edges: FoundEdges) -> dict[NodeKey, list[EdgeKey]]:
    """The edges at each node."""
    links: dict[NodeKey, list[EdgeKey]] = {}
    for e in edges:
        links.setdefault(e[1], []).append(e)
        links.setdefault(e[2], []).append(e)
    return links


def _related_to(e: EdgeKey, node: NodeKey, kept: set[NodeKey]) -> bool:
    other = e[2] if e[1] == node else e[1]
    return e[0] == "RELATED" and other in kept


def _edges(edges: FoundEdges, kept: set[NodeKey], tree: list[EdgeKey], limit: int) -> list[EdgeKey]:
    """The tree, then RELATED among the shown nodes by weight, then the rest, up to ``limit``."""
    in_tree = set(tree)
    rest = [e for e in edges if e[1] in kept and e[2] in kept and e not in in_tree]
    related = sorted(
        (e for e in rest if e[0] == "RELATED"),
        key=lambda e: (-float(edges[e][1].get("weight") or 0.0), e),
    )
    others = sorted((e for e in rest if e[0] != "RELATED"), key=lambda e: (edges[e][0], e))
    return [*tree, *related, *others][:limit]
