"""The profile reads of :class:`~trilha.graph.service.GraphService` (seed 004) beyond the
walk itself (:mod:`trilha.graph.read.profile_walk`): priority items, strategy items and claim
search, and :class:`ProfileReads`, which serves all of them cached and logged like the other
reads, keyed by the caller's scope (:class:`~trilha.graph.read.cache.CachedReads`).

What deserves attention now (seed 004 US3, REQ-RETR-019): priority items and the strategy
they serve, for what a caller may see.

* :func:`priority_items`: every own node (any label but Chunk) marked ``priority_node: true`` or
  of a high ``priority``, not closed and valid today, each with what it BELONGS_TO and
  ALIGNS_WITH (one hop);
* :func:`strategy_items`: the anchors of a strategy profile (OKR, StrategicObjective, Purpose)
  valid today, with what aligns with them, as :func:`~trilha.graph.read.profile_walk.profile_walk`
  walks them.

Claim search (seed 004 REQ-RETR-030, the ``claims`` memory class of depth D3).

A :class:`~trilha.graph.model` ``Claim`` states something with a confidence, a source and a
validity. :func:`search_claims` reads the claims the caller sees that hold now (valid_from on or
before today, valid_to on or after it, expires_at after now) and whose text contains one of the
terms (case- and accent-insensitively, :func:`~trilha.graph.read.profile_query.fold`), and
ranks them by ``share of the terms contained × confidence`` (a claim without a confidence
counts :data:`DEFAULT_CONFIDENCE`). Without terms every valid claim matches and the confidence
alone ranks them. Ties: the most recent first, then the id.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trilha.access import Principal
from trilha.config import QueryProfile
from trilha.graph.model import NODE_SPECS, display_id
from trilha.graph.read import profile_query as cypher
from trilha.graph.read.cache import CachedReads
from trilha.graph.read.profile_query import ProfileQuery, fold, present
from trilha.graph.read.profile_walk import (
    DEFAULT_WEIGHTS,
    MAX_LINKS,
    MAX_SCANNED,
    Limits,
    ProfileWalkResult,
    Walked,
    WalkSpec,
    finish,
    profile_walk,
    scan,
    term_overlap,
)
from trilha.graph.read.validation import MAX_LIMIT, bounded
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import OWN_LABELS, Visibility

# --- Priority and strategy items ------------------------------------------------------------------

#: Labels a priority item may have: every own label but Chunk (a chunk's priority is its
#: document's).
PRIORITY_LABELS = tuple(label for label in NODE_SPECS if label in OWN_LABELS - {"Chunk"})
#: Relationships a priority item is shown with.
PRIORITY_RELS = ("BELONGS_TO", "ALIGNS_WITH")


def priority_items(
    store: GraphStore,
    *,
    principal: Principal | None = None,
    today: date,
    now: datetime | None = None,
    limit: int = 10,
    max_nodes_scanned: int = 500,
    timeout_s: float | None = None,
) -> ProfileWalkResult:
    """The priority items ``principal`` sees (module docstring), valid on ``today`` (expires_at
    after ``now``), read label by label (:data:`PRIORITY_LABELS`) within the scan's share of
    ``max_nodes_scanned`` (:attr:`~trilha.graph.read.profile_walk.Limits.scan_share`), best
    first (:func:`~trilha.graph.read.profile_walk.score`), each with its one-hop
    :data:`PRIORITY_RELS` links."""
    notes: list[str] = []
    limits = Limits.checked(limit, max_nodes_scanned, MAX_LINKS, notes)
    vis = Visibility.of(principal)
    query = ProfileQuery(today=today, now=now, priority_only=True)
    params = {**vis.params, **cypher.filter_params(query)}
    filters = ("validity", "priority", "open")
    found, cut = scan(store, PRIORITY_LABELS, filters, vis, params, limits.scan_share, timeout_s)
    walked = Walked(found, cut, ("visibility", *filters), notes)
    spec = WalkSpec(PRIORITY_RELS, 1, True, params)
    return finish(
        store, "priority", walked, query, spec, vis, limits, principal, DEFAULT_WEIGHTS, timeout_s
    )


def strategy_items(
    store: GraphStore,
    profile: QueryProfile,
    *,
    principal: Principal | None = None,
    today: date,
    limit: int = 10,
    max_nodes_scanned: int = 500,
    timeout_s: float | None = None,
) -> ProfileWalkResult:
    """The anchors of the strategy ``profile`` (seed 004's ``strategy_alignment``) that
    ``principal`` sees, unfiltered but for the profile's own validity rule, with their walk."""
    return profile_walk(
        store,
        profile,
        ProfileQuery(today=today),
        principal=principal,
        limit=limit,
        max_nodes_scanned=max_nodes_scanned,
        timeout_s=timeout_s,
    )


# --- Claim search ---------------------------------------------------------------------------------


class ClaimHit(BaseModel):
    """A Claim node (REQ-RETR-030) matching the terms, with its provenance."""

    model_config = ConfigDict(frozen=True)

    node_id: str = Field(description="Display id, 'Claim:<id>'.")
    text: str = Field(description="What the claim states.")
    confidence: float | None = Field(None, description="Its confidence, 0–1.")
    source_ref: str | None = Field(None, description="Where it came from.")
    created_at: str | None = Field(None, description="ISO timestamp of creation.")
    valid_from: str | None = Field(None, description="ISO date it starts to hold.")
    valid_to: str | None = Field(None, description="ISO date it stops holding.")
    expires_at: str | None = Field(None, description="ISO timestamp it goes stale.")
    owner_id: str | None = Field(None, description="Its owner, when it has one.")
    score: float = Field(description="Share of the terms it contains × confidence.")
    entities: tuple[str, ...] = Field((), description="Names of the entities it MENTIONS.")


class ClaimSearchResult(BaseModel):
    """The claims found and what the search cost."""

    model_config = ConfigDict(frozen=True)

    hits: tuple[ClaimHit, ...] = Field(description="Best first, at most ``limit``.")
    candidates: int = Field(description="Claims that matched (before ``limit``).")
    nodes_scanned: int = Field(description="Claim nodes read.")
    truncated: bool = Field(description="The max_nodes_scanned budget cut the reading.")


#: The confidence of a claim that states none.
DEFAULT_CONFIDENCE = 0.5


def search_claims(
    store: GraphStore,
    terms: Sequence[str],
    *,
    principal: Principal | None = None,
    now: datetime,
    limit: int = 10,
    max_nodes_scanned: int = 500,
    timeout_s: float | None = None,
) -> ClaimSearchResult:
    """The claims ``principal`` sees that hold at ``now`` and contain one of ``terms``, best
    first (module docstring), at most ``limit``, having read at most ``max_nodes_scanned``."""
    notes: list[str] = []
    cap = bounded("limit", limit, 1, MAX_LIMIT, notes)
    budget = bounded("max_nodes_scanned", max_nodes_scanned, 1, MAX_SCANNED, notes)
    query = ProfileQuery(today=now.date(), now=now, terms=tuple(terms))
    vis = Visibility.of(principal)
    filters = cypher.query_filters(query, validity=True)
    params = {**vis.params, **cypher.filter_params(query), "scan": budget + 1}
    rows = store.run(cypher.anchors("Claim", filters, vis), params, timeout_s=timeout_s)
    found = [present(r["props"]) for r in rows[:budget]]
    folded = [fold(t) for t in query.terms]
    ranked = sorted(((_score(p, folded), p) for p in found), key=lambda x: str(x[1]["id"]))
    ranked.sort(key=lambda x: str(x[1].get("created_at") or ""), reverse=True)
    ranked.sort(key=lambda x: x[0], reverse=True)
    ranked = ranked[:cap]
    mentions = _mentions(store, [str(p["id"]) for _, p in ranked], timeout_s)
    hits = tuple(_hit(value, p, mentions.get(str(p["id"]), ())) for value, p in ranked)
    return ClaimSearchResult(
        hits=hits, candidates=len(found), nodes_scanned=len(found), truncated=len(rows) > budget
    )


def _score(props: dict[str, Any], terms: Sequence[str]) -> float:
    """Share of ``terms`` contained (1 without terms) × confidence."""
    share = term_overlap(props, terms) if terms else 1.0
    confidence = props.get("confidence")
    weight = float(confidence) if isinstance(confidence, int | float) else DEFAULT_CONFIDENCE
    return share * weight


def _mentions(
    store: GraphStore, ids: list[str], timeout_s: float | None
) -> dict[str, tuple[str, ...]]:
    if not ids:
        return {}
    out: dict[str, list[str]] = {}
    for r in store.run(cypher.claim_mentions(), {"ids": ids}, timeout_s=timeout_s):
        out.setdefault(r["claim"], []).append(str(r["name"]))
    return {k: tuple(v) for k, v in out.items()}


def _hit(value: float, props: dict[str, Any], entities: tuple[str, ...]) -> ClaimHit:
    def text(key: str) -> str | None:
        v = props.get(key)
        return None if v is None else str(v)

    confidence = props.get("confidence")
    return ClaimHit(
        node_id=display_id("Claim", props),
        text=text("text") or "",
        confidence=float(confidence) if isinstance(confidence, int | float) else None,
        source_ref=text("source_ref"),
        created_at=text("created_at"),
        valid_from=text("valid_from"),
        valid_to=text("valid_to"),
        expires_at=text("expires_at"),
        owner_id=text("owner_id"),
        score=round(value, 6),
        entities=entities,
    )


# --- The cached reads of the service --------------------------------------------------------------


class ProfileReads:
    """Cached profile reads over ``store``, through ``_reads``."""

    store: GraphStore
    _reads: CachedReads

    def profile_walk(
        self,
        profile: QueryProfile,
        query: ProfileQuery,
        *,
        limit: int = 10,
        max_nodes_scanned: int = 500,
        principal: Principal | None = None,
    ) -> ProfileWalkResult:
        """:func:`~trilha.graph.read.profile_walk.profile_walk` as ``principal`` sees it,
        cached and logged."""
        args = {
            "profile": profile.model_dump(mode="json"),
            "query": query.model_dump(mode="json"),
            "limit": limit,
            "max_nodes_scanned": max_nodes_scanned,
        }
        return self._reads.call(
            "profile_walk",
            args,
            principal,
            lambda: profile_walk(
                self.store,
                profile,
                query,
                principal=principal,
                limit=limit,
                max_nodes_scanned=max_nodes_scanned,
            ),
            lambda r: len(r.hits),
        )

    def priority_items(
        self,
        *,
        today: date,
        limit: int = 10,
        max_nodes_scanned: int = 500,
        principal: Principal | None = None,
    ) -> ProfileWalkResult:
        """:func:`priority_items` as ``principal`` sees it,
        cached and logged."""
        args = {"today": today.isoformat(), "limit": limit, "max_nodes_scanned": max_nodes_scanned}
        return self._reads.call(
            "priority_items",
            args,
            principal,
            lambda: priority_items(
                self.store,
                principal=principal,
                today=today,
                limit=limit,
                max_nodes_scanned=max_nodes_scanned,
            ),
            lambda r: len(r.hits),
        )

    def search_claims(
        self,
        terms: Sequence[str],
        *,
        now: datetime,
        limit: int = 10,
        max_nodes_scanned: int = 500,
        principal: Principal | None = None,
    ) -> ClaimSearchResult:
        """:func:`search_claims` as ``principal`` sees it, cached
        and logged."""
        args = {
            "terms": list(terms),
            "now": now.isoformat(),
            "limit": limit,
            "max_nodes_scanned": max_nodes_scanned,
        }
        return self._reads.call(
            "search_claims",
            args,
            principal,
            lambda: search_claims(
                self.store,
                terms,
                principal=principal,
                now=now,
                limit=limit,
                max_nodes_scanned=max_nodes_scanned,
            ),
            lambda r: len(r.hits),
        )
