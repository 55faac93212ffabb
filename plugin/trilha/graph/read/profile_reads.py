"""The profile reads of :class:`~trilha.graph.service.GraphService` (seed 004): profile walks,
priority items and claim search, each cached and logged like the other reads, keyed by the
caller's scope (:class:`~trilha.graph.read.cache.CachedReads`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime

from trilha.access import Principal
from trilha.config.profiles import QueryProfile
from trilha.graph.read.cache import CachedReads
from trilha.graph.read.claims import search_claims
from trilha.graph.read.profile_query import ProfileQuery
from trilha.graph.read.profile_results import ClaimSearchResult, ProfileWalkResult
from trilha.graph.read.profile_walk import profile_walk
from trilha.graph.read.work_items import priority_items
from trilha.graph.stores.base import GraphStore


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
        """:func:`~trilha.graph.read.work_items.priority_items` as ``principal`` sees it,
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
        """:func:`~trilha.graph.read.claims.search_claims` as ``principal`` sees it, cached
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
