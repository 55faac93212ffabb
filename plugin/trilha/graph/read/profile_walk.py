"""The graph strategy of seed 004 (REQ-RETR-007, 008, 021…025): a walk driven by a Query
Profile, for what a caller may see.

Anchors are the profile's labels (or the subset the query names) that pass the query's filters
(:class:`~trilha.graph.read.profile_query.ProfileQuery`: terms, owner/org scope, statuses,
overdue, a date window, priority), read by parametrised Cypher
(:mod:`trilha.graph.read.profile_statements`), most recently updated first, at most half of
``max_nodes_scanned`` (rounded up). They are scored (:mod:`trilha.graph.read.profile_rank`);
the best ``limit`` are expanded over the profile's relationship types, up to its ``max_hops``
(:mod:`trilha.graph.read.profile_expand`), with the rest of the budget. ``nodes_scanned``
counts both; ``truncated`` says the budget cut either.

Visibility is a security boundary (REQ-RETR-009/011: every retrieval query respects it), so the
caller's visibility filter runs on every anchor and every node a walk passes, whatever the
profile says: a profile's ``require_rbac`` cannot switch it off, and ``filters_applied`` always
lists ``visibility``. ``require_validity`` adds the temporal filter (valid_from on or before
today, valid_to on or after it, expires_at after now) to the anchors and to every walked node.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from trilha.access import Principal
from trilha.config.profiles import QueryProfile
from trilha.errors import BadRequestError
from trilha.graph.model import display_id
from trilha.graph.read import profile_statements as cypher
from trilha.graph.read.profile_expand import NodeKey, Walk, WalkSpec, expand, links_from
from trilha.graph.read.profile_query import ProfileQuery, fold
from trilha.graph.read.profile_rank import DEFAULT_WEIGHTS, RankWeights, reason, score
from trilha.graph.read.profile_results import ProfileHit, ProfileWalkResult
from trilha.graph.read.profile_texts import AnchorTexts, Candidates
from trilha.graph.read.profile_texts import present as present  # re-exported: claims reads it here
from trilha.graph.read.validation import MAX_LIMIT, bounded
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import SHARED_LABELS, Visibility

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
