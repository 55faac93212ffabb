"""Shortest path between two entities (seed 003 §2), over what ``principal`` may see.

An invisible entity reads like an unknown one, and a path through an invisible node is no path
(:mod:`trilha.graph.read.path_search`). Arguments are checked by
:mod:`trilha.graph.read.validation`; the result says what it clamped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trilha.access import Principal
from trilha.graph.model import EDGE_SPECS, display_id, normalise_name
from trilha.graph.read.path_search import VisiblePathSearch, visible_entities
from trilha.graph.read.results import (
    GraphEdge,
    PathMeta,
    PathResult,
    to_edge,
    to_node,
)
from trilha.graph.read.statements import node_props
from trilha.graph.read.validation import (
    MAX_PATH_LENGTH,
    bounded,
    rel_type_list,
    text_arg,
)
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import Visibility


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
    ``principal`` sees (:mod:`trilha.graph.read.path_search`).

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
    known = _visible(store, vis, [ks, kt], timeout_s)
    missing = [name for name, key in ((src, ks), (dst, kt)) if key not in known]
    if missing:
        return _empty("unknown entity: " + ", ".join(dict.fromkeys(missing)), length, notes)
    if ks == kt:
        meta = PathMeta(length=0, max_length=length, found=True, notes=notes)
        return PathResult(path=[to_node("Entity", known[ks])], edges=[], meta=meta)
    search = VisiblePathSearch(store, vis, types, timeout_s)
    found = search.find(known[ks], known[kt], length)
    if found is None:
        return _empty(f"no path of at most {length} edges", length, notes)
    nodes, rels = found
    return PathResult(
        path=[to_node(n["label"], n["props"]) for n in nodes],
        edges=_edges(nodes, rels),
        meta=PathMeta(length=len(rels), max_length=length, found=True, notes=notes),
    )


def _visible(
    store: GraphStore, vis: Visibility, keys: list[str], timeout_s: float | None
) -> dict[str, dict[str, Any]]:
    """The props of the entities ``keys`` that ``vis`` sees, by id."""
    rows = store.run(visible_entities(vis), {**vis.params, "ids": keys}, timeout_s=timeout_s)
    return {r["node"]["props"]["id"]: node_props(r["node"]) for r in rows}


def _empty(reason: str, length: int, notes: list[str]) -> PathResult:
    meta = PathMeta(length=None, max_length=length, found=False, reason=reason, notes=notes)
    return PathResult(path=[], edges=[], meta=meta)


def _edges(nodes: list[dict[str, Any]], rels: list[dict[str, Any]]) -> list[GraphEdge]:
    """The path's edges in path order: an undirected type (RELATED) oriented along the path,
    directed types in their stored direction."""
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
    return edges


def _props(nodes: list[dict[str, Any]], rel: dict[str, Any], end: str) -> dict[str, Any]:
    for n in nodes:
        if n["label"] == rel[f"{end}_label"] and n["props"].get("id") == rel[f"{end}_id"]:
            return dict(n["props"])
    return {}
