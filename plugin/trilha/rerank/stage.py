"""The rerank stage of a search: the fused hits reordered by a reranker, timed in the trace."""

from __future__ import annotations

import time

from trilha.rerank.base import Reranker
from trilha.types import SearchResult, StageTrace, Trace


def rerank_result(reranker: Reranker, query: str, result: SearchResult, keep: int) -> SearchResult:
    """A new result holding the best ``keep`` hits by ``reranker``, its trace one ``rerank``
    stage longer; ``result`` is not mutated."""
    start = time.perf_counter()
    hits = reranker.rerank(query, result.hits, top_n=keep)
    return SearchResult(hits=hits, trace=with_rerank_stage(result.trace, len(hits), start))


def with_rerank_stage(trace: Trace, kept: int, start: float, note: str | None = None) -> Trace:
    """A copy of ``trace`` with a ``rerank`` stage that began at ``start`` (a
    :func:`time.perf_counter` reading) and kept ``kept`` hits."""
    latency_ms = (time.perf_counter() - start) * 1000
    out = trace.model_copy(deep=True)
    out.stages.append(StageTrace(name="rerank", count=kept, latency_ms=latency_ms, note=note))
    return out
