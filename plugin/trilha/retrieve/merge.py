"""Fusing the sides' candidates (and the graph boost) into the ranked hits of one search.

:func:`merge_sides` records what each side and the boost did in the :class:`Trace`, fuses by
``weighted`` (after :func:`~trilha.retrieve.sides.complete` fills both sides' scores) or ``rrf``
over the units of the searched snapshot only (a dense hit it lacks is dropped before any rank
or normalisation), applies the per-document duplicate penalty and keeps
``top_k`` hits, each with every stage's score and rank.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from trilha.index.lexical import LexicalIndex
from trilha.retrieve.fusion import (
    active_weights,
    order,
    penalise_duplicates,
    rrf_merge,
    shaped,
    weighted_merge,
)
from trilha.retrieve.params import SearchParams
from trilha.retrieve.sides import SideResult, complete, elapsed_ms
from trilha.types import Hit, SearchResult, Side, StageScores, StageTrace, Trace

#: The graph boost's scores (None: off or unavailable) and its stage trace (None: not asked).
KgStage = tuple[dict[str, float] | None, StageTrace | None]
_UNRANKED = 1 << 30


@dataclass(frozen=True)
class _Scores:
    """Every signal's scores and 1-based ranks, from which each hit's StageScores is read."""

    bm25: Mapping[str, float]
    bm25_rank: Mapping[str, int]
    semantic: Mapping[str, float]
    semantic_rank: Mapping[str, int]
    kg: Mapping[str, float] | None
    fused: Mapping[str, float]

    def of(self, uid: str, fused_rank: int) -> StageScores:
        """The scores of unit ``uid``, ranked ``fused_rank`` after fusion."""
        return StageScores(
            bm25=self.bm25.get(uid),
            bm25_rank=self.bm25_rank.get(uid),
            semantic=self.semantic.get(uid),
            semantic_rank=self.semantic_rank.get(uid),
            kg=None if self.kg is None else self.kg.get(uid, 0.0),
            fused=self.fused[uid],
            fused_rank=fused_rank,
        )


def merge_sides(
    sides: Mapping[Side, SideResult],
    params: SearchParams,
    kg_stage: KgStage,
    lexical: LexicalIndex,
) -> SearchResult:
    """Fuse side results (and the graph boost) into ranked hits of ``lexical``, the snapshot
    the sides searched; records stages, counts, fallbacks and degradations."""
    start = time.perf_counter()
    kg, kg_trace = kg_stage
    trace = _trace(sides, params, kg_trace)
    bm25 = sides["bm25"].scores if "bm25" in sides else {}
    sem = _in_snapshot(sides["semantic"].scores, lexical, trace) if "semantic" in sides else {}
    kg = None if kg is None else {uid: v for uid, v in kg.items() if uid in lexical.row_of}
    ranks = _ranks(bm25), _ranks(sem)
    if params.merge == "rrf":
        fused = _rrf(bm25, sem, kg, params)
    else:
        weights = params.weights
        if params.signal == "peak":
            weights = shaped(weights, list(bm25.values()), list(sem.values()))
        bm25, sem = complete(sides, bm25, sem, trace)
        fused = weighted_merge(bm25, sem, weights, kg)
    best_rank = {
        uid: min(ranks[0].get(uid, _UNRANKED), ranks[1].get(uid, _UNRANKED)) for uid in fused
    }
    ranked, fused = _ranked(fused, best_rank, lexical, params)
    scores = _Scores(bm25, ranks[0], sem, ranks[1], kg, fused)
    hits = [
        Hit(unit=lexical.units[lexical.row_of[uid]], scores=scores.of(uid, pos))
        for pos, uid in enumerate(ranked[: params.top_k], start=1)
    ]
    fill = trace.stage("fill")
    merge_ms = elapsed_ms(start) - (fill.latency_ms if fill is not None else 0.0)
    trace.stages.append(StageTrace(name="merge", latency_ms=merge_ms, count=len(hits)))
    return SearchResult(hits=hits, trace=trace)


def _ranks(scores: Mapping[str, float]) -> dict[str, int]:
    """1-based rank of each unit of a side's (already ordered) candidates."""
    return {uid: i for i, uid in enumerate(scores, start=1)}


def _trace(
    sides: Mapping[Side, SideResult], params: SearchParams, kg_trace: StageTrace | None
) -> Trace:
    """The trace so far: each side's stages, the boost's, the hit counts and any fallback."""
    trace = Trace(merge=params.merge, principal=params.principal.describe())
    for side in sides.values():
        trace.stages.extend(side.stages)
        trace.warnings += [s.note for s in side.stages if s.note]
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
    return trace


def _rrf(
    bm25: dict[str, float], sem: dict[str, float], kg: dict[str, float] | None, p: SearchParams
) -> dict[str, float]:
    """Reciprocal rank fusion of the sides that returned something (and the boost's ranking,
    when some unit has a positive boost: an all-zero boost takes no share, as in the weighted
    merge)."""
    present = [s for s, scores in (("bm25", bm25), ("semantic", sem)) if scores]
    rankings = {"bm25": list(bm25), "semantic": list(sem)}
    boosted = {u: v for u, v in (kg or {}).items() if v > 0}
    if boosted and present:
        present.append("kg")
        rankings["kg"] = order(boosted)
    return rrf_merge(rankings, active_weights(p.weights, present), p.rrf_k)


def _in_snapshot(sem: dict[str, float], lexical: LexicalIndex, trace: Trace) -> dict[str, float]:
    """The dense side's candidates without units the snapshot lacks (vectors of an interrupted
    write, or units written since the search began, hidden ones too): dropped before ranks and
    normalisation, they never cost a result nor move a score; counted as a warning."""
    known = lexical.row_of
    strays = [uid for uid in sem if uid not in known]
    if not strays:
        return sem
    trace.warnings.append(
        f"{len(strays)} dense hits are not in this search's snapshot of the unit store "
        "(written since, or orphans: see trilha doctor); skipped"
    )
    return {uid: v for uid, v in sem.items() if uid in known}


def _ranked(
    fused: dict[str, float],
    best_rank: Mapping[str, int],
    lexical: LexicalIndex,
    params: SearchParams,
) -> tuple[list[str], dict[str, float]]:
    """Unit ids in fused order (after the per-document duplicate penalty) and their scores."""
    ranked = order(fused, best_rank)
    if params.doc_penalty > 0:
        doc_of = {uid: lexical.units[lexical.row_of[uid]].doc_id for uid in ranked}
        fused = penalise_duplicates(ranked, fused, doc_of, params.doc_penalty)
        ranked = order(fused, best_rank)
    return ranked, fused
