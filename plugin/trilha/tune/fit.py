"""Fit the fusion on a training split's qrels, with k-fold cross-validation.

Three stages, each a small grid whose every setting is scored on every query once
(:func:`~trilha.tune.replay.ndcg_matrix`):

1. at the operating point of ``trilha eval`` (``top_k`` 100), the fusion in force kept: BM25's
   ``k1`` and ``b`` (:data:`K1S` × :data:`BS`), the candidates scored again for each pair, as a
   hybrid search with them ranks (the lexical side's scores are what the merge fuses);
2. at the same point: the merge (weighted or RRF), the BM25 : dense share (the graph's share is
   kept), RRF's ``k``, and whether the weighted merge uses the query-time signal
   (:func:`~trilha.retrieve.fusion.shaped`);
3. at a search's default operating point (``top_k`` 10): each side's depth, with the choices
   before.

Cross-validation tells what tuning is worth on queries it did not see: in each fold the best
setting on the other folds is scored on the held-out one, beside the untuned setting. The
setting written is the best one on all the training queries, for each stage only when it gained
on the held-out folds (else that stage keeps what was in force).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from trilha.retrieve.fusion_table import Fusion
from trilha.tune.candidates import Candidates
from trilha.tune.replay import ndcg_matrix

#: BM25's share of the two sides, weighted merge.
WEIGHTED_SHARES = tuple(round(i * 0.05, 2) for i in range(21))
#: BM25's share of the two sides, and RRF's k.
RRF_SHARES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
RRF_KS = (10, 20, 40, 60, 100)
#: Each side's depth factor (fetch depth·top_k).
DEPTHS = (3, 5, 10)
#: BM25's k1 and b (Robertson's usual ranges; the seed's 1.5 / 0.75 among them).
K1S = (0.6, 0.9, 1.2, 1.5, 1.8)
BS = (0.3, 0.4, 0.5, 0.6, 0.75, 0.9)


def with_share(base: Fusion, share: float, **fields: object) -> Fusion:
    """``base`` with BM25 taking ``share`` of the two sides' weight (their sum is kept)."""
    both = base.weight_bm25 + base.weight_semantic or 1.0
    bm25, semantic = round(both * share, 4), round(both * (1 - share), 4)
    return base.model_copy(update={"weight_bm25": bm25, "weight_semantic": semantic, **fields})


def merge_grid(base: Fusion) -> list[Fusion]:
    """Stage 2's settings."""
    weighted = [
        with_share(base, s, merge="weighted", signal=signal)
        for s in WEIGHTED_SHARES
        for signal in ("none", "peak")
    ]
    rrf = [with_share(base, s, merge="rrf", rrf_k=k) for s in RRF_SHARES for k in RRF_KS]
    return weighted + rrf


def lexical_grid(base: Fusion) -> list[Fusion]:
    """Stage 1's settings."""
    return [base.model_copy(update={"bm25_k1": k1, "bm25_b": b}) for k1 in K1S for b in BS]


def depth_grid(base: Fusion) -> list[Fusion]:
    """Stage 3's settings."""
    return [
        base.model_copy(update={"depth_bm25": b, "depth_semantic": s})
        for b in DEPTHS
        for s in DEPTHS
    ]


def folds_of(n: int, k: int, seed: int = 13) -> list[list[int]]:
    """``k`` folds of ``range(n)``, shuffled with ``seed``."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [order[i::k] for i in range(k)]


@dataclass(frozen=True)
class StageFit:
    """One stage's choice and what it was worth."""

    chosen: Fusion
    untuned: Fusion
    train_ndcg: float  # chosen, all training queries
    untuned_train_ndcg: float
    heldout: list[tuple[float, float]]  # per fold: (untuned, tuned) mean nDCG@10

    @property
    def heldout_gain(self) -> float:
        """Mean held-out gain of tuning over the untuned setting."""
        return float(np.mean([t - u for u, t in self.heldout])) if self.heldout else 0.0

    @property
    def kept(self) -> bool:
        """Whether the choice is written: it differs from the untuned setting and gained on
        the held-out folds."""
        return self.chosen != self.untuned and self.heldout_gain > 0


def fit_stage(
    queries: Sequence[Candidates],
    settings: Sequence[Fusion],
    untuned: Fusion,
    top_k: int,
    folds: int,
    doc_penalty: float = 0.0,
) -> StageFit:
    """The best of ``settings`` (``untuned`` is one of them) on ``queries``, cross-validated
    (searches that penalise duplicates by ``doc_penalty``)."""
    grid = untuned_first(untuned, settings)
    return chosen_of(grid, ndcg_matrix(queries, grid, top_k, doc_penalty=doc_penalty), folds)


def untuned_first(untuned: Fusion, settings: Sequence[Fusion]) -> list[Fusion]:
    """``settings`` with ``untuned`` first and once: :func:`chosen_of` keeps it on ties."""
    return [untuned, *[s for s in settings if s != untuned]]


def chosen_of(grid: Sequence[Fusion], scores: npt.NDArray[np.float64], folds: int) -> StageFit:
    """The best of ``grid`` (its first is the untuned one) by ``scores`` (nDCG@10 of each
    setting, rows, on each query, columns), cross-validated over ``folds``."""
    n = scores.shape[1]
    heldout = []
    if folds >= 2 and n >= folds:
        for fold in folds_of(n, folds):
            held = np.zeros(n, dtype=bool)
            held[fold] = True
            best = int(np.argmax(scores[:, ~held].mean(axis=1)))  # first best: untuned on ties
            heldout.append((float(scores[0, held].mean()), float(scores[best, held].mean())))
    best = int(np.argmax(scores.mean(axis=1)))
    return StageFit(
        chosen=grid[best],
        untuned=grid[0],
        train_ndcg=float(scores[best].mean()),
        untuned_train_ndcg=float(scores[0].mean()),
        heldout=heldout,
    )
