"""Pure merge arithmetic, keyed by ``unit_id``.

* :func:`minmax` — per-list min-max scaling; a list whose scores are all equal maps to 1.0,
  a unit absent from a list counts 0 for that list.
* :func:`weighted_merge` — seed 001: ``w_bm25·norm(bm25) + w_sem·norm(cos) + w_kg·kg``, with
  the weights of the sides that take part renormalised to sum to 1 (see :func:`active_weights`);
  a graph boost that is 0 everywhere does not take part.
* :func:`rrf_merge` — Reciprocal Rank Fusion, ``Σ w_i / (k + rank_i)`` on 1-based ranks, k=60
  (Cormack, Clarke & Büttcher, SIGIR 2009), weights honoured.
* :func:`penalise_duplicates` — optional per-document decay for diversity (seed 002).
* :func:`shaped` — the query-time signal (opt-in, ``signal: peak``): each side's share scaled by
  how steeply its own scores fall within its top ten.
* :func:`fuse` and :func:`ranked` — one query's whole stage 5 from the sides' own candidates and
  a :class:`~trilha.settings.Fusion`: what a search runs and what ``trilha tune`` replays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from trilha.settings import Fusion, Weights

__all__ = [
    "Weights",
    "active_weights",
    "fuse",
    "minmax",
    "order",
    "peakedness",
    "penalise_duplicates",
    "ranked",
    "rrf_merge",
    "shaped",
    "shares",
    "weighted_merge",
]


def peakedness(scores: Sequence[float]) -> float:
    """How much a side's scores fall within its top ten, against its whole list (best first):
    ``(s1 − s10) / (s1 − s_last)``, 1 for lists of ten or fewer. A side with a few clear winners
    is surer of this query than one whose top ten are alike (a plateau gives 0)."""
    if len(scores) <= 10:
        return 1.0
    spread = scores[0] - scores[-1]
    return float((scores[0] - scores[9]) / spread) if spread > 0 else 1.0


def shaped(weights: Weights, bm25: Sequence[float], semantic: Sequence[float]) -> Weights:
    """``weights`` with the two sides' shares scaled by their :func:`peakedness` for this
    query (the sum of the two shares, and the graph's share, are kept)."""
    b = weights.bm25 * peakedness(bm25)
    s = weights.semantic * peakedness(semantic)
    both = weights.bm25 + weights.semantic
    if b + s <= 0:
        return weights
    return Weights(bm25=both * b / (b + s), semantic=both * s / (b + s), kg=weights.kg)


def minmax(scores: Mapping[str, float]) -> dict[str, float]:
    """Scale scores to [0, 1]; equal scores (one item too) all map to 1.0."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return dict.fromkeys(scores, 1.0)
    span = hi - lo
    return {uid: (s - lo) / span for uid, s in scores.items()}


def active_weights(weights: Weights, sides: Sequence[str]) -> dict[str, float]:
    """The weights of the sides that take part, renormalised to sum to 1.

    With the graph off, bm25 0.5 / semantic 0.4 become 0.556 / 0.444: the ranking is the same
    as with the raw weights, and fused scores stay in [0, 1]. A side with no results drops out
    the same way, which is the fallback to the other side.
    """
    raw = {side: float(getattr(weights, side)) for side in sides}
    total = sum(raw.values())
    if total <= 0:
        return dict.fromkeys(raw, 1.0 / len(raw)) if raw else {}
    return {side: w / total for side, w in raw.items()}


def weighted_merge(
    bm25: Mapping[str, float],
    semantic: Mapping[str, float],
    weights: Weights,
    kg: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Seed 001's weighted formula over the union of both lists. A ``kg`` with no positive
    boost takes no share: the scores are then exactly those without the graph."""
    sides = [name for name, scores in (("bm25", bm25), ("semantic", semantic)) if scores]
    if kg is not None and sides and any(v > 0 for v in kg.values()):
        sides.append("kg")
    w = active_weights(weights, sides)
    norm = {"bm25": minmax(bm25), "semantic": minmax(semantic), "kg": dict(kg or {})}
    union = dict.fromkeys([*bm25, *semantic])
    return {uid: sum(w[s] * norm[s].get(uid, 0.0) for s in sides) for uid in union}


def rrf_merge(
    rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int = 60
) -> dict[str, float]:
    """``Σ_i w_i / (k + rank_i)`` with 1-based ranks; a list missing a unit adds nothing."""
    out: dict[str, float] = {}
    for side, ranked in rankings.items():
        w = weights.get(side, 1.0)
        for rank, uid in enumerate(ranked, start=1):
            out[uid] = out.get(uid, 0.0) + w / (k + rank)
    return out


def order(scores: Mapping[str, float], tiebreak: Mapping[str, int] | None = None) -> list[str]:
    """Unit ids by descending score; ties by ``tiebreak`` (lower first), then by id."""
    tb = tiebreak or {}
    return sorted(scores, key=lambda uid: (-scores[uid], tb.get(uid, 1 << 30), uid))


def penalise_duplicates(
    ranked: Sequence[str], scores: Mapping[str, float], doc_of: Mapping[str, str], penalty: float
) -> dict[str, float]:
    """Scale the n-th further unit of a document by ``(1 - penalty) ** n`` (n from 0)."""
    if penalty <= 0:
        return dict(scores)
    seen: dict[str, int] = {}
    out: dict[str, float] = {}
    for uid in ranked:
        doc = doc_of.get(uid, uid)
        n = seen.get(doc, 0)
        out[uid] = scores[uid] * (1.0 - penalty) ** n
        seen[doc] = n + 1
    return out


def fuse(
    fusion: Fusion,
    bm25: Mapping[str, float],
    semantic: Mapping[str, float],
    *,
    filled: tuple[Mapping[str, float], Mapping[str, float]] | None = None,
    kg: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """One query's fused scores: ``bm25`` and ``semantic`` are each side's own candidates, best
    first. RRF ranks the sides that returned something (and the boost, when some unit has a
    positive one); the weighted merge takes ``fusion``'s shares (:func:`shaped` by the own lists
    with ``signal: peak``) over ``filled``, both sides' real scores over their union
    (:func:`trilha.retrieve.pipeline.complete`), else over the own lists."""
    if fusion.merge == "rrf":
        present = [s for s, scores in (("bm25", bm25), ("semantic", semantic)) if scores]
        rankings = {"bm25": list(bm25), "semantic": list(semantic)}
        boosted = {u: v for u, v in (kg or {}).items() if v > 0}
        if boosted and present:
            present.append("kg")
            rankings["kg"] = order(boosted)
        return rrf_merge(rankings, active_weights(shares(fusion), present), fusion.rrf_k)
    weights = shares(fusion)
    if fusion.signal == "peak":
        weights = shaped(weights, list(bm25.values()), list(semantic.values()))
    both = filled or (bm25, semantic)
    return weighted_merge(both[0], both[1], weights, kg)


@lru_cache(maxsize=256)
def shares(fusion: Fusion) -> Weights:
    """``fusion``'s shares (:attr:`Fusion.weights <trilha.settings.Fusion.weights>`), made once
    per fusion in force rather than validated again for every search (0.7 µs, not 2.3)."""
    return fusion.weights


def ranked(
    fused: Mapping[str, float],
    bm25: Mapping[str, float],
    semantic: Mapping[str, float],
    doc_of: Mapping[str, str],
    doc_penalty: float,
) -> tuple[list[str], dict[str, float]]:
    """Unit ids in fused order (ties to the better rank in a side's own list, then the id),
    after the per-document duplicate penalty, and their scores."""
    rank_b = {uid: i for i, uid in enumerate(bm25, start=1)}
    rank_s = {uid: i for i, uid in enumerate(semantic, start=1)}
    unranked = 1 << 30
    best = {uid: min(rank_b.get(uid, unranked), rank_s.get(uid, unranked)) for uid in fused}
    out = order(fused, best)
    if doc_penalty <= 0:
        return out, dict(fused)
    scores = penalise_duplicates(out, fused, {u: doc_of.get(u, u) for u in out}, doc_penalty)
    return order(scores, best), scores
