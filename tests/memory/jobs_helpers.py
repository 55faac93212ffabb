"""A synthetic retrieval job log whose statistics are worked out by hand in the tests."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.memory.conftest import T0
from trilha.memory.jobs import RetrievalJob

_BASE: list[tuple[str, str, str, str | None]] = [
    ("Quais tarefas estão atrasadas?", "graph_only", "graph_insight", None),
    ("What is the LGPD?", "vector_rag", "factual", None),
    ("tarefas atrasadas quais são", "graph_only", "graph_insight", "graph_timeout"),
    ("O que deveríamos priorizar esta semana?", "hybrid_semantic_graph", "orientation", None),
    ("What is LGPD", "vector_rag", "factual", None),
    ("Quais tarefas estão atrasadas", "graph_only", "graph_insight", None),
    ("priorizar semana", "hybrid_semantic_graph", "orientation", None),
    ("Who owns the ROPA?", "graph_only", "organizational", "graph_timeout"),
    ("LGPD?", "vector_rag", "factual", None),
    ("one-off question about DPIA", "keyword_only", "factual", None),
]
#: (query, strategy, intent, error) of job i; latency_ms is i + 1, created_at T0 + i minutes.
#: Jobs 10..18 repeat 0..8; job 19 is another one-off question.
PLAN = [*_BASE, *_BASE[:9], ("how much budget is left", "keyword_only", "factual", None)]


def job(i: int, user: str = "ana", **over: Any) -> RetrievalJob:
    """Job ``i`` of :data:`PLAN`, asked by ``user``, with fields ``over`` replaced."""
    query, strategy, intent, error = PLAN[i]
    fields: dict[str, Any] = {
        "id": f"job-{i:02d}",
        "user_id": user,
        "conversation_id": "c1",
        "agent_type": "knowledge",
        "raw_query": query,
        "retrieval_intent": intent,
        "strategy_used": strategy,
        "nodes_scanned": 40,
        "nodes_returned": 3,
        "depth_used": 2,
        "tokens_estimated": 900,
        "latency_ms": i + 1,
        "error_code": error,
        "created_at": T0 + timedelta(minutes=i),
        "depth_level": "D2",
        "query_profile_used": "document_evidence",
        "prequery": {"retrieval_intent": intent, "focus_entities": ["Task"]},
        "returned": ("Chunk:guide/graphrag#0", "Task:t1"),
        "scope_key": "0123456789abcdef",
    }
    return RetrievalJob(**{**fields, **over})
