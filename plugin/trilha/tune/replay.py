"""Fusion replayed on scored candidates (:mod:`trilha.tune.candidates`), and its nDCG@10.

:func:`fuse` ranks one query's documents as a hybrid search with a given
:class:`~trilha.retrieve.fusion_table.Fusion` would, through the search's own arithmetic
(:func:`trilha.retrieve.fusion.fuse` and :func:`~trilha.retrieve.fusion.ranked`): each side keeps
its ``n`` best ranks (:func:`~trilha.retrieve.plan.per_side_candidates`), the weighted merge
reads both sides' real scores over the union of both lists, and the per-document duplicate
penalty (``TRILHA_DOC_PENALTY``) applies. Units are aggregated to documents by their best unit.
Scores are :func:`trilha.eval.metrics.ndcg_per_query`'s, the nDCG of ``trilha eval``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from trilha.eval.metrics import ndcg_per_query
from trilha.retrieve import fusion as arithmetic
from trilha.retrieve.fusion_table import Fusion
from trilha.retrieve.plan import per_side_candidates
from trilha.tune.candidates import POOL, Candidates, Floats


def _own(c: Candidates, values: Floats, rank: npt.NDArray[np.int64], n: int) -> dict[str, float]:
    """A side's own candidates (its ``n`` best ranks), best first, with their scores."""
    inside = np.flatnonzero(rank <= n)
    return {c.units[r]: float(values[r]) for r in inside[np.argsort(rank[inside], kind="stable")]}


def fuse(
    c: Candidates, fusion: Fusion, top_k: int, cap: int = POOL, doc_penalty: float = 0.0
) -> list[str]:
    """The documents a hybrid search returns for ``c``'s query, best first."""
    n_b = per_side_candidates(top_k, None, cap, fusion.depth_bm25)
    n_s = per_side_candidates(top_k, None, cap, fusion.depth_semantic)
    bm25 = _own(c, c.bm25, c.bm25_rank, n_b)
    semantic = _own(c, c.semantic, c.semantic_rank, n_s)
    filled = None
    if bm25 and semantic:  # sides.complete: every unit of the union, both real scores
        union = np.flatnonzero((c.bm25_rank <= n_b) | (c.semantic_rank <= n_s))
        filled = (
            {c.units[r]: float(c.bm25[r]) for r in union},
            {c.units[r]: float(c.semantic[r]) for r in union},
        )
    fused = arithmetic.fuse(fusion, bm25, semantic, filled=filled)
    doc_of = dict(zip(c.units, c.docs, strict=True))
    units, _ = arithmetic.ranked(fused, bm25, semantic, doc_of, doc_penalty)
    return list(dict.fromkeys(doc_of[u] for u in units[:top_k]))


def ndcg_matrix(
    queries: Sequence[Candidates],
    settings: Sequence[Fusion],
    top_k: int,
    cap: int = POOL,
    doc_penalty: float = 0.0,
) -> npt.NDArray[np.float64]:
    """nDCG@10 of every setting (rows) on every query (columns)."""
    qrels = {c.query_id: c.relevant for c in queries}
    rows = []
    for f in settings:
        ranked = {c.query_id: fuse(c, f, top_k, cap, doc_penalty) for c in queries}
        per_q = ndcg_per_query(qrels, ranked)
        rows.append([per_q[c.query_id] for c in queries])
    return np.array(rows, dtype=np.float64).reshape(len(settings), len(queries))


def mean_ndcg(
    queries: Sequence[Candidates], fusion: Fusion, top_k: int, doc_penalty: float = 0.0
) -> float:
    """Mean nDCG@10 of ``fusion`` over ``queries``."""
    if not queries:
        return 0.0
    return float(ndcg_matrix(queries, [fusion], top_k, doc_penalty=doc_penalty).mean())
