"""What deserves attention now (seed 004 US3, REQ-RETR-019): priority items and the strategy
they serve, for what a caller may see.

* :func:`priority_items`: every own node marked ``priority_node: true`` (any label) and the open
  Tasks of a high priority, valid today, each with what it BELONGS_TO and ALIGNS_WITH (one hop);
* :func:`strategy_items`: the anchors of a strategy profile (OKR, StrategicObjective, Purpose)
  valid today, with what aligns with them, as :func:`~trilha.graph.read.profile_walk.profile_walk`
  walks them.
"""

from __future__ import annotations

from datetime import date, datetime

from trilha.access import Principal
from trilha.config.profiles import QueryProfile
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
    present,
    profile_walk,
)
from trilha.graph.stores.base import GraphStore
from trilha.graph.visibility import Visibility

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
    """``priority_node`` items and open high-priority Tasks ``principal`` sees, valid on
    ``today`` (expires_at after ``now``), best first (:mod:`~trilha.graph.read.profile_rank`),
    each with its one-hop :data:`PRIORITY_RELS` links."""
    notes: list[str] = []
    limits = Limits.checked(limit, max_nodes_scanned, MAX_LINKS, notes)
    budget = limits.max_nodes_scanned
    vis = Visibility.of(principal)
    query = ProfileQuery(today=today, now=now, priority_only=True)
    params = {**vis.params, **cypher.filter_params(query)}
    statement = cypher.priority_anchors(vis, True)
    rows = store.run(statement, {**params, "scan": budget + 1}, timeout_s=timeout_s)
    found = [(r["label"], present(r["props"])) for r in rows[:budget]]
    walked = Walked(found, len(rows) > budget, ("visibility", "validity", "priority"), notes)
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
