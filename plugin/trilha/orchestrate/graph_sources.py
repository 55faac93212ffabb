"""Graph sources of a plan: the profile walk, the caller's active items, priorities and claims.

Each reads the graph as the request's principal (:mod:`trilha.graph.read.profile_walk`,
:mod:`~trilha.graph.read.profile_reads`), within the config's
``max_nodes_scanned``; a graph that is down or slow is a warning, not an error.

What pre-query found steers the walk (:func:`profile_query`): the focus entities' names (else,
for a question with no work hints, its keywords) match titles and texts; "mine" keeps the
caller's own items, "team" those of the caller's organisations; overdue and explicit statuses
filter work items, and a procedural question's time horizon bounds their due dates.
"""

from __future__ import annotations

from collections.abc import Callable

from trilha.config import MemoryClass, QueryProfile
from trilha.errors import TrilhaError
from trilha.graph.read.profile_query import AnchorTexts, ProfileQuery
from trilha.graph.read.profile_reads import ClaimSearchResult, priority_items, search_claims
from trilha.graph.read.profile_walk import ProfileWalkResult, profile_walk
from trilha.graph.service import GraphService
from trilha.graph.stores.base import GraphStore
from trilha.orchestrate.graph_items import claim_item, node_item
from trilha.orchestrate.sources import Ask, Found

Source = Callable[[Ask], Found]


def for_plan(
    ask: Ask, graph: GraphService | None, texts: AnchorTexts | None = None
) -> list[Source]:
    """The graph reads ``ask``'s plan calls for (the profile walk's term scan narrowed by
    ``texts`` when given); without a graph, one warning instead."""
    plan = ask.plan
    wanted = plan.walks_graph or plan.reads_claims or plan.reads_conversation
    if graph is None:
        note = "no graph (graph_backend 'none'): profile walk, work items and claims skipped"
        return [lambda _: Found("graph", warning=note)] if wanted else []
    store = graph.store
    runs: list[Source] = []
    if plan.reads_conversation:
        runs.append(lambda a: _guarded("active_items", lambda: active_items(a, store)))
    if plan.walks_graph and plan.profile is not None:
        profile = plan.profile
        runs.append(
            lambda a: _guarded(f"graph:{profile.name}", lambda: walk(a, store, profile, texts))
        )
        if ask.pre.retrieval_intent in ask.config.orchestrator.priority_intents:
            runs.append(lambda a: _guarded("priorities", lambda: priorities(a, store)))
    if plan.reads_claims:
        runs.append(lambda a: _guarded("claims", lambda: claims(a, store)))
    return runs


def profile_query(ask: Ask) -> ProfileQuery:
    """What the walk filters on, from pre-query (module docstring)."""
    pre, work = ask.pre, ask.pre.work
    names = tuple(e.name for e in pre.focus_entities if e.name)
    hinted = work.overdue or work.statuses or work.priority or work.ownership != "any"
    horizon = pre.time_horizon
    windowed = pre.retrieval_intent == "procedural" and horizon.name != "all_time"
    return ProfileQuery(
        today=ask.now.date(),
        now=ask.now,
        labels=_anchor_labels(ask),
        terms=names or (() if hinted else pre.keywords),
        owner_ids=(ask.request.user_id,) if work.ownership == "mine" else (),
        org_ids=tuple(ask.principal.org_ids) if work.ownership == "team" else (),
        statuses=work.statuses,
        overdue=work.overdue,
        due_from=horizon.start if windowed else None,
        due_to=horizon.end if windowed else None,
    )


def _anchor_labels(ask: Ask) -> tuple[str, ...]:
    profile = ask.plan.profile
    anchors = profile.anchors if profile is not None else ()
    return tuple(dict.fromkeys(e.label for e in ask.pre.focus_entities if e.label in anchors))


def walk(
    ask: Ask, store: GraphStore, profile: QueryProfile, texts: AnchorTexts | None = None
) -> Found:
    """The profile's walk for the question."""
    result = profile_walk(
        store,
        profile,
        profile_query(ask),
        principal=ask.principal,
        limit=ask.config.orchestrator.graph_limit,
        max_nodes_scanned=ask.config.max_nodes_scanned,
        texts=texts,
    )
    return _walked(f"graph:{profile.name}", result, ask, None)


def active_items(ask: Ask, store: GraphStore) -> Found:
    """The caller's own open work (the working set's "active items")."""
    settings = ask.config.orchestrator
    profile = ask.profiles.profiles[settings.working_set_profile]
    query = ProfileQuery(
        today=ask.now.date(),
        now=ask.now,
        owner_ids=(ask.request.user_id,),
        statuses=settings.active_statuses,
    )
    result = profile_walk(
        store,
        profile,
        query,
        principal=ask.principal,
        limit=settings.graph_limit,
        max_nodes_scanned=ask.config.max_nodes_scanned,
    )
    return _walked("active_items", result, ask, "working_set")


def priorities(ask: Ask, store: GraphStore) -> Found:
    """Items marked ``priority_node`` and high-priority open work (REQ-RETR-019)."""
    result = priority_items(
        store,
        principal=ask.principal,
        today=ask.now.date(),
        now=ask.now,
        limit=ask.config.orchestrator.graph_limit,
        max_nodes_scanned=ask.config.max_nodes_scanned,
    )
    return _walked("priorities", result, ask, None)


def claims(ask: Ask, store: GraphStore) -> Found:
    """Claims holding now that contain the question's keywords (REQ-RETR-030)."""
    terms = tuple(e.name for e in ask.pre.focus_entities if e.name) + ask.pre.keywords
    result: ClaimSearchResult = search_claims(
        store,
        terms,
        principal=ask.principal,
        now=ask.now,
        limit=ask.config.orchestrator.claims_limit,
        max_nodes_scanned=ask.config.max_nodes_scanned,
    )
    found = Found("claims", [claim_item(hit) for hit in result.hits], scanned=result.nodes_scanned)
    found.detail = f"{len(result.hits)} of {result.candidates} matching claims"
    if result.truncated:
        found.warning = "claims: max_nodes_scanned reached; some claims were not read"
    found.filters = ("validity",)
    return found


def _walked(step: str, result: ProfileWalkResult, ask: Ask, klass: MemoryClass | None) -> Found:
    labels = ask.config.orchestrator.procedural_labels
    items = [node_item(hit, labels, klass) for hit in result.hits]
    found = Found(step, items, scanned=result.nodes_scanned, filters=result.filters_applied)
    found.detail = f"{len(items)} of {result.candidates} nodes ({result.profile})"
    if result.truncated or result.warnings:
        found.warning = "; ".join([f"{step}: {w}" for w in result.warnings]) or (
            f"{step}: max_nodes_scanned reached"
        )
    return found


def _guarded(step: str, run: Callable[[], Found]) -> Found:
    try:
        return run()
    except TrilhaError as e:
        return Found(step, warning=f"{step} skipped: the graph did not answer ({e})")
