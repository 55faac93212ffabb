"""BM25 on bm25s against BM25 as Qdrant sparse vectors (IDF modifier, local mode) on a BEIR
folder: the same analysed tokens indexed both ways, each query scored by both, and what differs
— nDCG@10, the top-10 lists, the scores themselves, and the query latency."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from trilha.errors import requires_extra
from trilha.eval.beir import load_beir
from trilha.eval.metrics import evaluate
from trilha.index.lexical import LexicalIndex
from trilha.index.tokenize import tokenize
from trilha.types import TextUnit

with requires_extra("eval", "the sparse BM25 comparison (qdrant-client)"):
    from qdrant_client import QdrantClient

    from trilha.index.sparse import SparseLexical

#: The depth each side ranks to (what nDCG@10 and the overlap read).
DEPTH = 10


def compare_lexical(
    data: Path, split: str = "test", lang: str = "en", max_queries: int | None = None
) -> dict[str, Any]:
    """nDCG@10 of both sides, their mean top-10 overlap, the largest relative score gap over
    the units both rank, and each side's query P50."""
    dataset = load_beir(data, split)
    units = [TextUnit(unit_id=d.doc_id, doc_id=d.doc_id, text=d.text, title=d.meta.get("title"),
                      lang=lang) for d in dataset.documents()]  # fmt: skip
    tokens = [tokenize(" ".join(filter(None, [u.title, u.text])), lang) for u in units]
    lexical = LexicalIndex.build(units, tokens)
    queries = dataset.queries[:max_queries] if max_queries else dataset.queries
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        sparse = SparseLexical(QdrantClient(path=folder))
        sparse.index(units, tokens)
        index_s = time.perf_counter() - start
        runs, gaps, overlaps, ms = _score(lexical, sparse, units, queries)
    return {
        "dataset": dataset.name,
        "queries": len(queries),
        "units": len(units),
        "ndcg@10": {
            side: round(evaluate(dataset.qrels, run)["ndcg@10"], 4) for side, run in runs.items()
        },
        "top10_overlap": round(float(np.mean(overlaps)), 4),
        "max_relative_score_gap": float(max(gaps, default=0.0)),
        "p50_ms": {side: round(float(np.percentile(v, 50)), 2) for side, v in ms.items()},
        "sparse_index_s": round(index_s, 1),
    }


def _score(
    lexical: LexicalIndex, sparse: SparseLexical, units: list[TextUnit], queries: list[Any]
) -> tuple[
    dict[str, dict[str, dict[str, float]]], list[float], list[float], dict[str, list[float]]
]:
    runs: dict[str, dict[str, dict[str, float]]] = {"bm25s": {}, "qdrant_sparse": {}}
    gaps: list[float] = []
    overlaps: list[float] = []
    ms: dict[str, list[float]] = {"bm25s": [], "qdrant_sparse": []}
    for q in queries:
        t0 = time.perf_counter()
        rows = lexical.top(lexical.score_all(q.text), DEPTH)
        t1 = time.perf_counter()
        theirs = sparse.top(lexical.query_tokens(q.text), DEPTH)
        t2 = time.perf_counter()
        ours = {units[r].unit_id: s for r, s in rows}
        ms["bm25s"].append((t1 - t0) * 1000)
        ms["qdrant_sparse"].append((t2 - t1) * 1000)
        runs["bm25s"][q.query_id], runs["qdrant_sparse"][q.query_id] = ours, theirs
        shared = ours.keys() & theirs.keys()
        overlaps.append(len(shared) / max(len(ours), len(theirs), 1))
        gaps += [abs(ours[u] - theirs[u]) / max(ours[u], 1e-9) for u in shared]
    return runs, gaps, overlaps, ms
