"""The RetrievalJob of one orchestrated retrieval (seed 004 REQ-RETR-003, REQ-RETR-016)."""

from __future__ import annotations

from trilha.access import scope_key
from trilha.memory.jobs import RetrievalJob
from trilha.orchestrate.bundle import ContextBundle
from trilha.orchestrate.sources import Ask


def job_of(job_id: str, ask: Ask, bundle: ContextBundle) -> RetrievalJob:
    """The job record of ``bundle``: seed 004's fields, the pre-query and what was returned."""
    return RetrievalJob(
        id=job_id,
        user_id=ask.request.user_id,
        conversation_id=ask.request.conversation_id,
        agent_type=ask.request.agent_type,
        raw_query=ask.request.raw_query,
        rewritten_query=None,
        retrieval_intent=ask.pre.retrieval_intent,
        strategy_used=ask.plan.strategy,
        nodes_scanned=bundle.trace.limits.nodes_scanned,
        nodes_returned=len(bundle.context_items),
        depth_used=bundle.depth_used,
        tokens_estimated=bundle.tokens_estimated,
        latency_ms=round(bundle.trace.latency_ms),
        error_code=None,
        created_at=ask.now,
        depth_level=ask.plan.depth,
        query_profile_used=bundle.cdc_metadata.query_profile_used,
        prequery=ask.pre.model_dump(mode="json"),
        returned=tuple(item.item_id for item in bundle.context_items),
        scope_key=scope_key(ask.principal),
    )
