"""Subgraph around a document (seed 003 §1): nodes within ≤ 2 hops and the edges among them.

Arguments are checked by :mod:`trilha.graph.read.validation`; the walk runs as parametrised
Cypher (:mod:`trilha.graph.read.statements`) that reads only what ``principal`` may see
(:mod:`trilha.graph.visibility`): an invisible document reads exactly like a missing one, and no
node, title, entity or edge the principal may not see comes back. Nodes reached by several paths
are kept once, at their shortest distance; the result says what it clamped or cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trilha.access import Principal
from trilha.graph.model import KNOWLEDGE_RELS, NODE_SPECS, display_id
from trilha.graph.read import statements as cypher
from trilha.graph.read.results import (
    GraphEdge,
    GraphNode,
    SubgraphConstraints,
    SubgraphQuery,
    SubgraphResult,
    to_edge,
    to_node,
)
from trilha.graph.read.selection import EdgeKey, NodeKey, select
from trilha.graph.read.validation import (
    MAX_HOPS,
    MAX_LIMIT,
    bounded,
    rel_type_list,
    text_arg,
)
from trilha.graph.read.validation import entity_names as check_names
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import Visibility, visible_weight

_LABEL_ORDER = {label: i for i, label in enumerate(NODE_SPECS)}


def _rel_key(r: dict[str, Any]) -> EdgeKey:
    return r["type"], (r["s_label"], r["s_id"]), (r["t_label"], r["t_id"])


class _Collected:
    """Nodes and edges of many paths, each kept once at its shortest distance."""

    def __init__(self) -> None:
        self.nodes: dict[NodeKey, tuple[int, dict[str, Any]]] = {}
        self.edges: dict[EdgeKey, tuple[int, dict[str, Any]]] = {}

    def add_node(self, label: str, props: dict[str, Any], dist: int) -> None:
        key = (label, props.get("id", ""))
        if key not in self.nodes or dist < self.nodes[key][0]:
            self.nodes[key] = (dist, props)

    def add_edge(self, rel: dict[str, Any], dist: int) -> None:
        key = _rel_key(rel)
        if key not in self.edges or dist < self.edges[key][0]:
            self.edges[key] = (dist, rel.get("props") or {})

    def display(self, key: NodeKey) -> str:
        return display_id(key[0], self.nodes[key][1]) if key in self.nodes else f"{key[0]}:{key[1]}"


def subgraph(
    store: GraphStore,
    doc_id: str,
    entity_names: Sequence[str] | None = None,
    max_hops: int = 2,
    limit: int = 30,
    *,
    rel_types: Sequence[str] = KNOWLEDGE_RELS,
    timeout_s: float | None = None,
    principal: Principal | None = None,
) -> SubgraphResult:
    """Nodes within ``max_hops`` of Doc ``doc_id`` and the edges among them (seed 003 §1).

    With entity names, only paths ending at those entities (case-insensitive) are kept. Edges
    are those of the walked paths plus RELATED edges between two walked entities. ``limit``
    caps nodes and edges alike; :func:`trilha.graph.read.selection.select` spends it on nodes
    connected to the document (most salient first) and keeps room for RELATED edges;
    ``constraints.truncated`` says when it cut anything. Nodes are listed nearest first (the Doc
    first; ties by label, then id). Only paths ``principal`` sees in full are walked.
    """
    vis = Visibility.of(principal)
    notes: list[str] = []
    types = rel_type_list(rel_types)
    doc = text_arg("doc_id", doc_id)
    hops = bounded("max_hops", max_hops, 0, MAX_HOPS, notes)
    cap = bounded("limit", limit, 1, MAX_LIMIT, notes)
    names, keys = check_names(entity_names)
    shape = (types, hops, bool(keys), vis)
    got, truncated = _collect(store, doc, shape, keys, cap, timeout_s, notes)
    nodes, edges, cut = _cut(got, ("Doc", doc), cap)
    constraints = SubgraphConstraints(
        max_hops=hops, limit=cap, truncated=truncated or cut, notes=notes
    )
    query = SubgraphQuery(doc_id=doc_id, entity_names=names)
    return SubgraphResult(nodes=nodes, edges=edges, constraints=constraints, query=query)


Shape = tuple[tuple[str, ...], int, bool, Visibility]


def _collect(
    store: GraphStore,
    doc: str,
    shape: Shape,
    keys: list[str],
    cap: int,
    timeout_s: float | None,
    notes: list[str],
) -> tuple[_Collected, bool]:
    """The Doc (when ``shape``'s visibility sees it) and what the walk from it collects;
    True when the walk was cut."""
    vis, got = shape[3], _Collected()
    params = {**vis.params, "ids": [doc]}
    docs = store.run(cypher.visible_nodes("Doc", vis), params, timeout_s=timeout_s)
    if not docs:
        notes.append(f"document {doc!r} not found")
        return got, False
    got.add_node("Doc", cypher.node_props(docs[0]["node"]), 0)
    if shape[1] == 0:
        return got, False
    truncated = _walk(store, got, doc, shape, keys, cap, timeout_s)
    _add_related_among(store, got, vis, timeout_s)
    return got, truncated


def _walk(
    store: GraphStore,
    got: _Collected,
    doc: str,
    shape: Shape,
    keys: list[str],
    cap: int,
    timeout_s: float | None,
) -> bool:
    """Collect candidate nodes and the edges among them; True when the walk was cut.

    Paths are enumerated up to ``path_cap`` (20 × limit, 200–10 000); the nearest ``node_cap``
    (4 × limit + 1) distinct nodes come back (ties by label, then id), leaving the selection
    room to choose from.
    """
    path_cap = min(max(cap * 20, 200), 10_000)
    node_cap = min(cap * 4, path_cap) + 1
    params: dict[str, Any] = {
        **shape[3].params,
        "doc_id": doc,
        "names": keys,
        "path_cap": path_cap,
        "node_cap": node_cap,
    }
    rows = store.run(cypher.subgraph_nodes(*shape), params, timeout_s=timeout_s)
    for row in rows:
        got.add_node(row["node"]["label"], cypher.node_props(row["node"]), row["dist"])
    params["kept"] = [f"{label}:{key}" for label, key in got.nodes]
    for row in store.run(cypher.subgraph_rels(*shape), params, timeout_s=timeout_s):
        got.add_edge(row["rel"], row["dist"])
    return len(rows) >= node_cap or any(row["paths"] >= path_cap for row in rows)


def _add_related_among(
    store: GraphStore, got: _Collected, vis: Visibility, timeout_s: float | None
) -> None:
    """RELATED edges among the walked entities that a visible chunk supports, weighted by the
    visible chunks (:func:`~trilha.graph.visibility.visible_weight`)."""
    entities = sorted(k[1] for k in got.nodes if k[0] == "Entity")
    if len(entities) < 2:
        return
    params = {**vis.params, "ids": entities}
    for row in store.run(cypher.related_among(vis), params, timeout_s=timeout_s):
        props = row["rel"].get("props") or {}
        rel = {**row["rel"], "props": {**props, "weight": visible_weight(props, row["support"])}}
        dist = (
            max(
                got.nodes[(rel["s_label"], rel["s_id"])][0],
                got.nodes[(rel["t_label"], rel["t_id"])][0],
            )
            + 1
        )
        got.add_edge(rel, dist)


def _cut(
    got: _Collected, root: NodeKey, limit: int
) -> tuple[list[GraphNode], list[GraphEdge], bool]:
    shown = select(root, got.nodes, got.edges, limit, got.display)

    def node_order(k: NodeKey) -> tuple[int, int, str]:
        return got.nodes[k][0], _LABEL_ORDER.get(k[0], 99), got.display(k)

    edges = sorted(
        shown.edges,
        key=lambda k: (got.edges[k][0], k[0], got.display(k[1]), got.display(k[2])),
    )
    nodes = [to_node(k[0], got.nodes[k][1]) for k in sorted(shown.nodes, key=node_order)]
    shown_edges = [
        to_edge(k[0], got.display(k[1]), got.display(k[2]), got.edges[k][1]) for k in edges
    ]
    return nodes, shown_edges, shown.dropped
