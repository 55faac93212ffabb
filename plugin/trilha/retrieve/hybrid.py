"""Hybrid BM25 ∪ ANN search: both sides concurrently, filters inside each, merge by unit_id.

The pieces are topical modules: :mod:`~trilha.retrieve.params` (what a search asks, how many
candidates each side fetches), :mod:`~trilha.retrieve.sides` (the lexical and dense sides),
:mod:`~trilha.retrieve.kg` (the graph boost) and :mod:`~trilha.retrieve.merge` (fusion into
hits). :class:`HybridSearcher` runs them on one snapshot of the lexical index.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from trilha.access.compiled import POLICIES, CompiledPolicy
from trilha.access.principal import Principal
from trilha.encode.base import Embedder
from trilha.errors import BadRequestError
from trilha.index.dense import DenseIndex
from trilha.index.filters import FilterExpr, check_keys, combine, widen_languages
from trilha.index.lexical import LexicalIndex
from trilha.retrieve.kg import KgBooster, kg_stage
from trilha.retrieve.merge import KgStage, merge_sides
from trilha.retrieve.params import SearchParams, per_side_candidates
from trilha.retrieve.sides import SideResult, bm25_side, dense_side
from trilha.retrieve.spans import spanned, stage_span
from trilha.types import SearchResult, Side

__all__ = ["HybridSearcher", "KgBooster", "SearchParams", "SideResult", "per_side_candidates"]

Job = Callable[[], SideResult]
#: The span (:mod:`~trilha.retrieve.spans`) of each side.
SIDE_SPANS: dict[Side, str] = {"bm25": "bm25", "semantic": "dense"}


class HybridSearcher:
    """Runs the lexical and dense sides and merges them into ranked :class:`Hit` s."""

    def __init__(
        self,
        lexical: LexicalIndex,
        dense: DenseIndex,
        embedder: Embedder,
        booster: KgBooster | None = None,
    ) -> None:
        self.lexical = lexical
        self.dense = dense
        self.embedder = embedder
        self.booster = booster
        #: Compiled visibility rules of recent principals, shared with the graph reads (each
        #: principal's rule compiled once for every index, not per search).
        self.policies = POLICIES
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="trilha-side")

    def close(self) -> None:
        """Stop the side threads."""
        self._pool.shutdown(wait=False)

    def _jobs(
        self,
        lexical: LexicalIndex,
        text: str,
        params: SearchParams,
        vector: npt.NDArray[np.float32] | None,
    ) -> dict[Side, Job]:
        if not text.strip():
            raise BadRequestError("the query is empty; pass some text to search for")
        n_bm25, n_sem = (
            per_side_candidates(params.top_k, params.candidates, params.candidate_cap, depth)
            for depth in (params.depth_bm25, params.depth_semantic)
        )
        filters = params.filters
        if filters is not None:
            check_keys(filters, lexical.columns.keys)
            filters = widen_languages(filters, lambda: lexical.columns.values("lang"))
        policy = self.policies.get(params.principal)
        # When the principal sees every unit of the snapshot the dense side needs no visibility
        # filter: units it returns that the snapshot lacks (written since) are dropped at merge.
        sees_all = policy.sees_all(lexical.columns)
        dense_expr = combine(filters) if sees_all else combine(policy.expr, filters)
        jobs: dict[Side, Job] = {}
        if "bm25" in params.sides:
            jobs["bm25"] = lambda: self._bm25_side(lexical, text, n_bm25, policy, filters)
        if "semantic" in params.sides:
            jobs["semantic"] = lambda: self._dense_side(text, n_sem, dense_expr, vector)
        if not jobs:
            raise BadRequestError("no retrieval side selected; use bm25, semantic or both")
        return {side: spanned(SIDE_SPANS[side], job) for side, job in jobs.items()}

    @staticmethod
    def _bm25_side(
        lexical: LexicalIndex,
        text: str,
        n: int,
        policy: CompiledPolicy,
        filters: FilterExpr | None,
    ) -> SideResult:
        visible = policy.row_mask(lexical.columns)  # the statistics: what the caller may see
        return bm25_side(lexical, text, n, policy.row_mask(lexical.columns, filters), visible)

    def _dense_side(
        self, text: str, n: int, expr: FilterExpr | None, vector: npt.NDArray[np.float32] | None
    ) -> SideResult:
        return dense_side(self.dense, self.embedder, text, n, expr, vector)

    # -- public API -------------------------------------------------------------------------
    def langs_for(self, principal: Principal) -> list[str]:
        """The languages of the units ``principal`` may see, most frequent first (what their
        query's language, hence its fusion, is chosen from): hidden units never change it.
        Kept per compiled policy and lexical snapshot, as the row masks are."""
        lexical = self.lexical
        return lexical.langs_of(self.policies.get(principal).row_mask(lexical.columns))

    def search(
        self,
        text: str,
        params: SearchParams | None = None,
        vector: npt.NDArray[np.float32] | None = None,
    ) -> SearchResult:
        """Run both sides concurrently (threads) and merge."""
        params = params or SearchParams()
        lexical = self.lexical  # one generation for the whole search (ingest swaps it whole)
        jobs = self._jobs(lexical, text, params, vector)
        futures = {side: self._pool.submit(job) for side, job in jobs.items()}
        sides = {side: f.result() for side, f in futures.items()}
        kg = self._kg(text, sides, params)
        return self.merge(sides, params, kg, lexical)

    async def asearch(
        self,
        text: str,
        params: SearchParams | None = None,
        vector: npt.NDArray[np.float32] | None = None,
    ) -> SearchResult:
        """Run both sides concurrently on the event loop's threads and merge."""
        params = params or SearchParams()
        lexical = self.lexical
        jobs = self._jobs(lexical, text, params, vector)
        results = await asyncio.gather(*(asyncio.to_thread(job) for job in jobs.values()))
        sides = dict(zip(jobs, results, strict=True))
        kg = await asyncio.to_thread(self._kg, text, sides, params)
        return self.merge(sides, params, kg, lexical)

    def _kg(self, text: str, sides: dict[Side, SideResult], params: SearchParams) -> KgStage:
        """The graph boost (:func:`~trilha.retrieve.kg.kg_stage`), or nothing when not asked."""
        if not params.kg:
            return None, None
        with stage_span("kg"):
            return kg_stage(self.booster, text, sides.values(), params.principal)

    def merge(
        self,
        sides: dict[Side, SideResult],
        params: SearchParams,
        kg_stage: KgStage = (None, None),
        lexical: LexicalIndex | None = None,
    ) -> SearchResult:
        """Fuse side results (and the graph boost) into ranked hits; records stages, counts,
        fallbacks and degradations. ``lexical`` is the snapshot the sides searched (default:
        the current one); units it lacks are never returned."""
        with stage_span("fusion"):
            return merge_sides(sides, params, kg_stage, lexical or self.lexical)
