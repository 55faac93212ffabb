"""The graph strategy of seed 004 (REQ-RETR-007, 008, 021…025): a walk driven by a Query
Profile, for what a caller may see.

Anchors are the profile's labels (or the subset the query names) that pass the query's filters
(:class:`~trilha.graph.read.profile_query.ProfileQuery`: terms, owner/org scope, statuses,
overdue, a date window, priority), read by parametrised Cypher
(:mod:`trilha.graph.read.profile_query`), most recently updated first, at most half of
``max_nodes_scanned`` (rounded up). They are scored (:func:`score`); the best ``limit`` are
expanded over the profile's relationship types, up to its ``max_hops`` (:func:`expand`), with
the rest of the budget. ``nodes_scanned`` counts both; ``truncated`` says the budget cut either.

Visibility is a security boundary (REQ-RETR-009/011: every retrieval query respects it), so the
caller's visibility filter runs on every anchor and every node a walk passes, whatever the
profile says (no profile can switch it off; seed 004's ``require_rbac`` is retired), and
``filters_applied`` always lists ``visibility``. ``require_validity`` adds the temporal filter
(valid_from on or before today, valid_to on or after it, expires_at after now) to the anchors and
to every walked node.

The score is a pure function of a node's props:

    score = 1
          + w_terms     × (share of the query terms its title, name or text contains)
          + w_overdue   × (1 if it is overdue)
          + w_priority  × (1 if it is a priority)
          + w_recency   × 1 / (1 + days since updated_at, else created_at, / recency_days)
          + w_connected × (1 if the caller owns it, ½ if it is in one of the caller's orgs)

The last term is REQ-RETR-008's preference for what connects to the user or their startup.
Overdue and priority read as the walk's Cypher filters do, so a hit kept by a filter also earns
its bonus.

The expansion is breadth-first, one statement per label and level, over the profile's
relationship types only, through nodes the caller sees only. A walked path keeps one direction:
every relationship on it leaves the node before (``out``: Task → Project → Org) or every one
enters it (``in``: OKR ← Task ← a task it depends on); RELATED, which has no direction, keeps
either. So a walk from a task climbs to its project and its org but does not come back down to
every sibling task of the org, and a walk from an OKR finds what aligns with it. Each level asks
only for the neighbours of the nodes the last level reached
(:func:`~trilha.graph.read.profile_query.neighbours`); the statement admits only nodes the
caller sees (and, when the profile requires it, valid ones), so no path runs through a node the
caller may not see. Then each anchor's links are read off the fetched adjacency by the same
rule, up to ``max_hops``, nearest first.

In the results ids are display ids (``'Task:t-ropa'``, :func:`~trilha.graph.model.display_id`);
``props`` holds only the properties a node has (never its access summary). Limits are reported:
``nodes_scanned`` counts the nodes read (anchors and neighbours), ``truncated`` says the
``max_nodes_scanned`` budget cut the reading, ``warnings`` say what else was cut or skipped.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from itertools import groupby
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trilha.access import Principal
from trilha.config import QueryProfile
from trilha.errors import BadRequestError
from trilha.graph.model import PropValue, display_id
from trilha.graph.read import path_search
from trilha.graph.read import profile_query as cypher
from trilha.graph.read.profile_query import (
    CLOSED_STATUSES,
    HIGH_PRIORITIES,
    LATE_STATUSES,
    AnchorTexts,
    Candidates,
    ProfileQuery,
    fold,
    present,
)
from trilha.graph.read.validation import MAX_LIMIT, bounded
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import SHARED_LABELS, Visibility

# --- What a walk returns --------------------------------------------------------------------------


class ProfileLink(BaseModel):
    """A node reached from a hit by the walk, and the last relationship on the way."""

    model_config = ConfigDict(frozen=True)

    rel_type: str = Field(description="Type of the relationship that reached the node.")
    direction: Literal["out", "in"] = Field(
        description="'out': the relationship leaves ``via`` (or the hit); 'in': it enters it."
    )
    other_id: str = Field(description="Display id of the node reached, e.g. 'Project:p-lgpd'.")
    other_label: str = Field(description="Its label.")
    other_title: str | None = Field(None, description="Its title, name or text.")
    other_status: str | None = Field(None, description="Its status, when it has one.")
    hops: int = Field(ge=1, description="Relationships from the hit to it.")
    via: str | None = Field(None, description="Display id of the node before it (hops > 1).")


class ProfileHit(BaseModel):
    """An anchor that passed the filters, its score and what the walk reached from it."""

    model_config = ConfigDict(frozen=True)

    node_id: str = Field(description="Display id, e.g. 'Task:t-ropa'.")
    label: str = Field(description="Node label.")
    props: dict[str, PropValue] = Field(
        description="Its id, title/name/text, status, dates, owner, validity and provenance."
    )
    score: float = Field(description="Ranking score (:func:`score`).")
    links: tuple[ProfileLink, ...] = Field((), description="Nodes reached, nearest first.")
    reason: str = Field(description="Why it is here, e.g. 'late Task of Project:p-lgpd'.")


class ProfileWalkResult(BaseModel):
    """What a profile walk returned and what it cost."""

    model_config = ConfigDict(frozen=True)

    profile: str = Field(description="Name of the Query Profile walked.")
    hits: tuple[ProfileHit, ...] = Field(description="Best first, at most ``limit``.")
    candidates: int = Field(description="Anchors that passed the filters (before ``limit``).")
    nodes_scanned: int = Field(description="Nodes read: anchors plus neighbours.")
    truncated: bool = Field(description="The max_nodes_scanned budget cut the reading.")
    filters_applied: tuple[str, ...] = Field(
        description="Filters run: visibility, validity, scope, status, overdue, due_from, "
        "due_to, priority, terms."
    )
    warnings: tuple[str, ...] = Field((), description="What was cut or skipped, one line each.")


# --- How a hit is scored and explained ------------------------------------------------------------


@dataclass(frozen=True)
class RankWeights:
    """The weights of the score (module docstring)."""

    terms: float = 1.0
    overdue: float = 0.5
    priority: float = 0.5
    recency: float = 0.25
    connected: float = 0.5
    recency_days: float = 30.0


#: The weights used unless a caller gives others.
DEFAULT_WEIGHTS = RankWeights()


def _text(props: Mapping[str, Any], key: str) -> str:
    value = props.get(key)
    return "" if value is None else str(value)


def term_overlap(props: Mapping[str, Any], terms: Sequence[str]) -> float:
    """Share of ``terms`` (folded, :func:`~trilha.graph.read.profile_query.fold`) that the
    node's folded title, name or text contains; 0 without terms."""
    if not terms:
        return 0.0
    text = fold(" ".join(_text(props, k) for k in ("title", "name", "text")))
    return sum(t in text for t in terms) / len(terms)


def status_of(props: Mapping[str, Any]) -> str:
    """The node's status, lower-cased ('' when none)."""
    return _text(props, "status").lower()


def is_overdue(props: Mapping[str, Any], today: date) -> bool:
    """A late status, or a due date before ``today`` on work that is not closed."""
    status = status_of(props)
    due = _text(props, "due_date")
    return status in LATE_STATUSES or (
        bool(due) and due < today.isoformat() and status not in CLOSED_STATUSES
    )


def is_priority(props: Mapping[str, Any]) -> bool:
    """``priority_node`` is true, or ``priority`` is one of the high ones."""
    return props.get("priority_node") is True or _text(props, "priority").lower() in (
        HIGH_PRIORITIES
    )


def _day(value: str) -> date | None:
    try:
        return datetime.fromisoformat(value.strip()).date()
    except ValueError:
        return None


def recency(props: Mapping[str, Any], today: date, days: float) -> float:
    """``1 / (1 + age / days)`` where age is the days since updated_at (else created_at); a
    future date counts as today; 0 without a readable date."""
    when = _day(_text(props, "updated_at") or _text(props, "created_at"))
    if when is None:
        return 0.0
    return 1.0 / (1.0 + max((today - when).days, 0) / days)


def connection(props: Mapping[str, Any], principal: Principal | None) -> float:
    """1 when the caller owns the node, 0.5 when it is in one of the caller's orgs, else 0."""
    if principal is None:
        return 0.0
    if principal.user_id is not None and props.get("owner_id") == principal.user_id:
        return 1.0
    return 0.5 if props.get("org_id") in principal.org_ids else 0.0


def score(
    props: Mapping[str, Any],
    terms: Sequence[str],
    today: date,
    principal: Principal | None,
    weights: RankWeights = DEFAULT_WEIGHTS,
) -> float:
    """The score of a hit (module docstring)."""
    return (
        1.0
        + weights.terms * term_overlap(props, terms)
        + weights.overdue * is_overdue(props, today)
        + weights.priority * is_priority(props)
        + weights.recency * recency(props, today, weights.recency_days)
        + weights.connected * connection(props, principal)
    )


def _first_out(links: Sequence[ProfileLink], rel_type: str) -> str | None:
    return next(
        (
            x.other_id
            for x in links
            if x.rel_type == rel_type and x.hops == 1 and x.direction == "out"
        ),
        None,
    )


def reason(label: str, props: Mapping[str, Any], links: Sequence[ProfileLink], today: date) -> str:
    """``'late priority Task of Project:p-lgpd'``: what it is, the first node it BELONGS_TO,
    the first aim it ALIGNS_WITH, and how many items align with it (one hop each)."""
    flags = (("late", is_overdue(props, today)), ("priority", is_priority(props)))
    parts = [" ".join([*(word for word, on in flags if on), label])]
    owner, aim = _first_out(links, "BELONGS_TO"), _first_out(links, "ALIGNS_WITH")
    parts += [f"of {owner}"] if owner else []
    parts += [f"aligned with {aim}"] if aim else []
    backing = sum(
        x.rel_type == "ALIGNS_WITH" and x.hops == 1 and x.direction == "in" for x in links
    )
    parts += [f"with {backing} aligned item{'s' if backing > 1 else ''}"] if backing else []
    return " ".join(parts)


# --- The expansion from the best anchors ----------------------------------------------------------

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
    parameters of :func:`~trilha.graph.read.profile_query.filter_params`)."""

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


# --- The walk: scan, score, expand ----------------------------------------------------------------

#: The largest ``max_nodes_scanned`` a walk accepts (larger values are clamped, noted).
MAX_SCANNED = 100_000
#: Links kept per hit by default.
MAX_LINKS = 12

Anchor = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Limits:
    """How much a walk returns and reads: hits, nodes read (anchors and neighbours), links a
    hit keeps."""

    limit: int
    max_nodes_scanned: int
    max_links: int

    @classmethod
    def checked(
        cls, limit: int, max_nodes_scanned: int, max_links: int, notes: list[str]
    ) -> Limits:
        """The limits as ints in range (:func:`~trilha.graph.read.validation.bounded`)."""
        return cls(
            bounded("limit", limit, 1, MAX_LIMIT, notes),
            bounded("max_nodes_scanned", max_nodes_scanned, 1, MAX_SCANNED, notes),
            bounded("max_links", max_links, 0, MAX_LIMIT, notes),
        )

    @property
    def scan_share(self) -> int:
        """What the anchor scan may read: half the budget, rounded up (the walk gets the
        rest, and whatever the scan left)."""
        return self.max_nodes_scanned - self.max_nodes_scanned // 2


@dataclass
class Walked:
    """What a walk is made of: its anchors (``cut``: the budget cut their scan), the filters
    they passed, and the notes so far."""

    anchors: list[Anchor]
    cut: bool
    filters: tuple[str, ...]
    notes: list[str]


def profile_walk(
    store: GraphStore,
    profile: QueryProfile,
    query: ProfileQuery,
    *,
    principal: Principal | None = None,
    limit: int = 10,
    max_nodes_scanned: int = 500,
    max_links: int = MAX_LINKS,
    weights: RankWeights = DEFAULT_WEIGHTS,
    timeout_s: float | None = None,
    texts: AnchorTexts | None = None,
) -> ProfileWalkResult:
    """The best ``limit`` anchors of ``profile`` passing ``query``'s filters, with the nodes
    the walk reaches from each (module docstring); only what ``principal`` sees. With
    ``texts``, a scan with terms reads only the nodes whose text holds one (same result)."""
    notes: list[str] = []
    limits = Limits.checked(limit, max_nodes_scanned, max_links, notes)
    labels = anchor_labels(profile, query.labels, notes)
    vis = Visibility.of(principal)
    filters = cypher.query_filters(query, profile.require_validity)
    params = {**vis.params, **cypher.filter_params(query)}
    among = _narrowing(store, texts, labels, params["f_terms"], timeout_s) if query.terms else {}
    found, cut = scan(store, labels, filters, vis, params, limits.scan_share, timeout_s, among)
    spec = WalkSpec(profile.allowed_rels, profile.max_hops, profile.require_validity, params)
    walked = Walked(found, cut, ("visibility", *filters), notes)
    return finish(
        store, profile.name, walked, query, spec, vis, limits, principal, weights, timeout_s
    )


def anchor_labels(profile: QueryProfile, wanted: Sequence[str], notes: list[str]) -> list[str]:
    """The labels to start from: ``wanted`` (each one of the profile's anchors), else all the
    anchors; shared labels (seen only through what links to them) are skipped, noted."""
    for label in wanted:
        if label not in profile.anchors:
            raise BadRequestError(
                f"labels: {label!r} is not an anchor of profile {profile.name!r} "
                f"(anchors: {', '.join(profile.anchors)})"
            )
    labels = list(dict.fromkeys(wanted or profile.anchors))
    for label in labels:
        if label in SHARED_LABELS:
            notes.append(f"anchor {label} skipped: it is seen only through what links to it")
    return [label for label in labels if label not in SHARED_LABELS]


def scan(
    store: GraphStore,
    labels: Sequence[str],
    filters: Sequence[str],
    vis: Visibility,
    params: dict[str, Any],
    budget: int,
    timeout_s: float | None,
    among: Mapping[str, Candidates] | None = None,
) -> tuple[list[Anchor], bool]:
    """The anchors of ``labels`` passing ``filters``, label by label, at most ``budget`` in
    all (a label in ``among`` by :func:`_narrowed_scan`); True when the budget cut the scan."""
    found: list[Anchor] = []
    for label in labels:
        left = budget - len(found)
        if left <= 0:
            return found, True
        narrowed = (among or {}).get(label)
        if narrowed is not None:
            found += _narrowed_scan(store, label, filters, vis, params, left, narrowed, timeout_s)
            if len(found) > budget:
                return found[:budget], True
            continue
        rows = store.run(
            cypher.anchors(label, filters, vis), {**params, "scan": left + 1}, timeout_s=timeout_s
        )
        found += [(label, present(r["props"])) for r in rows[:left]]
        if len(rows) > left:
            return found, True
    return found, False


def _narrowing(
    store: GraphStore,
    texts: AnchorTexts | None,
    labels: Sequence[str],
    terms: Sequence[str],
    timeout_s: float | None,
) -> dict[str, Candidates]:
    """The nodes of each label whose text holds one of ``terms``, by ``texts`` (a label it
    cannot narrow is left out: its scan reads every node)."""
    if texts is None:
        return {}
    out = {label: texts.candidates(store, label, terms, timeout_s) for label in labels}
    return {label: found for label, found in out.items() if found is not None}


def _narrowed_scan(
    store: GraphStore,
    label: str,
    filters: Sequence[str],
    vis: Visibility,
    params: dict[str, Any],
    left: int,
    candidates: Candidates,
    timeout_s: float | None,
) -> list[Anchor]:
    """What :func:`scan` reads of ``label`` (``left + 1`` at most, so a cut shows), with the
    terms filter answered by ``candidates``: the store keeps those the caller sees that pass
    the other filters, in the scan's order; their props come with the candidates."""
    if not candidates.ids:
        return []
    rows = store.run(
        cypher.anchor_ids(label, filters, vis),
        {**params, "scan": left + 1, "f_ids": candidates.ids},
        timeout_s=timeout_s,
    )
    return [(label, dict(candidates.props[r["id"]])) for r in rows]


def finish(
    store: GraphStore,
    name: str,
    walked: Walked,
    query: ProfileQuery,
    spec: WalkSpec,
    vis: Visibility,
    limits: Limits,
    principal: Principal | None,
    weights: RankWeights,
    timeout_s: float | None,
) -> ProfileWalkResult:
    """Score the anchors, walk from the best ``limits.limit`` with the budget the scan left,
    and report what it read and cut."""
    scored = best(walked.anchors, query, principal, weights, limits.limit)
    roots = [(label, str(p["id"])) for _, label, p in scored]
    left = limits.max_nodes_scanned - len(walked.anchors)
    walk = expand(store, roots, spec, vis, left, timeout_s) if roots else Walk()
    hits = [
        _hit(entry, root, walk, spec.max_hops, limits.max_links, query.today)
        for entry, root in zip(scored, roots, strict=True)
    ]
    truncated = walked.cut or walk.cut
    cut = f"max_nodes_scanned {limits.max_nodes_scanned} reached; more nodes may match"
    return ProfileWalkResult(
        profile=name,
        hits=tuple(hits),
        candidates=len(walked.anchors),
        nodes_scanned=len(walked.anchors) + walk.rows,
        truncated=truncated,
        filters_applied=walked.filters,
        warnings=(*walked.notes, *([cut] if truncated else [])),
    )


def best(
    anchors: Sequence[Anchor],
    query: ProfileQuery,
    principal: Principal | None,
    weights: RankWeights,
    limit: int,
) -> list[tuple[float, str, dict[str, Any]]]:
    """The ``limit`` best-scored anchors, best first (ties: by display id), as
    ``sorted(...)[:limit]`` would give them, without sorting every anchor."""
    terms = [fold(t) for t in query.terms]
    return heapq.nsmallest(
        limit,
        ((score(p, terms, query.today, principal, weights), label, p) for label, p in anchors),
        key=lambda x: (-x[0], display_id(x[1], x[2])),
    )


def _hit(
    entry: tuple[float, str, dict[str, Any]],
    root: NodeKey,
    walk: Walk,
    max_hops: int,
    max_links: int,
    today: date,
) -> ProfileHit:
    """The hit of a scored anchor, with its links in ``walk`` and its reason."""
    value, label, props = entry
    links = links_from(root, walk, max_hops, max_links)
    return ProfileHit(
        node_id=display_id(label, props),
        label=label,
        props=props,
        score=round(value, 6),
        links=tuple(links),
        reason=reason(label, props, links, today),
    )
