"""From a :class:`~trilha.request.SearchRequest` to the concrete parameters a search runs with.

:func:`plan` is the only place where a request's ``None`` fields take the settings' defaults,
so every entry point (Python API, retriever, CLI, tools, eval, bench) searches the same way.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import ValidationError

from trilha.errors import BadRequestError, one_line
from trilha.request import SearchRequest
from trilha.retrieve.fusion_table import Fusion
from trilha.retrieve.hybrid import SearchParams
from trilha.settings import TrilhaSettings

#: Pool reranked when a request asks for rerank without ``candidates`` (seed 002's k).
RERANK_POOL = 40


class SearchPlan(NamedTuple):
    """The query, the searcher's parameters, how many hits to keep, whether to rerank, and
    whether to search variants of the query too."""

    query: str
    params: SearchParams
    keep: int
    rerank: bool
    expand: bool = False


def plan(
    request: SearchRequest,
    settings: TrilhaSettings,
    has_graph: bool,
    fusion: Fusion | None = None,
    lang: str | None = None,
) -> SearchPlan:
    """The search ``request`` asks for, with the settings' defaults where it says nothing.

    ``fusion`` is the merge, weights, RRF k and side depths for the query's language ``lang``
    (:class:`~trilha.retrieve.fusion_table.FusionTable`; default: the settings' own values);
    the request's ``merge`` and ``weights`` override it. The KG boost defaults to
    ``TRILHA_KG_BOOST`` when the workspace has a graph; sizes are :func:`sizes`'.
    """
    s = settings
    f = fusion or Fusion.of_settings(s)
    kg = request.kg if request.kg is not None else (s.kg_boost and has_graph)
    keep, top_k, candidates = sizes(request, s)
    try:
        params = SearchParams(
            top_k=top_k,
            candidates=candidates,
            merge=request.merge or f.merge,
            weights=request.weights or f.weights,
            rrf_k=f.rrf_k,
            candidate_cap=s.candidate_cap,
            depth_bm25=f.depth_bm25,
            depth_semantic=f.depth_semantic,
            signal=f.signal,
            lang=lang,
            doc_penalty=s.doc_penalty,
            sides=request.sides,
            filters=request.filters,
            kg=kg,
            principal=request.principal,
        )
    except ValidationError as e:
        raise BadRequestError(f"invalid search parameters: {one_line(e)}") from e
    return SearchPlan(request.query, params, keep, request.rerank, request.expand)


def sizes(request: SearchRequest, s: TrilhaSettings) -> tuple[int, int, int | None]:
    """(hits kept, hits fused, seed 002's pool ``k``). Without rerank, ``top_k`` hits come back
    (default ``TRILHA_TOP_K``). With rerank, a pool of ``candidates`` (default 40, never fewer
    than kept) is fused, reranked, and ``top_k`` (default ``TRILHA_RERANK_TOP_N``) are kept."""
    if request.rerank:
        keep = request.top_k or s.rerank_top_n
        pool = max(request.candidates or RERANK_POOL, keep)
        return keep, pool, pool
    keep = request.top_k or s.top_k
    return keep, keep, request.candidates
