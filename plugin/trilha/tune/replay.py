"""Fusion replayed on scored candidates (:mod:`trilha.tune.candidates`), and nDCG@10.

:func:`fuse` ranks one query's documents as a hybrid search with a given
:class:`~trilha.retrieve.fusion_table.Fusion` would: each side keeps its ``n`` best ranks
(:func:`~trilha.retrieve.params.per_side_candidates`), the weighted merge min-max scales each
side's real scores over the union of both lists (seed 001's formula, weights of the sides that
returned something renormalised), RRF sums ``w / (k + rank)``; ties go to the better side rank,
then the unit id. Units are aggregated to documents by their best unit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from trilha.retrieve.fusion import active_weights, shaped
from trilha.retrieve.fusion_table import Fusion
from trilha.retrieve.plan import per_side_candidates
from trilha.tune.candidates import Candidates, Floats


def _minmax(values: Floats) -> Floats:
    lo, hi = float(values.min()), float(values.max())
    return np.ones_like(values) if hi == lo else (values - lo) / (hi - lo)


def _own(values: Floats, rank: npt.NDArray[np.int64], n: int) -> list[float]:
    """A side's own list of scores, best first (its ``n`` best ranks)."""
    inside = np.flatnonzero(rank <= n)
    return [float(v) for v in values[inside[np.argsort(rank[inside])]]]


def fuse(c: Candidates, fusion: Fusion, top_k: int, cap: int = 100) -> list[str]:
    """The documents a hybrid search returns for ``c``'s query, best first."""
    n_b = per_side_candidates(top_k, None, cap, fusion.depth_bm25)
    n_s = per_side_candidates(top_k, None, cap, fusion.depth_semantic)
    in_b, in_s = c.bm25_rank <= n_b, c.semantic_rank <= n_s
    keep = in_b | in_s
    present = [side for side, inside in (("bm25", in_b), ("semantic", in_s)) if inside.any()]
    weights = fusion.weights
    if fusion.signal == "peak" and fusion.merge == "weighted":
        weights = shaped(
            weights, _own(c.bm25, c.bm25_rank, n_b), _own(c.semantic, c.semantic_rank, n_s)
        )
    w = active_weights(weights, present)
    score = np.zeros(len(c.units))
    sides = (("bm25", in_b, c.bm25_rank, c.bm25), ("semantic", in_s, c.semantic_rank, c.semantic))
    for side, inside, rank, values in sides:
        if side not in w:
            continue
        if fusion.merge == "rrf":
            score += np.where(inside, w[side] / (fusion.rrf_k + rank), 0.0)
        else:
            score[keep] += w[side] * _minmax(values[keep])
    unranked = 1 << 30
    best = np.minimum(
        np.where(in_b, c.bm25_rank, unranked), np.where(in_s, c.semantic_rank, unranked)
    )
    rows = sorted(np.flatnonzero(keep), key=lambda r: (-score[r], best[r], c.units[r]))
    return list(dict.fromkeys(c.docs[r] for r in rows[:top_k]))


def ndcg_at_10(ranked: Sequence[str], relevant: dict[str, int]) -> float:
    """nDCG@10 with linear gains, as trec_eval's ``ndcg_cut_10``."""
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:10]
    if not ideal:
        return 0.0
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))


def mean_ndcg(queries: Sequence[Candidates], fusion: Fusion, top_k: int) -> float:
    """Mean nDCG@10 of ``fusion`` over ``queries``."""
    if not queries:
        return 0.0
    return sum(ndcg_at_10(fuse(c, fusion, top_k), c.relevant) for c in queries) / len(queries)
