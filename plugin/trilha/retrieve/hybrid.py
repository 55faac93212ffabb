"""Hybrid BM25 ∪ ANN search: both sides concurrently, filters inside each, merge by unit_id.

Candidate counts reconcile seeds 001 and 002: seed 002's ``k`` is the pool wanted before
rerank, split ``k_bm25 = k_vec = ceil(k/2)``; seed 001 has each side fetch ``top_k·3``, at most
100. Each side fetches ``max(top_k, min(cap, max(3·top_k, ceil(k/2))))`` (cap = 100): the
larger of the two seeds' asks, capped at 100, but never fewer than ``top_k`` so that ``top_k``
results come back whenever ``top_k`` units match the filters.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from trilha.access.policy import visibility_filter
from trilha.access.principal import Principal
from trilha.encode.base import Embedder
from trilha.errors import BadRequestError
from trilha.fusion import (
    Weights,
    active_weights,
    order,
    penalise_duplicates,
    rrf_merge,
    weighted_merge,
)
from trilha.index.dense import DenseIndex
from trilha.index.filters import FilterExpr, check_keys, combine
from trilha.index.lexical import LexicalIndex
from trilha.retrieve.kg import well_ranked
from trilha.types import Hit, SearchResult, Side, StageScores, StageTrace, Trace

Filler = Callable[[Sequence[str]], dict[str, float]]


class SideResult(NamedTuple):
    """One side's ranked candidates, its stage traces, and how to score any other unit."""

    scores: dict[str, float]
    stages: list[StageTrace]
    fill: Filler | None = None


class KgBooster(Protocol):
    """Scores candidates from the knowledge graph (seed 001, stage 7)."""

    def boost(
        self,
        query: str,
        unit_ids: Sequence[str],
        relevant: Collection[str] | None = None,
        principal: Principal | None = None,
    ) -> tuple[dict[str, float], str | None]:
        """``(unit_id -> boost in [0, 1], warning)`` from what ``principal`` sees (None:
        anonymous); an empty dict and a warning when the graph is down or slow. Must never
        raise for backend trouble. Only ``relevant`` units may get a boost (None: every
        unit)."""
        ...


class SearchParams(BaseModel):
    """How one search runs, every value resolved (:func:`trilha.retrieve.plan.plan` makes it
    from a :class:`~trilha.request.SearchRequest`); defaults follow seeds 001 and 002."""

    top_k: int = Field(10, gt=0, le=10_000, description="Results returned.")
    candidates: int | None = Field(None, gt=0, description="Seed 002's k: pool before rerank.")
    merge: Literal["weighted", "rrf"] = Field("weighted", description="Merge strategy.")
    weights: Weights = Field(default_factory=Weights, description="Shares per signal.")
    rrf_k: int = Field(60, gt=0, description="RRF constant (1-based ranks).")
    candidate_cap: int = Field(100, gt=0, description="Per-side fetch cap.")
    doc_penalty: float = Field(0.0, ge=0, lt=1, description="Per-doc duplicate decay.")
    sides: tuple[Side, ...] = Field(("bm25", "semantic"), description="Sides that run.")
    kg: bool = Field(False, description="Add the knowledge-graph boost (needs a graph).")
    filters: FilterExpr | None = Field(None, description="Applied inside both indices.")
    principal: Principal = Field(
        default_factory=Principal.anonymous,
        description="Whose visibility applies, inside both indices (anonymous: public only).",
    )


def per_side_candidates(top_k: int, candidates: int | None, cap: int) -> int:
    """How many candidates each side fetches (module docstring explains the rule)."""
    want = max(3 * top_k, math.ceil(candidates / 2) if candidates else 0)
    return max(top_k, min(cap, want))


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


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
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="trilha-side")

    def close(self) -> None:
        """Stop the side threads."""
        self._pool.shutdown(wait=False)

    # -- the two sides ----------------------------------------------------------------------
    def _bm25_side(
        self, lexical: LexicalIndex, text: str, n: int, expr: FilterExpr | None
    ) -> SideResult:
        start = time.perf_counter()
        mask = lexical.columns.mask(expr) if expr is not None else None
        everything = lexical.score_all(text)
        rows = lexical.top(everything, n, mask)
        scores = {lexical.units[r].unit_id: s for r, s in rows}

        def fill(unit_ids: Sequence[str]) -> dict[str, float]:
            if everything is None:
                return {}
            rows_of = ((u, lexical.row_of.get(u)) for u in unit_ids)
            return {u: float(everything[r]) for u, r in rows_of if r is not None}

        stage = StageTrace(name="bm25", latency_ms=_ms(start), count=len(scores))
        return SideResult(scores, [stage], fill)

    def _dense_side(
        self, text: str, n: int, expr: FilterExpr | None, vector: npt.NDArray[np.float32] | None
    ) -> SideResult:
        stages = []
        if vector is None:
            start = time.perf_counter()
            vector = self.embedder.encode_queries([text])[0]
            stages.append(StageTrace(name="encode", latency_ms=_ms(start), count=1))
        start = time.perf_counter()
        scores = dict(self.dense.search(vector, n, expr))
        stages.append(StageTrace(name="dense", latency_ms=_ms(start), count=len(scores)))
        query = vector

        def fill(unit_ids: Sequence[str]) -> dict[str, float]:
            stored = self.dense.vectors(list(unit_ids))
            return {u: float(np.dot(v, query)) for u, v in stored.items()}

        return SideResult(scores, stages, fill)

    def _jobs(
        self,
        lexical: LexicalIndex,
        text: str,
        params: SearchParams,
        vector: npt.NDArray[np.float32] | None,
    ) -> dict[Side, Callable[[], SideResult]]:
        if not text.strip():
            raise BadRequestError("the query is empty; pass some text to search for")
        n = per_side_candidates(params.top_k, params.candidates, params.candidate_cap)
        if params.filters is not None:
            check_keys(params.filters, lexical.columns.keys)
        visibility = visibility_filter(params.principal)
        expr = combine(visibility, params.filters)
        # When the principal sees every unit of the snapshot the dense side needs no visibility
        # filter: units it returns that the snapshot lacks (written since) are dropped at merge.
        sees_all = lexical.columns.all_match(visibility)
        dense_expr = combine(params.filters) if sees_all else expr
        jobs: dict[Side, Callable[[], SideResult]] = {}
        if "bm25" in params.sides:
            jobs["bm25"] = lambda: self._bm25_side(lexical, text, n, expr)
        if "semantic" in params.sides:
            jobs["semantic"] = lambda: self._dense_side(text, n, dense_expr, vector)
        if not jobs:
            raise BadRequestError("no retrieval side selected; use bm25, semantic or both")
        return jobs

    # -- public API -------------------------------------------------------------------------
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

    def _kg(
        self, text: str, sides: dict[Side, SideResult], params: SearchParams
    ) -> tuple[dict[str, float] | None, StageTrace | None]:
        """The graph boost of the union of candidates, or None when off or unavailable; only
        the candidates a side ranks well (:func:`well_ranked`) may be boosted."""
        if not params.kg:
            return None, None
        union = list(dict.fromkeys(uid for side in sides.values() for uid in side.scores))
        if self.booster is None:
            return None, StageTrace(
                name="kg",
                latency_ms=0.0,
                count=0,
                note="kg boost requested but the workspace has no graph",
            )
        start = time.perf_counter()
        relevant = well_ranked(side.scores for side in sides.values())
        scores, warning = self.booster.boost(text, union, relevant, params.principal)
        stage = StageTrace(
            name="kg",
            latency_ms=_ms(start),
            count=sum(v > 0 for v in scores.values()),
            note=warning,
        )
        return (None if warning else scores), stage

    # -- merge --------------------------------------------------------------------------------
    def merge(
        self,
        sides: dict[Side, SideResult],
        params: SearchParams,
        kg_stage: tuple[dict[str, float] | None, StageTrace | None] = (None, None),
        lexical: LexicalIndex | None = None,
    ) -> SearchResult:
        """Fuse side results (and the graph boost) into ranked hits; records stages, counts,
        fallbacks and degradations. ``lexical`` is the snapshot the sides searched (default:
        the current one); units it lacks are never returned."""
        start = time.perf_counter()
        lexical = lexical or self.lexical
        kg, kg_trace = kg_stage
        trace = Trace(merge=params.merge, principal=params.principal.describe())
        for side in sides.values():
            trace.stages.extend(side.stages)
        if kg_trace is not None:
            trace.stages.append(kg_trace)
            if kg_trace.note:
                trace.warnings.append(kg_trace.note)
        bm25 = sides["bm25"].scores if "bm25" in sides else {}
        sem = sides["semantic"].scores if "semantic" in sides else {}
        trace.bm25_hits, trace.ann_hits = len(bm25), len(sem)
        if len(sides) == 2 and bool(bm25) != bool(sem):
            trace.fallback = "dense_only" if sem else "bm25_only"
            trace.warnings.append(f"one side returned nothing; merged {trace.fallback}")
        bm25_rank = {uid: i for i, uid in enumerate(bm25, start=1)}
        sem_rank = {uid: i for i, uid in enumerate(sem, start=1)}
        if params.merge == "rrf":
            present = [s for s, scores in (("bm25", bm25), ("semantic", sem)) if scores]
            rankings = {"bm25": list(bm25), "semantic": list(sem)}
            if kg is not None and present:
                present.append("kg")
                rankings["kg"] = order({u: v for u, v in kg.items() if v > 0})
            w = active_weights(params.weights, present)
            fused = rrf_merge(rankings, w, params.rrf_k)
        else:
            bm25, sem = self._complete(sides, bm25, sem, trace)
            fused = weighted_merge(bm25, sem, params.weights, kg)
        best_rank = {
            uid: min(bm25_rank.get(uid, 1 << 30), sem_rank.get(uid, 1 << 30)) for uid in fused
        }
        known = lexical.row_of
        strays = [uid for uid in fused if uid not in known]
        if strays:  # vectors the unit store lacks (an interrupted write): never cost a result
            trace.warnings.append(
                f"{len(strays)} dense hits are not in this search's snapshot of the unit store "
                "(written since, or orphans: see trilha doctor); skipped"
            )
            fused = {uid: v for uid, v in fused.items() if uid in known}
        ranked = order(fused, best_rank)
        if params.doc_penalty > 0:
            doc_of = {uid: lexical.units[known[uid]].doc_id for uid in ranked}
            fused = penalise_duplicates(ranked, fused, doc_of, params.doc_penalty)
            ranked = order(fused, best_rank)
        hits = []
        for pos, uid in enumerate(ranked[: params.top_k], start=1):
            scores = StageScores(
                bm25=bm25.get(uid),
                bm25_rank=bm25_rank.get(uid),
                semantic=sem.get(uid),
                semantic_rank=sem_rank.get(uid),
                kg=None if kg is None else kg.get(uid, 0.0),
                fused=fused[uid],
                fused_rank=pos,
            )
            hits.append(Hit(unit=lexical.units[known[uid]], scores=scores))
        fill = trace.stage("fill")
        merge_ms = _ms(start) - (fill.latency_ms if fill is not None else 0.0)
        trace.stages.append(StageTrace(name="merge", latency_ms=merge_ms, count=len(hits)))
        return SearchResult(hits=hits, trace=trace)

    def _complete(
        self,
        sides: dict[Side, SideResult],
        bm25: dict[str, float],
        sem: dict[str, float],
        trace: Trace,
    ) -> tuple[dict[str, float], dict[str, float]]:
        """Give every candidate of the union its real score on both sides.

        A unit that one side ranked just below its cut-off is not worth 0 on that side: each side
        scores the other side's candidates (BM25 from the score vector it already computed, the
        dense side from the stored vectors), so min-max runs over the same union on both sides.
        A side that returned nothing stays empty (that is the fallback, not a fill).
        """
        if not bm25 or not sem:
            return bm25, sem
        start = time.perf_counter()
        out = []
        for name, own, other in (("bm25", bm25, sem), ("semantic", sem, bm25)):
            fill = sides[name].fill  # type: ignore[index]
            missing = [u for u in other if u not in own]
            out.append({**fill(missing), **own} if fill and missing else own)
        trace.stages.append(
            StageTrace(
                name="fill",
                latency_ms=_ms(start),
                count=len(out[0]) + len(out[1]) - len(bm25) - len(sem),
            )
        )
        return out[0], out[1]
