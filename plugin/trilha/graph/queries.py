"""The three graph retrievals of seed 003: subgraph (≤ 2 hops), shortest path, top-N documents.

Each validates its arguments (:mod:`trilha.graph.validation`), runs parametrised Cypher built by
:mod:`trilha.graph.cypher`, de-duplicates nodes and edges in Python (a cycle can reach a node by
several paths; it is returned once, at its shortest distance), applies the limits and says in
the result what it clamped or cut.

Each reads only what its ``principal`` may see (None: anonymous), inside the statements
(:mod:`trilha.graph.visibility`): an invisible document reads exactly like a missing one, an
invisible entity like an unknown one, and no node, title, entity, edge or path of what the
principal may not see comes back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from trilha.access import Principal
from trilha.graph import cypher
from trilha.graph.model import EDGE_SPECS, KNOWLEDGE_RELS, NODE_SPECS, display_id, normalise_name
from trilha.graph.paths import VisiblePathSearch, visible_entities
from trilha.graph.ranking import DocEvidence, TopNWeights, rank, template_lang
from trilha.graph.results import (
    GraphEdge,
    GraphNode,
    PathMeta,
    PathResult,
    SubgraphConstraints,
    SubgraphQuery,
    SubgraphResult,
    TopNMeta,
    TopNQuery,
    TopNResult,
)
from trilha.graph.selection import EdgeKey, NodeKey, select
from trilha.graph.store import GraphStore
from trilha.graph.validation import (
    MAX_HOPS,
    MAX_LIMIT,
    MAX_PATH_LENGTH,
    bounded,
    rel_type_list,
    text_arg,
)
from trilha.graph.validation import entity_names as check_names
from trilha.graph.visibility import Visibility, visible_weight

_LABEL_ORDER = {label: i for i, label in enumerate(NODE_SPECS)}


def to_node(label: str, props: dict[str, Any]) -> GraphNode:
    """A result node from a label and the stored properties (only the shown ones)."""
    spec = NODE_SPECS.get(label)
    shown = {k: props[k] for k in (spec.shown if spec else ()) if props.get(k) is not None}
    return GraphNode(id=display_id(label, props), label=label, **shown)


def to_edge(rel_type: str, source: str, target: str, props: dict[str, Any]) -> GraphEdge:
    """A result edge between two display ids."""
    return GraphEdge(
        source=source,
        target=target,
        type=rel_type,
        weight=props.get("weight"),
        salience=props.get("salience"),
        peso=props.get("peso"),
    )


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
    caps nodes and edges alike; :func:`trilha.graph.selection.select` spends it on nodes
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
    got = _Collected()
    docs = store.run(
        cypher.visible_nodes("Doc", vis), {**vis.params, "ids": [doc]}, timeout_s=timeout_s
    )
    truncated = False
    if docs:
        got.add_node("Doc", docs[0]["node"]["props"], 0)
    else:
        notes.append(f"document {doc!r} not found")
    if docs and hops > 0:
        shape = (types, hops, bool(keys), vis)
        truncated = _walk(store, got, doc, shape, keys, cap, timeout_s)
        _add_related_among(store, got, vis, timeout_s)
    result = _cut(got, ("Doc", doc), cap)
    return SubgraphResult(
        nodes=result[0],
        edges=result[1],
        constraints=SubgraphConstraints(
            max_hops=hops, limit=cap, truncated=truncated or result[2], notes=notes
        ),
        query=SubgraphQuery(doc_id=doc_id, entity_names=names),
    )


def _walk(
    store: GraphStore,
    got: _Collected,
    doc: str,
    shape: tuple[tuple[str, ...], int, bool, Visibility],
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
        got.add_node(row["node"]["label"], row["node"]["props"] or {}, row["dist"])
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


def path(
    store: GraphStore,
    source_entity: str,
    target_entity: str,
    max_length: int = 4,
    *,
    rel_types: Sequence[str] = ("RELATED",),
    timeout_s: float | None = None,
    principal: Principal | None = None,
) -> PathResult:
    """One shortest undirected path between two entities (seed 003 §2) over what
    ``principal`` sees (:mod:`trilha.graph.paths`).

    No path (or an unknown entity, or one the principal may not see) is an empty result with
    ``meta.found = false`` and a reason. Edges are listed in path order; an undirected type
    (RELATED) is oriented along the path, directed types keep their stored direction.
    """
    vis = Visibility.of(principal)
    notes: list[str] = []
    types = rel_type_list(rel_types)
    length = bounded("max_length", max_length, 1, MAX_PATH_LENGTH, notes)
    src, dst = text_arg("source_entity", source_entity), text_arg("target_entity", target_entity)
    ks, kt = normalise_name(src), normalise_name(dst)
    params = {**vis.params, "ids": [ks, kt]}
    known = {
        r["node"]["props"]["id"]: r["node"]["props"]
        for r in store.run(visible_entities(vis), params, timeout_s=timeout_s)
    }

    def empty(reason: str) -> PathResult:
        return PathResult(
            path=[],
            edges=[],
            meta=PathMeta(length=None, max_length=length, found=False, reason=reason, notes=notes),
        )

    missing = [name for name, key in ((src, ks), (dst, kt)) if key not in known]
    if missing:
        return empty("unknown entity: " + ", ".join(dict.fromkeys(missing)))
    if ks == kt:
        node = to_node("Entity", known[ks])
        meta = PathMeta(length=0, max_length=length, found=True, notes=notes)
        return PathResult(path=[node], edges=[], meta=meta)
    search = VisiblePathSearch(store, vis, types, timeout_s)
    found = search.find(known[ks], known[kt], length)
    if found is None:
        return empty(f"no path of at most {length} edges")
    nodes, rels = found
    shown = [display_id(n["label"], n["props"]) for n in nodes]
    edges = []
    for i, r in enumerate(rels):
        if EDGE_SPECS[r["type"]].directed:
            ends = (
                display_id(r["s_label"], {"id": r["s_id"], **_props(nodes, r, "s")}),
                display_id(r["t_label"], {"id": r["t_id"], **_props(nodes, r, "t")}),
            )
        else:
            ends = (shown[i], shown[i + 1])
        edges.append(to_edge(r["type"], ends[0], ends[1], r["props"] or {}))
    return PathResult(
        path=[to_node(n["label"], n["props"]) for n in nodes],
        edges=edges,
        meta=PathMeta(length=len(rels), max_length=length, found=True, notes=notes),
    )


def _props(nodes: list[dict[str, Any]], rel: dict[str, Any], end: str) -> dict[str, Any]:
    for n in nodes:
        if n["label"] == rel[f"{end}_label"] and n["props"].get("id") == rel[f"{end}_id"]:
            return dict(n["props"])
    return {}


def topn(
    store: GraphStore,
    entity_names: Sequence[str] | None = None,
    category: str | None = None,
    language: str | None = None,
    limit: int = 5,
    *,
    reasons_lang: str = "en",
    weights: TopNWeights | None = None,
    timeout_s: float | None = None,
    principal: Principal | None = None,
) -> TopNResult:
    """Documents ranked by entity relevance, recency and category match (seed 003 §3).

    Candidates: documents whose chunks mention a query entity or an entity RELATED to one;
    without entity names, the most recent documents (and those of ``category``). ``language``
    filters documents; ``category`` earns a bonus; the reasons are written in the template
    language ``reasons_lang`` ('en', 'pt', 'zh'), whatever the documents' language. Only
    documents and chunks ``principal`` sees are candidates, and only RELATED edges a chunk it
    sees supports are reasons (weighted by those chunks).
    """
    vis = Visibility.of(principal)
    template = template_lang(reasons_lang)
    notes: list[str] = []
    cap_items = bounded("limit", limit, 1, MAX_LIMIT, notes)
    names, keys = check_names(entity_names)
    cat = text_arg("category", category) if category is not None else None
    lang = text_arg("language", language).lower() if language is not None else None
    cap = min(max(cap_items * 20, 200), 5_000)
    params: dict[str, Any] = {**vis.params, "keys": keys, "cap": cap, "language": lang}
    found: dict[str, DocEvidence] = {}
    rows_seen = 0
    if keys:
        for statement in (
            cypher.topn_direct(lang is not None, vis),
            cypher.topn_related(lang is not None, vis),
        ):
            rows = store.run(statement, params, timeout_s=timeout_s)
            rows_seen = max(rows_seen, len(rows))
            for r in rows:
                _evidence(found, r)
    else:
        queries = [(cypher.topn_recent(lang is not None, False, vis), params)]
        if cat is not None:
            queries.append(
                (
                    cypher.topn_recent(lang is not None, True, vis),
                    {**params, "category": normalise_name(cat)},
                )
            )
        for statement, p in queries:
            rows = store.run(statement, p, timeout_s=timeout_s)
            rows_seen = max(rows_seen, len(rows))
            for r in rows:
                _evidence(found, r)
    if found:
        for r in store.run(cypher.categories_of(), {"ids": sorted(found)}, timeout_s=timeout_s):
            found[r["doc_id"]].categories[r["category"]] = r["name"] or r["category"]
    items = rank(list(found.values()), normalise_name(cat) if cat else None, template, weights)
    return TopNResult(
        items=items[:cap_items],
        query=TopNQuery(entity_names=names, category=category, language=language),
        meta=TopNMeta(
            limit=cap_items,
            candidates=len(items),
            truncated=rows_seen >= cap or len(items) > cap_items,
            notes=notes,
        ),
    )


def _evidence(found: dict[str, DocEvidence], r: dict[str, Any]) -> None:
    ev = found.setdefault(
        r["doc_id"], DocEvidence(r["doc_id"], r.get("title"), r.get("updated_at"))
    )
    if "via" in r:
        key = (r["entity"], r["via"])
        weight = visible_weight({"origin": r.get("origin"), "weight": r["weight"]}, r["support"])
        value = (float(weight or 0.0), float(r["salience"] or 0.0))
        old = ev.related.get(key)
        if old is None or value[0] * value[1] > old[0] * old[1]:
            ev.related[key] = value
    elif "entity" in r:
        ev.direct[r["entity"]] = max(ev.direct.get(r["entity"], -math.inf), float(r["salience"]))
