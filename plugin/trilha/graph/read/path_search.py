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
from trilha.graph.read.statements import node_map, node_props
from trilha.graph.stores.base import GraphStore, Row, batched
from trilha.graph.visibility import Visibility, visible_weight

NodeKey = tuple[str, str]
#: Frontier ids sent per statement.
BATCH = 5000


def neighbours(label: str, rel_types: Sequence[str], related: bool, vis: Visibility) -> str:
    """Visible neighbours of the ``label`` nodes in ``$ids`` over ``rel_types``, or with
    ``related`` over RELATED (between Entities), as flat columns (a frontier can be thousands
    of rows, and every value costs its reading): ``src``, the neighbour's ``id``, and

    * RELATED: the edge's ``support`` (visible chunks behind it), ``weight`` and ``origin``;
    * other types: the neighbour's ``label``, the edge's ``type``, ``out`` (it leaves ``src``),
      ``weight``, ``salience`` and ``peso``.
    """
    head = f"UNWIND $ids AS k MATCH (a:{check_label(label)} {{id: k}})"
    if related:
        return (
            f"{head}-[r:RELATED]-(b:Entity) WITH a, r, b, {vis.support('r')} AS support "
            "WHERE support > 0 RETURN a.id AS src, b.id AS id, support, r.weight AS weight, "
            "r.origin AS origin"
        )
    types = "|".join(check_rel_type(t) for t in rel_types)
    return (
        f"{head}-[r:{types}]-(b) WHERE {vis.node('b')} RETURN a.id AS src, labels(b)[0] AS label, "
        "b.id AS id, type(r) AS type, startNode(r) = a AS out, r.weight AS weight, "
        "r.salience AS salience, r.peso AS peso"
    )


def visible_entities(vis: Visibility) -> str:
    """``{label, props}`` of the Entities in ``$ids`` linked to an own node ``vis`` sees (a
    visible chunk mentions it, a visible task references it...); the others read as missing.
    (``WITH e`` anchors the walk on the entity index, not on a scan of every node.)"""
    return (
        "UNWIND $ids AS k MATCH (e:Entity {id: k}) WITH e MATCH (e)-[r]-(o) "
        "WHERE type(r) <> 'RELATED' AND "
        f"NOT labels(o)[0] IN $vis_shared AND {vis.own('o')} "
        f"WITH DISTINCT e RETURN {node_map('e', vis)} AS node"
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

    def find(
        self, source: dict[str, Any], target: dict[str, Any], max_length: int
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
        """``(nodes, rels)`` in path order (``{label, props}`` and relationship maps), or None
        when no path of at most ``max_length`` edges is seen."""
        a, b = _Side(("Entity", source["id"])), _Side(("Entity", target["id"]))
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
            key = (row["label"], row["id"])
            if key in side.seen or key in found:
                continue
            parent = (row["from_label"], row["src"])
            found[key] = (parent, _rel(row, parent, key))
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
                fixed = _RELATED if related else {}
                for part in batched(ids, BATCH):
                    params = {**self.vis.params, "ids": list(part)}
                    got = self.store.run(statement, params, timeout_s=self.timeout_s)
                    rows.extend({**r, **fixed, "from_label": label} for r in got)
        return rows

    def _assemble(
        self, a: _Side, b: _Side, meet: NodeKey
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        head, head_rels = a.trail(meet)
        tail, tail_rels = b.trail(meet)
        keys = [*reversed(head), *tail[1:]]
        rels = [*reversed(head_rels), *tail_rels]
        return self._nodes(keys), rels

    def _nodes(self, keys: list[NodeKey]) -> list[dict[str, Any]]:
        """``{label, props}`` of the path's nodes (seen already), in order."""
        props: dict[NodeKey, dict[str, Any]] = {}
        for label in sorted({k[0] for k in keys}):
            ids = [k[1] for k in keys if k[0] == label]
            statement = (
                f"UNWIND $ids AS k MATCH (n:{check_label(label)} {{id: k}}) "
                f"RETURN {node_map('n', self.vis)} AS node"
            )
            params = {**self.vis.params, "ids": ids}
            for r in self.store.run(statement, params, timeout_s=self.timeout_s):
                props[(label, r["node"]["props"]["id"])] = node_props(r["node"])
        return [{"label": k[0], "props": props.get(k, {"id": k[1]})} for k in keys]


#: The columns a RELATED neighbour row implies.
_RELATED = {"label": "Entity", "type": "RELATED", "out": True}


def _rel(row: Row, src: NodeKey, dst: NodeKey) -> dict[str, Any]:
    """The relationship map of a neighbour row (RELATED weighed by its visible support; its
    ends in path order, as it is undirected)."""
    props = {k: row.get(k) for k in ("weight", "salience", "peso")}
    if row["type"] == "RELATED":
        props["weight"] = visible_weight(row, row["support"])
    start, end = (src, dst) if row["out"] else (dst, src)
    return {
        "type": row["type"],
        "s_label": start[0],
        "s_id": start[1],
        "t_label": end[0],
        "t_id": end[1],
        "props": props,
    }


def _order(row: Row) -> tuple[str, str, str]:
    return str(row["src"]), str(row["label"]), str(row["id"])
