"""The two sides of a hybrid search, each a ranked candidate list and a way to score others.

:func:`bm25_side` ranks rows of one lexical snapshot under a row mask, with BM25 statistics
over the rows the caller may see; :func:`dense_side` asks the dense index with a filter
(encoding the query first when no vector is given). Each returns a :class:`SideResult` whose
``fill`` scores any other unit on that side, so :func:`complete` can give every candidate of
the union its real score on both sides before the weighted merge.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from trilha.encode.base import Embedder
from trilha.errors import BackendUnavailableError
from trilha.index.columns import BoolArray
from trilha.index.dense import DenseIndex
from trilha.index.filters import FilterExpr
from trilha.index.lexical import LexicalIndex
from trilha.types import Side, StageTrace, Trace

Filler = Callable[[Sequence[str]], dict[str, float]]


class SideResult(NamedTuple):
    """One side's ranked candidates, its stage traces, and how to score any other unit."""

    scores: dict[str, float]
    stages: list[StageTrace]
    fill: Filler | None = None


def elapsed_ms(start: float) -> float:
    """Milliseconds since ``start`` (a :func:`time.perf_counter` reading)."""
    return (time.perf_counter() - start) * 1000.0


def bm25_side(
    lexical: LexicalIndex,
    text: str,
    n: int,
    mask: BoolArray | None,
    visible: BoolArray | None = None,
) -> SideResult:
    """The top ``n`` rows of ``lexical`` for ``text`` among the rows ``mask`` keeps, scored
    with the statistics of the rows the caller may see (``visible``; all rows: None)."""
    start = time.perf_counter()
    everything = lexical.score_all(text, visible)
    rows = lexical.top(everything, n, mask)
    scores = {lexical.units[r].unit_id: s for r, s in rows}

    def fill(unit_ids: Sequence[str]) -> dict[str, float]:
        if everything is None:
            return {}
        rows_of = ((u, lexical.row_of.get(u)) for u in unit_ids)
        return {u: float(everything[r]) for u, r in rows_of if r is not None}

    stage = StageTrace(name="bm25", latency_ms=elapsed_ms(start), count=len(scores))
    return SideResult(scores, [stage], fill)


def dense_side(
    dense: DenseIndex,
    embedder: Embedder,
    text: str,
    n: int,
    expr: FilterExpr | None,
    vector: npt.NDArray[np.float32] | None,
) -> SideResult:
    """The top ``n`` units of ``dense`` matching ``expr`` by cosine to the query's vector."""
    stages = []
    if vector is None:
        start = time.perf_counter()
        try:
            vector = embedder.encode_queries([text])[0]
        except BackendUnavailableError as e:  # a remote encoder that is down: BM25 goes on alone
            note = f"query encoder unavailable ({e}); the dense side returned nothing"
            stage = StageTrace(name="encode", latency_ms=elapsed_ms(start), count=0, note=note)
            return SideResult({}, [stage])
        stages.append(StageTrace(name="encode", latency_ms=elapsed_ms(start), count=1))
    start = time.perf_counter()
    scores = dict(dense.search(vector, n, expr))
    stages.append(StageTrace(name="dense", latency_ms=elapsed_ms(start), count=len(scores)))
    query = vector

    def fill(unit_ids: Sequence[str]) -> dict[str, float]:
        stored = dense.vectors(list(unit_ids))
        return {u: float(np.dot(v, query)) for u, v in stored.items()}

    return SideResult(scores, stages, fill)


def complete(
    sides: Mapping[Side, SideResult],
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
    pairs: tuple[tuple[Side, dict[str, float], dict[str, float]], ...] = (
        ("bm25", bm25, sem),
        ("semantic", sem, bm25),
    )
    for name, own, other in pairs:
        fill = sides[name].fill
        missing = [u for u in other if u not in own]
        out.append({**fill(missing), **own} if fill and missing else own)
    added = len(out[0]) + len(out[1]) - len(bm25) - len(sem)
    trace.stages.append(StageTrace(name="fill", latency_ms=elapsed_ms(start), count=added))
    return out[0], out[1]
