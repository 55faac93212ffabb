"""BM25 as Qdrant sparse vectors with the IDF modifier: a lexical side that several service
processes can share through one Qdrant server (the bm25s index lives in one process's memory).

A unit's sparse vector holds, for each of its terms (the same analysed tokens the bm25s side
indexes), the term's BM25 saturation ``tf / (tf + k1·(1 − b + b·dl/avgdl))``; a query's
holds each term's count. Qdrant multiplies by the term's IDF (``ln(1 + (N − df + 0.5)/(df +
0.5))``, computed over the collection at query time, so it follows ingests) and sums: Lucene's
BM25, the variant bm25s runs. ``avgdl`` is fixed when a unit is written, so a corpus whose
lengths drift a lot should be re-indexed now and then. Term ids are a stable 32-bit hash of the
token, so every process agrees on them without a shared vocabulary (two terms sharing a hash
would add their weights; at 2³² ids a 100k-term vocabulary collides a handful of times).

:func:`sparse_side` is a :class:`~trilha.retrieve.sides.SideResult` like the bm25s side's, with
the caller's visibility and filters applied by Qdrant as a payload filter.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from qdrant_client import QdrantClient, models

from trilha.index.filters import FilterExpr
from trilha.index.qdrant_schema import FilterCompiler, point_id
from trilha.types import StageTrace, TextUnit

#: The sparse vector's name in the collection.
VECTOR = "bm25"
#: Units written per upsert.
BATCH = 512


def term_id(token: str) -> int:
    """A token's sparse index: the first 4 bytes of its blake2b digest."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "big")


def saturated(tokens: Sequence[str], avgdl: float, k1: float, b: float) -> models.SparseVector:
    """A unit's sparse vector: BM25 term saturation by term id."""
    counts = Counter(term_id(t) for t in tokens)
    norm = k1 * (1 - b + b * len(tokens) / avgdl) if avgdl > 0 else k1
    ids = sorted(counts)
    return models.SparseVector(indices=ids, values=[counts[i] / (counts[i] + norm) for i in ids])


def query_vector(tokens: Sequence[str]) -> models.SparseVector:
    """A query's sparse vector: each term's count."""
    counts = Counter(term_id(t) for t in tokens)
    ids = sorted(counts)
    return models.SparseVector(indices=ids, values=[float(counts[i]) for i in ids])


class SparseLexical:
    """BM25 over units in a Qdrant collection of sparse vectors (local folder or server)."""

    def __init__(
        self,
        client: QdrantClient,
        collection: str = "trilha_bm25",
        k1: float = 1.5,
        b: float = 0.75,
    ) -> None:
        self.client = client
        self.collection = collection
        self.k1, self.b = k1, b
        self._filters = FilterCompiler(models)
        if not client.collection_exists(collection):
            client.create_collection(
                collection,
                vectors_config={},
                sparse_vectors_config={
                    VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)
                },
            )

    def index(self, units: Sequence[TextUnit], tokens: Sequence[list[str]]) -> None:
        """Write ``units`` (their payloads, for filters) with their tokens' vectors."""
        lengths = [len(t) for t in tokens]
        avgdl = sum(lengths) / len(lengths) if lengths else 0.0
        for start in range(0, len(units), BATCH):
            points = [
                models.PointStruct(
                    id=point_id(u.unit_id),
                    vector={VECTOR: saturated(t, avgdl, self.k1, self.b)},
                    payload={**u.payload(), "unit_id": u.unit_id},
                )
                for u, t in zip(
                    units[start : start + BATCH], tokens[start : start + BATCH], strict=True
                )
            ]
            self.client.upsert(self.collection, points)

    def top(
        self, tokens: Sequence[str], k: int, expr: FilterExpr | None = None
    ) -> dict[str, float]:
        """The best ``k`` units for a query's tokens among those ``expr`` keeps, by unit id."""
        if not tokens or k <= 0:
            return {}
        native = self._filters.compile(expr) if expr is not None and not expr.is_empty() else None
        return self._query(query_vector(tokens), k, native)

    def scores_of(self, tokens: Sequence[str], unit_ids: Sequence[str]) -> dict[str, float]:
        """The BM25 score of each of ``unit_ids`` (absent: no query term)."""
        if not tokens or not unit_ids:
            return {}
        only = models.Filter(must=[models.HasIdCondition(has_id=[point_id(u) for u in unit_ids])])
        return self._query(query_vector(tokens), len(unit_ids), only)

    def _query(self, vector: models.SparseVector, k: int, native: Any) -> dict[str, float]:
        found = self.client.query_points(
            self.collection, query=vector, using=VECTOR, limit=k, query_filter=native,
            with_payload=["unit_id"],
        ).points  # fmt: skip
        return {str((p.payload or {})["unit_id"]): float(p.score) for p in found}


def sparse_side(
    index: SparseLexical, tokens: Sequence[str], n: int, expr: FilterExpr | None
) -> tuple[dict[str, float], StageTrace]:
    """The top ``n`` units (visibility and filters in ``expr``) and the stage's trace."""
    start = time.perf_counter()
    scores = index.top(tokens, n, expr)
    ms = (time.perf_counter() - start) * 1000.0
    return scores, StageTrace(name="bm25", latency_ms=ms, count=len(scores), note="qdrant sparse")
