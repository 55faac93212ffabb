"""From a :class:`~trilha.request.SearchRequest` to the concrete parameters a search runs with.

:func:`plan` is the only place where a request's ``None`` fields take the settings' defaults,
so every entry point (Python API, retriever, CLI, tools, eval, bench) searches the same way.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import ValidationError

from trilha.errors import BadRequestError, one_line
from trilha.request import SearchRequest
from trilha.retrieve.fusion import Weights
from trilha.retrieve.hybrid import SearchParams
from trilha.settings import TrilhaSettings

#: Pool reranked when a request asks for rerank without ``candidates`` (seed 002's k).
RERANK_POOL = 40


class SearchPlan(NamedTuple):
    """The query, the searcher's parameters, how many hits to keep, and whether to rerank."""

    query: str
    params: SearchParams
    keep: int
    rerank: bool


def plan(request: SearchRequest, settings: TrilhaSettings, has_graph: bool) -> SearchPlan:
    """The search ``request`` asks for, with the settings' defaults where it says nothing.

    Without rerank, ``top_k`` hits come back (default ``TRILHA_TOP_K``). With rerank, a pool of
    ``candidates`` (default 40, never fewer than kept) is fused, reranked, and ``top_k``
    (default ``TRILHA_RERANK_TOP_N``) are kept. The KG boost defaults to ``TRILHA_KG_BOOST``
    when the workspace has a graph.
    """
    s = settings
    kg = request.kg if request.kg is not None else (s.kg_boost and has_graph)
    candidates: int | None
    if request.rerank:
        keep = request.top_k or s.rerank_top_n
        top_k = candidates = max(request.candidates or RERANK_POOL, keep)
    else:
        keep = top_k = request.top_k or s.top_k
        candidates = request.candidates
    try:
        params = SearchParams(
            top_k=top_k,
            candidates=candidates,
            merge=request.merge or s.merge,
            weights=request.weights
            or Weights(bm25=s.weight_bm25, semantic=s.weight_semantic, kg=s.weight_kg),
            rrf_k=s.rrf_k,
            candidate_cap=s.candidate_cap,
            doc_penalty=s.doc_penalty,
            sides=request.sides,
            filters=request.filters,
            kg=kg,
            principal=request.principal,
        )
    except ValidationError as e:
        raise BadRequestError(f"invalid search parameters: {one_line(e)}") from e
    return SearchPlan(request.query, params, keep, request.rerank)
