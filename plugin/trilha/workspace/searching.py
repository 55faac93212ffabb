"""What :meth:`Workspace.search` runs once a request is planned: the result cache (stage 1),
the hybrid search of the query and of its variants when the request expands it (stage 2 and
the sides), and rerank."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from trilha.errors import BadRequestError
from trilha.index.language import query_language
from trilha.rerank.base import RERANK_UNAVAILABLE, rerank_unavailable
from trilha.rerank.stage import rerank_result
from trilha.retrieve.cache import Lookup, cache_key
from trilha.retrieve.expand import expanded
from trilha.retrieve.plan import SearchPlan
from trilha.retrieve.spans import stage_span
from trilha.types import SearchResult
from trilha.workspace.units import Vector

if TYPE_CHECKING:
    from trilha.workspace.facade import Workspace

log = logging.getLogger(__name__)


def search(ws: Workspace, planned: SearchPlan, vector: Vector | None) -> SearchResult:
    """The planned search, from the cache when it holds it (one ``trilha.search`` span holding
    each stage's, :mod:`trilha.retrieve.spans`)."""
    with stage_span("search"):
        return _search(ws, planned, vector)


def _search(ws: Workspace, planned: SearchPlan, vector: Vector | None) -> SearchResult:
    key, lookup = _lookup(ws, planned, vector)
    if lookup is not None and lookup.result is not None:
        return lookup.result
    result = _warn_empty(ws, run(ws, planned, vector))
    result = _rerank(ws, planned, result) if planned.rerank else result
    return _keep(ws, key, result, lookup)


async def asearch(ws: Workspace, planned: SearchPlan, vector: Vector | None) -> SearchResult:
    """:func:`search` on an event loop: both sides concurrently, rerank (and an expander that
    may call an LLM) off the loop."""
    with stage_span("search"):
        return await _asearch(ws, planned, vector)


async def _asearch(ws: Workspace, planned: SearchPlan, vector: Vector | None) -> SearchResult:
    key, lookup = _lookup(ws, planned, vector)
    if lookup is not None and lookup.result is not None:
        return lookup.result
    if planned.expand:
        result = await asyncio.to_thread(run, ws, planned, vector)
    else:
        result = await ws.searcher.asearch(planned.query, planned.params, vector)
    result = _warn_empty(ws, result)
    if planned.rerank:
        result = await asyncio.to_thread(_rerank, ws, planned, result)  # loading it, too
    return _keep(ws, key, result, lookup)


def run(ws: Workspace, planned: SearchPlan, vector: Vector | None) -> SearchResult:
    """The hybrid search of the plan; with ``expand``, also of each variant of the query (each
    under the same principal and filters), merged by ``unit_id``."""
    if not planned.expand:
        return ws.searcher.search(planned.query, planned.params, vector)
    start = time.perf_counter()
    langs = ws.searcher.langs_for(planned.params.principal)
    lang = planned.params.lang or query_language(planned.query, langs)
    with stage_span("expansion"):
        expansion = ws.expander.expand(planned.query, lang)
    ms = (time.perf_counter() - start) * 1000.0
    own = ws.searcher.search(planned.query, planned.params, vector)
    others = [ws.searcher.search(v, planned.params) for v in expansion.variants]
    return expanded([own, *others], expansion, planned.params.top_k, ms)


def _warn_empty(ws: Workspace, result: SearchResult) -> SearchResult:
    """``result``, with a warning (logged too) when the workspace holds no document."""
    if result.hits or ws.searcher.lexical.units:
        return result
    warning = (
        f"workspace {ws.path} is empty: nothing to search; ingest documents first "
        f"(ws.ingest(...), TrilhaIndex.from_documents(...) or `trilha ingest PATH -w {ws.path}`)"
    )
    log.warning("%s", warning)
    result.trace.warnings.append(warning)
    return result


def cache_key_of(ws: Workspace, planned: SearchPlan, vector: Vector | None) -> str:
    """The result cache's key of a planned search; "" when it is not cached (no cache, or a
    query vector given by the caller)."""
    if ws.cache is None or vector is not None:
        return ""
    scope = cache_scope(ws, bool(planned.params.kg), planned.rerank)
    how = (planned.rerank, planned.keep, planned.expand)
    return cache_key(planned.query, planned.params, how, scope)


def cache_scope(ws: Workspace, kg: bool, rerank: bool) -> dict[str, Any]:
    """What a cached result depends on besides its request: the workspace, its encoder, the
    lexical snapshot's generation, the graph's (when boosted) and the reranker (when used)."""
    return {
        "workspace": str(ws.path.resolve()),
        "encoder": ws.embedder.model_id,
        "generation": ws.searcher.lexical.generation,
        "graph": ws.store.graph_generation if kg else None,
        "reranker": ws.reranker_identity if rerank else None,
    }


def _lookup(ws: Workspace, planned: SearchPlan, vector: Vector | None) -> tuple[str, Lookup | None]:
    """The checked vector's search key, and its lookup in the cache (None: not cached)."""
    check_vector(vector, ws.settings.embedding_dimension, ws.embedder.model_id)
    key = cache_key_of(ws, planned, vector)
    if ws.cache is None or not key:
        return key, None
    with stage_span("cache"):
        return key, ws.cache.fetch(key)


def _keep(ws: Workspace, key: str, result: SearchResult, lookup: Lookup | None) -> SearchResult:
    if ws.cache is None or lookup is None:
        return result
    return ws.cache.keep(key, result, lookup)


def _rerank(ws: Workspace, planned: SearchPlan, result: SearchResult) -> SearchResult:
    """Rerank to ``keep``; a remote reranker that is down keeps the fused order (warned)."""
    try:
        with stage_span("rerank"):
            return rerank_result(ws.reranker, planned.query, result, planned.keep)
    except RERANK_UNAVAILABLE as e:
        result.hits = result.hits[: planned.keep]
        result.trace.warnings.append(rerank_unavailable(e))
        return result


def check_vector(vector: Vector | None, dimension: int, model_id: str) -> None:
    """A query embedding must be one vector of the workspace's dimension."""
    if vector is not None and tuple(np.shape(vector)) != (dimension,):
        raise BadRequestError(
            f"the query embedding has shape {tuple(np.shape(vector))}, this workspace's encoder "
            f"makes ({dimension},) vectors ({model_id}); embed the query with the same model"
        )
