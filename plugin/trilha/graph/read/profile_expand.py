"""The walk from a profile's anchors: breadth-first, one statement per label and level, over
the profile's relationship types only, through nodes the caller sees only.

A walked path keeps one direction: every relationship on it leaves the node before (``out``:
Task → Project → Org) or every one enters it (``in``: OKR ← Task ← a task it depends on);
RELATED, which has no direction, keeps either. So a walk from a task climbs to its project and
its org but does not come back down to every sibling task of the org, and a walk from an OKR
finds what aligns with it. Each level asks only for the neighbours of the nodes the last level
reached (:func:`~trilha.graph.read.profile_statements.neighbours`); the statement admits only
nodes the caller sees (and, when the profile requires it, valid ones), so no path runs through
a node the caller may not see. Then each anchor's links are read off the fetched adjacency by
the same rule, up to ``max_hops``, nearest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from trilha.graph.model import display_id
from trilha.graph.read import path_search
from trilha.graph.read import profile_statements as cypher
from trilha.graph.read.profile_results import ProfileLink
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import Visibility

NodeKey = tuple[str, str]
_BOTH = frozenset({True, False})


@dataclass(frozen=True)
class Step:
    """One relationship from a node: its type, ``out`` (it leaves the node; None: RELATED,
    undirected), the node at its other end and that node's title and status."""

    rel_type: str
    out: bool | None
    other: NodeKey
    title: str | None
    status: str | None


@dataclass
class Walk:
    """The adjacency fetched, how many neighbour rows were read, whether the budget cut it."""

    adjacency: dict[NodeKey, list[Step]] = field(default_factory=dict)
    rows: int = 0
    cut: bool = False


@dataclass(frozen=True)
class WalkSpec:
    """What a walk may follow: relationship types, hops, the validity filter (with the
    parameters of :func:`~trilha.graph.read.profile_statements.filter_params`)."""

    rel_types: tuple[str, ...]
    max_hops: int
    validity: bool
    params: dict[str, Any]


def _next(dirs: frozenset[bool], step: Step) -> frozenset[bool] | None:
    """The directions a path may keep after ``step``; None when ``step`` turns it back."""
    if step.out is None:
        return dirs
    return frozenset({step.out}) if step.out in dirs else None


Frontier = dict[NodeKey, frozenset[bool]]


def _advance(
    frontier: Frontier, walk: Walk, seen: set[tuple[NodeKey, bool]]
) -> list[tuple[NodeKey, Step, frozenset[bool]]]:
    """One level: ``(from, step, directions)`` for each step of the frontier that reaches a
    (node, direction) not ``seen`` yet (``seen`` is updated)."""
    moves = []
    for node, dirs in frontier.items():
        for step in walk.adjacency.get(node, ()):
            kept = _next(dirs, step)
            fresh = frozenset(d for d in kept or () if (step.other, d) not in seen)
            if fresh:
                seen |= {(step.other, d) for d in fresh}
                moves.append((node, step, fresh))
    return moves


def _reached(moves: list[tuple[NodeKey, Step, frozenset[bool]]]) -> Frontier:
    out: Frontier = {}
    for _, step, fresh in moves:
        out[step.other] = out.get(step.other, frozenset()) | fresh
    return out


def expand(
    store: GraphStore,
    roots: Sequence[NodeKey],
    spec: WalkSpec,
    vis: Visibility,
    budget: int,
    timeout_s: float | None = None,
) -> Walk:
    """Fetch the adjacency of every node a one-direction path of fewer than ``spec.max_hops``
    hops reaches from ``roots``, reading at most ``budget`` neighbour rows."""
    walk = Walk()
    frontier: Frontier = dict.fromkeys(roots, _BOTH)
    seen = {(r, d) for r in roots for d in _BOTH}
    for _ in range(spec.max_hops):
        todo = sorted(k for k in frontier if k not in walk.adjacency)
        _fetch(store, todo, spec, vis, walk, budget, timeout_s)
        frontier = _reached(_advance(frontier, walk, seen))
        if walk.cut or not frontier:
            break
    return walk


def _fetch(
    store: GraphStore,
    nodes: list[NodeKey],
    spec: WalkSpec,
    vis: Visibility,
    walk: Walk,
    budget: int,
    timeout_s: float | None,
) -> None:
    """Add the steps of ``nodes`` to ``walk`` (label by label) while the budget lasts."""
    plain = tuple(t for t in spec.rel_types if t != "RELATED")
    for label, group in groupby(nodes, key=lambda k: k[0]):
        ids = [k[1] for k in group]
        for k in ids:
            walk.adjacency.setdefault((label, k), [])
        if plain:
            statement = cypher.neighbours(label, plain, spec.validity, vis)
            _read(
                store,
                statement,
                {**vis.params, **spec.params, "ids": ids},
                walk,
                budget,
                timeout_s,
                label,
            )
        if "RELATED" in spec.rel_types and label == "Entity":
            statement = path_search.neighbours(label, (), True, vis)
            _read(store, statement, {**vis.params, "ids": ids}, walk, budget, timeout_s, label)


def _read(
    store: GraphStore,
    statement: str,
    params: dict[str, Any],
    walk: Walk,
    budget: int,
    timeout_s: float | None,
    label: str,
) -> None:
    left = budget - walk.rows
    if left <= 0:
        walk.cut = True
        return
    rows = store.run(statement, {**params, "cap": left + 1}, timeout_s=timeout_s)
    if len(rows) > left:
        walk.cut, rows = True, rows[:left]
    walk.rows += len(rows)
    for r in rows:
        related = "type" not in r
        step = Step(
            rel_type="RELATED" if related else r["type"],
            out=None if related else bool(r["out"]),
            other=("Entity", r["id"]) if related else (r["label"], r["id"]),
            title=None if related else r.get("title"),
            status=None if related else r.get("status"),
        )
        walk.adjacency[(label, r["src"])].append(step)


def links_from(root: NodeKey, walk: Walk, max_hops: int, max_links: int) -> list[ProfileLink]:
    """The nodes one-direction paths of at most ``max_hops`` reach from ``root`` in ``walk``,
    each once at its shortest distance (ties: first found), nearest first, at most
    ``max_links``."""
    names = {s.other: s.title for steps in walk.adjacency.values() for s in steps}

    def shown(key: NodeKey) -> str:
        return display_id(key[0], {"id": key[1], "name": names.get(key)})

    found: dict[NodeKey, ProfileLink] = {}
    frontier: Frontier = {root: _BOTH}
    seen = {(root, d) for d in _BOTH}
    for hops in range(1, max_hops + 1):
        moves = _advance(frontier, walk, seen)
        for node, step, _ in moves:
            if step.other != root and step.other not in found:
                found[step.other] = ProfileLink(
                    rel_type=step.rel_type,
                    direction="in" if step.out is False else "out",
                    other_id=shown(step.other),
                    other_label=step.other[0],
                    other_title=step.title,
                    other_status=step.status,
                    hops=hops,
                    via=shown(node) if hops > 1 else None,
                )
        frontier = _reached(moves)
    links = sorted(found.values(), key=lambda x: (x.hops, x.rel_type, x.other_id))
    return links[:max_links]
