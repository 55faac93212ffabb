"""Each training query's candidates, scored once on both sides, so that every fusion setting can
be replayed without searching again.

For a query, the BM25 side's and the dense side's top :data:`POOL` units are kept, and every unit
of their union gets its real score on both sides (BM25 from the full score vector, the cosine
from the stored vectors), exactly what :func:`trilha.retrieve.pipeline.complete` gives a search.
A side fetching ``n ≤ POOL`` candidates is then its ``n`` best ranks, and the fusion of
:mod:`trilha.tune.replay` reproduces :func:`trilha.retrieve.pipeline.merged` (without filters
or the graph boost, as ``trilha eval``'s ``hybrid_weighted`` and ``hybrid_rrf`` run).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from tqdm.auto import tqdm

from trilha.eval.beir import BeirQuery, Qrels
from trilha.workspace import Workspace

#: Candidates kept per side: the most any side fetches (TRILHA_CANDIDATE_CAP's default).
POOL = 100
#: Rank of a unit a side did not return.
UNRANKED = np.iinfo(np.int32).max

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Candidates:
    """One query's union of both sides' top :data:`POOL`, with both scores and ranks."""

    query_id: str
    docs: tuple[str, ...]  # document of each unit of the union
    units: tuple[str, ...]  # unit ids, for tie-breaks as the searcher breaks them
    bm25: Floats
    bm25_rank: Ints  # 1-based; UNRANKED when outside BM25's top POOL (or score 0)
    semantic: Floats
    semantic_rank: Ints
    relevant: dict[str, int]  # qrels of the query: doc id -> grade


def _top(scores: Floats, n: int) -> Ints:
    """Rows of the ``n`` best cosines, best first."""
    return np.argsort(-scores, kind="stable")[:n]


def _ranks(rows: Ints, union: Ints) -> Ints:
    rank_of = {int(r): i + 1 for i, r in enumerate(rows)}
    return np.array([rank_of.get(int(r), UNRANKED) for r in union], dtype=np.int64)


class Sides:
    """Both sides of a workspace (its whole corpus) for a list of queries, made once: the dense
    side's top :data:`POOL` per query is found here, and :meth:`candidates` scores BM25 with a
    given ``k1`` and ``b`` around it (``trilha tune`` tries many pairs; the dense side is the
    same for all)."""

    def __init__(
        self, ws: Workspace, queries: Sequence[BeirQuery], qrels: Qrels, progress: bool = False
    ) -> None:
        lexical = ws.searcher.lexical
        if lexical.dead or lexical.segments > 1:  # rows here are positions among the units
            lexical = lexical.compacted()
        self.lexical, self.queries, self.qrels, self.progress = lexical, queries, qrels, progress
        self.units = lexical.units
        self.docs = [u.doc_id for u in self.units]
        stored = ws.vectors([u.unit_id for u in self.units])
        self.matrix = np.stack([stored[u.unit_id] for u in self.units]).astype(np.float32)
        self.vectors = np.asarray(
            ws.embedder.encode_queries([q.text for q in queries]), dtype=np.float32
        )
        self.dense_rows = [_top((self.matrix @ v).astype(np.float64), POOL) for v in self.vectors]

    def candidates(self, k1: float | None = None, b: float | None = None) -> list[Candidates]:
        """Every query's :class:`Candidates`, BM25 scored with ``k1`` and ``b`` (None: the
        index's)."""
        out = []
        n = len(self.units)
        rows = tqdm(
            zip(self.queries, self.vectors, self.dense_rows, strict=True), total=len(self.queries),
            desc="score sides", unit="q", disable=not self.progress,
        )  # fmt: skip
        for q, vector, s_rows in rows:
            bm25 = self.lexical.score_all(q.text, k1=k1, b=b)
            bm25 = np.zeros(n) if bm25 is None else bm25
            b_rows = np.array([r for r, _ in self.lexical.top(bm25, POOL)], dtype=np.int64)
            union = np.array(list(dict.fromkeys([*b_rows.tolist(), *s_rows.tolist()])), np.int64)
            out.append(
                Candidates(
                    query_id=q.query_id,
                    docs=tuple(self.docs[r] for r in union),
                    units=tuple(self.units[r].unit_id for r in union),
                    bm25=bm25[union].astype(np.float64),
                    bm25_rank=_ranks(b_rows, union),
                    semantic=(self.matrix[union] @ vector).astype(np.float64),
                    semantic_rank=_ranks(s_rows, union),
                    relevant=dict(self.qrels.get(q.query_id, {})),
                )
            )
        return out


def collect(
    ws: Workspace,
    queries: Sequence[BeirQuery],
    qrels: Qrels,
    progress: bool = False,
    *,
    k1: float | None = None,
    b: float | None = None,
) -> list[Candidates]:
    """Score every query of ``queries`` on both sides of ``ws`` (its whole corpus), BM25 with
    ``k1`` and ``b`` (None: the index's)."""
    return Sides(ws, queries, qrels, progress).candidates(k1, b)
