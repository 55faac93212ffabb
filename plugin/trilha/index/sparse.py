"""BM25 in a Qdrant collection of sparse vectors: a lexical side that several service processes
can share through one Qdrant server (the bm25s-style index lives in one process's memory).

Qdrant's IDF modifier counts every point of the collection, and a length normalisation written
into the vectors counts every unit written with them: both would let hidden units move the
scores a caller sees. So the collection stores no statistic. A unit's sparse vector holds,
for each of its terms (the same analysed tokens the in-memory side indexes), ``tf / (tf + k1)``,
and its payload its length and its terms' ids and counts. A query then

1. takes the statistics of what the caller may see (``visible``), each a Qdrant count or facet
   under the caller's visibility filter: ``N``, each query term's document frequency, and the
   lengths (avgdl);
2. asks Qdrant for the best ``max(4·k, 100)`` visible units matching the caller's filters by
   ``Σ count·idf·tf/(tf + k1)`` (BM25 without length normalisation), with the visible IDF as
   the query's weights;
3. scores those exactly: Lucene's BM25 over the visible statistics
   (:func:`~trilha.index.bm25.idf`, :func:`~trilha.index.bm25.saturation`), the formula the
   in-memory side runs, and keeps the best ``k``.

Every number in it comes from visible units, so a hidden unit moves no score and no candidate.
A unit outside the pool of step 2 that length normalisation would lift into the top ``k`` is
missed (the pool is 4·k deep for that). Term ids are a stable 32-bit hash of the token, so
every process agrees on them without a shared vocabulary (two terms sharing a hash would add
their weights; at 2³² ids a 100k-term vocabulary collides a handful of times).

:func:`sparse_side` is a :class:`~trilha.retrieve.pipeline.SideResult` like the in-memory side's,
with the caller's visibility and filters applied by Qdrant as a payload filter.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections import Counter
from collections.abc import Sequence
from typing import Any

from qdrant_client import QdrantClient, models

from trilha.errors import ConfigurationError
from trilha.index.bm25 import VisibleStats, idf, query_counts
from trilha.index.filters import FilterExpr, combine
from trilha.index.qdrant_schema import FilterCompiler, point_id
from trilha.types import StageTrace, TextUnit

#: The sparse vector's name in the collection (``tf / (tf + k1)`` by term id).
VECTOR = "bm25_tf"
#: Payload keys: the unit's length, its terms' ids and their counts (aligned).
LENGTH, TERMS, COUNTS = "bm25_len", "bm25_terms", "bm25_tf"
#: What a search reads of each point.
READ = ["unit_id", LENGTH, TERMS, COUNTS]
#: Units written per upsert.
BATCH = 512
#: Candidates scored exactly: ``max(POOL_FACTOR·k, POOL_MIN)``.
POOL_FACTOR, POOL_MIN = 4, 100
#: Distinct lengths one facet request reads (more: the lengths are scrolled instead).
FACET_LIMIT = 10_000


def term_id(token: str) -> int:
    """A token's sparse index: the first 4 bytes of its blake2b digest."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "big")


def term_counts(tokens: Sequence[str]) -> dict[int, int]:
    """Each term id's count, by term id."""
    counts = Counter(term_id(t) for t in tokens)
    return {i: counts[i] for i in sorted(counts)}


def blind_saturation(counts: dict[int, int], k1: float) -> models.SparseVector:
    """A unit's sparse vector: ``tf / (tf + k1)`` by term id (no statistic in it)."""
    return models.SparseVector(
        indices=list(counts), values=[tf / (tf + k1) for tf in counts.values()]
    )


def _and(*parts: Any) -> models.Filter | None:
    kept = [p for p in parts if p is not None]
    return models.Filter(must=kept) if kept else None


class SparseLexical:
    """BM25 over units in a Qdrant collection of sparse vectors (local folder or server)."""

    def __init__(
        self,
        client: QdrantClient,
        collection: str = "trilha_bm25",
        k1: float = 1.5,
        b: float = 0.75,
    ) -> None:
        if k1 <= 0:
            raise ConfigurationError(f"BM25 k1 must be positive for the sparse side, got {k1}")
        self.client = client
        self.collection = collection
        self.k1, self.b = k1, b
        self._filters = FilterCompiler(models)
        if not client.collection_exists(collection):
            client.create_collection(
                collection,
                vectors_config={},
                sparse_vectors_config={VECTOR: models.SparseVectorParams()},
            )
            with warnings.catch_warnings():  # local mode: "payload indexes have no effect"
                warnings.filterwarnings("ignore", "Payload indexes have no effect")
                for key in (LENGTH, TERMS):
                    client.create_payload_index(collection, key, models.PayloadSchemaType.INTEGER)
        elif VECTOR not in (client.get_collection(collection).config.params.sparse_vectors or {}):
            raise ConfigurationError(
                f"Qdrant collection {collection!r} holds BM25 vectors of an older trilha "
                "(statistics of every unit in them); delete it and index the units again"
            )

    def index(self, units: Sequence[TextUnit], tokens: Sequence[list[str]]) -> None:
        """Write ``units`` (their payloads, for filters) with their tokens' vectors."""
        for start in range(0, len(units), BATCH):
            batch = zip(units[start : start + BATCH], tokens[start : start + BATCH], strict=True)
            self.client.upsert(self.collection, [self._point(u, t) for u, t in batch])

    def _point(self, unit: TextUnit, tokens: Sequence[str]) -> models.PointStruct:
        counts = term_counts(tokens)
        payload = {**unit.payload(), "unit_id": unit.unit_id, LENGTH: max(len(tokens), 1),
                   TERMS: list(counts), COUNTS: list(counts.values())}  # fmt: skip
        vector = {VECTOR: blind_saturation(counts, self.k1)}
        return models.PointStruct(id=point_id(unit.unit_id), vector=vector, payload=payload)

    # -- the statistics of what the caller may see ------------------------------------------
    def _native(self, expr: FilterExpr | None) -> Any:
        return self._filters.compile(expr) if expr is not None and not expr.is_empty() else None

    def _count(self, native: Any) -> int:
        return self.client.count(self.collection, count_filter=native, exact=True).count

    def _stats(self, native: Any) -> VisibleStats:
        """``N`` and avgdl over the points ``native`` keeps."""
        n = self._count(native)
        if n == 0:
            return VisibleStats(0, 0.0)
        facet = self.client.facet(
            self.collection, LENGTH, facet_filter=native, limit=FACET_LIMIT, exact=True
        )
        if sum(h.count for h in facet.hits) == n:
            return VisibleStats(n, sum(int(h.value) * h.count for h in facet.hits) / n)
        total, offset = 0, None
        while True:  # more distinct lengths than one facet reads
            page, offset = self.client.scroll(self.collection, native, limit=4096,
                                              offset=offset, with_payload=[LENGTH])  # fmt: skip
            total += sum(int((p.payload or {})[LENGTH]) for p in page)
            if offset is None:
                return VisibleStats(n, total / n)

    def _weights(
        self, tokens: Sequence[str], visible: FilterExpr | None
    ) -> tuple[dict[int, float], VisibleStats]:
        """Each query term's ``count·idf`` over the visible points (terms none of them holds
        left out), and their statistics."""
        native = self._native(visible)
        stats = self._stats(native)
        weights: dict[int, float] = {}
        if stats.n == 0:
            return weights, stats
        for token, count in query_counts(tokens).items():
            term = term_id(token)
            has = models.FieldCondition(key=TERMS, match=models.MatchValue(value=term))
            df = self._count(_and(native, has))
            if df:
                weights[term] = weights.get(term, 0.0) + count * idf(df, stats.n)
        return weights, stats

    # -- searches -----------------------------------------------------------------------------
    def top(
        self,
        tokens: Sequence[str],
        k: int,
        expr: FilterExpr | None = None,
        visible: FilterExpr | None = None,
    ) -> dict[str, float]:
        """The best ``k`` units for a query's tokens among the ``visible`` ones (the caller's
        visibility; everyone: None) that ``expr`` keeps, by unit id, scored with the
        statistics of the ``visible`` units."""
        if not tokens or k <= 0:
            return {}
        weights, stats = self._weights(tokens, visible)
        if not weights:
            return {}
        query = models.SparseVector(indices=list(weights), values=list(weights.values()))
        found = self.client.query_points(
            self.collection, query=query, using=VECTOR, limit=max(POOL_FACTOR * k, POOL_MIN),
            query_filter=self._native(combine(visible, expr)), with_payload=READ,
        ).points  # fmt: skip
        scored = self._rescore(found, weights, stats)
        return dict(sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:k])

    def scores_of(
        self, tokens: Sequence[str], unit_ids: Sequence[str], visible: FilterExpr | None = None
    ) -> dict[str, float]:
        """The BM25 score of each of ``unit_ids`` the caller may see (absent: no query term,
        or not visible), with the statistics of the ``visible`` units."""
        if not tokens or not unit_ids:
            return {}
        weights, stats = self._weights(tokens, visible)
        if not weights:
            return {}
        only = models.HasIdCondition(has_id=[point_id(u) for u in unit_ids])
        found, _ = self.client.scroll(
            self.collection, _and(self._native(visible), only), limit=len(unit_ids),
            with_payload=READ,
        )  # fmt: skip
        return self._rescore(found, weights, stats)

    def _rescore(
        self, points: Sequence[Any], weights: dict[int, float], stats: VisibleStats
    ) -> dict[str, float]:
        """Lucene's BM25 of each point (those holding a query term) over ``stats``."""
        out: dict[str, float] = {}
        for p in points:
            payload = p.payload or {}
            tf_of = dict(zip(payload[TERMS], payload[COUNTS], strict=True))
            norm = self.k1 * (1.0 - self.b + self.b * payload[LENGTH] / stats.avgdl)
            score = sum(
                w * (tf_of[t] / (tf_of[t] + norm)) for t, w in weights.items() if t in tf_of
            )
            if score > 0:
                out[str(payload["unit_id"])] = score
        return out


def sparse_side(
    index: SparseLexical,
    tokens: Sequence[str],
    n: int,
    expr: FilterExpr | None,
    visible: FilterExpr | None = None,
) -> tuple[dict[str, float], StageTrace]:
    """The top ``n`` units the caller may see (``visible``) that ``expr`` keeps, scored with
    the statistics of the visible units, and the stage's trace."""
    start = time.perf_counter()
    scores = index.top(tokens, n, expr, visible)
    ms = (time.perf_counter() - start) * 1000.0
    return scores, StageTrace(name="bm25", latency_ms=ms, count=len(scores), note="qdrant sparse")
