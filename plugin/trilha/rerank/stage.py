"""The rerank stage of a search: the fused hits reordered by a reranker, timed in the trace."""

from __future__ import annotations

import time

from trilha.rerank.base import Reranker
from trilha.types import SearchResult, StageTrace


def rerank_result(reranker: Reranker, query: str, result: SearchResult, keep: int) -> SearchResult:
    """A new result holding the best ``keep`` hits by ``reranker``, its trace one ``rerank``
    stage longer; ``result`` is not mutated."""
    start = time.perf_counter()
    hits = reranker.rerank(query, result.hits, top_n=keep)
    trace = result.trace.model_copy(deep=True)
    latency_ms = (time.perf_counter() - start) * 1000
    trace.stages.append(StageTrace(name="rerank", count=len(hits), latency_ms=latency_ms))
    return SearchResult(hits=hits, trace=trace)
