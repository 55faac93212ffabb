"""The shortest path a principal may see: a bidirectional breadth-first search, one statement
per level, over the edges the principal sees.

A backend's own shortest-path (``shortestPath``, FalkorDB's ``algo.SPpaths``) cannot skip what
the caller may not see, and filtering its one answer afterwards would miss a longer visible
path or refuse a path that has a visible twin. So each level asks for the visible neighbours of
the frontier (:func:`neighbours`) and the search stops at the first level where the two sides
meet: a path through an invisible node is no path, and no path is ever cut short by one.

An edge is seen when its two ends are: RELATED only when a chunk the principal sees mentions
both entities; any other type always has an own end (:mod:`trilha.graph.visibility`), seen by
its fields, and a shared end next to a seen own node is seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from trilha.graph.model import check_label, check_rel_type
from trilha.graph.read.statements import node_map, rel_map
from trilha.graph.stores.base import GraphStore, Row, batched
from trilha.graph.visibility import Visibility, visible_weight

NodeKey = tuple[str, str]
#: Frontier ids sent per statement.
BATCH = 5000


def neighbours(label: str, rel_types: Sequence[str], related: bool, vis: Visibility) -> str:
    """Visible neighbours of the ``label`` nodes in ``$ids`` over ``rel_types`` (RELATED apart:
    ``related`` asks for RELATED neighbours with their ``support``)."""
    head = f"UNWIND $ids AS k MATCH (a:{check_label(label)} {{id: k}})"
    tail = f"RETURN a.id AS src, {node_map('b')} AS node, {rel_map('r')} AS rel"
    if related:
        return (
            f"{head}-[r:RELATED]-(b:Entity) WITH a, r, b, {vis.support('a', 'b')} AS support "
            f"WHERE support > 0 {tail}, support"
        )
    types = "|".join(check_rel_type(t) for t in rel_types)
    return f"{head}-[r:{types}]-(b) WHERE {vis.node('b')} {tail}, 0 AS support"


def visible_entities(vis: Visibility) -> str:
    """``{label, props}`` of the Entities in ``$ids`` linked to an own node ``vis`` sees (a
    visible chunk mentions it, a visible task references it...); the others read as missing."""
    return (
        "UNWIND $ids AS k MATCH (e:Entity {id: k})-[r]-(o) WHERE type(r) <> 'RELATED' AND "
        f"NOT labels(o)[0] IN $vis_shared AND {vis.own('o')} "
        f"WITH DISTINCT e RETURN {node_map('e')} AS node"
    )


@dataclass
class _Side:
    """One side of the search: what it reached, how, and at what distance."""

    start: NodeKey
    seen: dict[NodeKey, tuple[int, NodeKey | None, dict[str, Any] | None]] = field(
        default_factory=dict
    )
    frontier: list[NodeKey] = field(default_factory=list)
    depth: int = 0

    def __post_init__(self) -> None:
        self.seen[self.start] = (0, None, None)
        self.frontier = [self.start]

    def trail(self, key: NodeKey) -> tuple[list[NodeKey], list[dict[str, Any]]]:
        """Nodes from ``key`` back to the start, and the relationships between them."""
        nodes: list[NodeKey] = [key]
        rels: list[dict[str, Any]] = []
        while True:
            _, parent, rel = self.seen[nodes[-1]]
            if parent is None or rel is None:
                return nodes, rels
            nodes.append(parent)
            rels.append(rel)


class VisiblePathSearch:
    """A shortest undirected path between two entities over the edges ``vis`` sees."""

    def __init__(
        self,
        store: GraphStore,
        vis: Visibility,
        rel_types: Sequence[str],
        timeout_s: float | None = None,
    ) -> None:
        self.store, self.vis, self.timeout_s = store, vis, timeout_s
        self.related = "RELATED" in rel_types
        self.others = [t for t in rel_types if t != "RELATED"]
        self.props: dict[NodeKey, dict[str, Any]] = {}

    def find(
        self, source: dict[str, Any], target: dict[str, Any], max_length: int
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
        """``(nodes, rels)`` in path order (``{label, props}`` and relationship maps), or None
        when no path of at most ``max_length`` edges is seen."""
        a, b = _Side(("Entity", source["id"])), _Side(("Entity", target["id"]))
        self.props.update({a.start: source, b.start: target})
        while a.frontier and b.frontier and a.depth + b.depth < max_length:
            side, other = (a, b) if len(a.frontier) <= len(b.frontier) else (b, a)
            met = self._expand(side, other)
            if met:
                best = min(met, key=lambda k: (a.seen[k][0] + b.seen[k][0], k))
                return self._assemble(a, b, best)
        return None

    def _expand(self, side: _Side, other: _Side) -> list[NodeKey]:
        side.depth += 1
        found: dict[NodeKey, tuple[NodeKey, dict[str, Any]]] = {}
        for row in sorted(self._rows(side.frontier), key=_order):
            node = row["node"]
            key = (node["label"], node["props"]["id"])
            if key in side.seen or key in found:
                continue
            rel = dict(row["rel"])
            if rel["type"] == "RELATED":
                props = rel.get("props") or {}
                rel["props"] = {**props, "weight": visible_weight(props, row["support"])}
            found[key] = ((row["from_label"], row["src"]), rel)
            self.props[key] = node["props"]
        for key, (parent, rel) in found.items():
            side.seen[key] = (side.depth, parent, rel)
        side.frontier = sorted(found)
        return [k for k in side.frontier if k in other.seen]

    def _rows(self, frontier: list[NodeKey]) -> list[Row]:
        by_label: dict[str, list[str]] = {}
        for label, key in frontier:
            by_label.setdefault(label, []).append(key)
        rows: list[Row] = []
        for label, ids in sorted(by_label.items()):
            kinds = [(self.others, False)] if self.others else []
            if self.related and label == "Entity":
                kinds.append(([], True))
            for types, related in kinds:
                statement = neighbours(label, types, related, self.vis)
                for part in batched(ids, BATCH):
                    params = {**self.vis.params, "ids": list(part)}
                    got = self.store.run(statement, params, timeout_s=self.timeout_s)
                    rows.extend({**r, "from_label": label} for r in got)
        return rows

    def _assemble(
        self, a: _Side, b: _Side, meet: NodeKey
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        head, head_rels = a.trail(meet)
        tail, tail_rels = b.trail(meet)
        keys = [*reversed(head), *tail[1:]]
        rels = [*reversed(head_rels), *tail_rels]
        return [{"label": k[0], "props": self.props[k]} for k in keys], rels


def _order(row: Row) -> tuple[str, str, str]:
    node = row["node"]
    return str(row["src"]), str(node["label"]), str(node["props"].get("id"))
