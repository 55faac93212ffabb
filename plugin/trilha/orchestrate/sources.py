"""The sources a plan reads, each returning :class:`Found` items: conversation memory, past
retrievals and document units. (Graph sources are in :mod:`trilha.orchestrate.graph_sources`.)

Every read is made for the request's principal: memory and past jobs are the caller's own
(read by ``user_id``), document units go through the searcher's compiled visibility policy.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from trilha.access import Principal
from trilha.config import ProfileSet, RetrievalConfig
from trilha.errors import TrilhaError
from trilha.memory.jobs import JobLog
from trilha.memory.store import MemoryStore
from trilha.orchestrate.bundle import ContextItem
from trilha.orchestrate.items import hit_item, job_item, turn_item
from trilha.orchestrate.plan import RetrievalPlan
from trilha.orchestrate.prequery.model import PreQuery
from trilha.orchestrate.request import RetrievalRequest
from trilha.request import SearchRequest
from trilha.types import Side
from trilha.workspace import Workspace


@dataclass(frozen=True)
class Ask:
    """What every source is given: the request, its principal, pre-query, plan and config."""

    request: RetrievalRequest
    principal: Principal
    pre: PreQuery
    plan: RetrievalPlan
    config: RetrievalConfig
    now: datetime
    profiles: ProfileSet
    agent_style: str | None = None
    warnings: tuple[str, ...] = ()  # said in the bundle's trace, before the sources' own


@dataclass
class Found:
    """What one source returned, with what it scanned and any degradation."""

    step: str
    items: list[ContextItem] = field(default_factory=list)
    scanned: int = 0
    detail: str | None = None
    warning: str | None = None
    latency_ms: float = 0.0
    filters: tuple[str, ...] = ()


def conversation(ask: Ask, memory: MemoryStore) -> Found:
    """This conversation's turns (working set, unless the plan resets) and the caller's earlier
    turns (episodic, when the plan reads them), within the memory share of the budget."""
    found = Found("memory")
    budget = max(1, int(ask.plan.max_tokens * ask.config.orchestrator.memory_share))
    recent = memory.get_recent_context(
        ask.request.user_id,
        project_id=ask.request.project_id,
        conversation_id=ask.request.conversation_id,
        max_tokens=budget,
    )
    if ask.plan.reads_conversation:
        found.items += [
            turn_item(t, "working_set", 1.0 - i / 100) for i, t in enumerate(recent.working_set)
        ]
    if ask.plan.reads_episodic:
        found.items += [
            turn_item(t, "episodic", 1.0 - i / 100) for i, t in enumerate(recent.episodic)
        ]
    found.scanned = len(found.items) + recent.dropped
    found.detail = f"{len(found.items)} turns ({recent.dropped} left out for the memory budget)"
    return found


def past_jobs(ask: Ask, jobs: JobLog) -> Found:
    """The caller's latest retrievals (episodic memory, REQ-RETR-020's patterns in small)."""
    limit = ask.config.orchestrator.recent_jobs
    recent = jobs.recent(ask.request.user_id, limit) if limit else []
    items = [job_item(job, 0.5 - i / 100) for i, job in enumerate(recent)]
    return Found("jobs", items, scanned=len(items), detail=f"{len(items)} earlier retrievals")


def documents(ask: Ask, workspace: Workspace) -> Found:
    """Document units for the question, by the plan's strategy (see :func:`search_request`)."""
    settings = ask.config.orchestrator
    request, note = search_request(ask, workspace.settings.reranker_model is not None)
    found = Found("semantic", warning=note)
    try:
        result = workspace.search(request)
    except TrilhaError as e:
        found.warning = f"document search failed ({e}); no document units"
        return found
    top = max((hit.score for hit in result.hits), default=0.0)
    found.items = [
        hit_item(hit, top_score=top, markers=settings.procedural_markers, source=ask.plan.strategy)
        for hit in result.hits
    ]
    found.scanned = result.trace.bm25_hits + result.trace.ann_hits
    found.detail = f"{len(found.items)} units by {ask.plan.strategy} ({', '.join(request.sides)})"
    found.warning = "; ".join(filter(None, [note, *result.trace.warnings])) or None
    return found


def search_request(ask: Ask, reranker_configured: bool) -> tuple[SearchRequest, str | None]:
    """The search a strategy runs: ``semantic_only`` dense, ``keyword_only`` BM25,
    ``vector_rag`` both reranked, ``hybrid_semantic_graph`` both with the KG boost."""
    sides: tuple[Side, ...] = ("bm25", "semantic")
    strategy = ask.plan.strategy
    if strategy == "semantic_only":
        sides = ("semantic",)
    elif strategy == "keyword_only":
        sides = ("bm25",)
    rerank = strategy == "vector_rag" and reranker_configured
    note = None
    if strategy == "vector_rag" and not reranker_configured:
        note = "vector_rag without a reranker configured: BM25 ∪ ANN, not reranked"
    request = SearchRequest.make(
        ask.request.raw_query,
        top_k=ask.config.orchestrator.semantic_top_k,
        sides=sides,
        kg=None if strategy == "hybrid_semantic_graph" else False,
        rerank=rerank,
        principal=ask.principal,
    )
    return request, note


def timed(run: Callable[[], Found]) -> Found:
    """``run()`` with its wall time recorded."""
    start = time.perf_counter()
    found = run()
    found.latency_ms = (time.perf_counter() - start) * 1000
    return found
