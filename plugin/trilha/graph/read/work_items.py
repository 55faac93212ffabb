"""What deserves attention now (seed 004 US3, REQ-RETR-019): priority items and the strategy
they serve, for what a caller may see.

* :func:`priority_items`: every own node (any label but Chunk) marked ``priority_node: true`` or
  of a high ``priority``, not closed and valid today, each with what it BELONGS_TO and
  ALIGNS_WITH (one hop);
* :func:`strategy_items`: the anchors of a strategy profile (OKR, StrategicObjective, Purpose)
  valid today, with what aligns with them, as :func:`~trilha.graph.read.profile_walk.profile_walk`
  walks them.
"""

from __future__ import annotations

from datetime import date, datetime

from trilha.access import Principal
from trilha.config.profiles import QueryProfile
from trilha.graph.model import NODE_SPECS
from trilha.graph.read import profile_statements as cypher
from trilha.graph.read.profile_expand import WalkSpec
from trilha.graph.read.profile_query import ProfileQuery
from trilha.graph.read.profile_rank import DEFAULT_WEIGHTS
from trilha.graph.read.profile_results import ProfileWalkResult
from trilha.graph.read.profile_walk import (
    MAX_LINKS,
    Limits,
    Walked,
    finish,
    profile_walk,
    scan,
)
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import OWN_LABELS, Visibility

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
    first (:mod:`~trilha.graph.read.profile_rank`), each with its one-hop
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
