"""The synthetic scale test: ``N`` units drawn from a corpus's vocabulary, random unit vectors
(:class:`RandomEmbedder`, so nothing is encoded), and hybrid search timed with real query vectors,
plain and filtered."""

from __future__ import annotations

import re
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import date, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from trilha.encode.base import Embedder
from trilha.eval.beir import BeirDataset
from trilha.eval.timing import latency_summary, stage_p50, time_calls
from trilha.index.filter_input import coerce_filters
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.types import Trace
from trilha.workspace import Workspace

SCALE_TAGS = ("contrato", "lgpd", "licitacao", "rh", "financeiro", "ti", "juridico", "auditoria")


class RandomEmbedder:
    """Unit-normalised random float32 vectors from a fixed seed: an index at scale, no model."""

    def __init__(self, dimension: int = 384, seed: int = 7) -> None:
        self._dimension = dimension
        self._rng = np.random.default_rng(seed)

    @property
    def model_id(self) -> str:
        """Identifies the fake encoder in ``workspace.json``."""
        return f"random-unit-vectors-{self._dimension}"

    @property
    def dimension(self) -> int:
        """Vector size."""
        return self._dimension

    def _draw(self, n: int) -> npt.NDArray[np.float32]:
        v = self._rng.standard_normal((n, self._dimension), dtype=np.float32)
        return np.asarray(v / np.linalg.norm(v, axis=1, keepdims=True), dtype=np.float32)

    def encode_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Random vectors, one per text."""
        return self._draw(len(texts))

    def encode_documents(
        self, texts: Sequence[str], show_progress: bool = False
    ) -> npt.NDArray[np.float32]:
        """Random vectors, one per text."""
        return self._draw(len(texts))


def corpus_vocabulary(ds: BeirDataset) -> tuple[list[str], npt.NDArray[np.float64]]:
    """Words of the corpus and their cumulative frequency distribution."""
    counts: Counter[str] = Counter()
    for doc in ds.documents():
        counts.update(re.findall(r"[^\W\d_]{2,}", doc.text.lower()))
    words = list(counts)
    freq = np.asarray([counts[w] for w in words], dtype=np.float64)
    return words, np.cumsum(freq) / freq.sum()


def synthetic_documents(
    n: int, words: Sequence[str], cdf: npt.NDArray[np.float64], seed: int = 7
) -> Iterator[SourceDocument]:
    """``n`` one-unit documents: 40-160 words drawn by corpus frequency, lang en/pt, 1-2 tags
    of :data:`SCALE_TAGS`, a date in 2010-2024."""
    rng = np.random.default_rng(seed)
    vocab = np.asarray(words, dtype=object)
    for i in range(n):
        picks = np.searchsorted(cdf, rng.random(int(rng.integers(40, 161))))
        tags = rng.choice(len(SCALE_TAGS), size=int(rng.integers(1, 3)), replace=False)
        day = date(int(rng.integers(2010, 2025)), 1, 1) + timedelta(int(rng.integers(0, 365)))
        yield SourceDocument(
            doc_id=f"syn-{i}",
            text=" ".join(vocab[np.minimum(picks, len(vocab) - 1)]),
            source_type="synthetic",
            whole=True,
            meta={
                "lang": "pt" if rng.random() < 0.5 else "en",
                "date": day.isoformat(),
                "tags": [SCALE_TAGS[t] for t in tags],
            },
        )


def scale_filters(i: int) -> dict[str, Any]:
    """The ``i``-th query's filter: lang pt, one tag (rotating), 2019-2021."""
    return {
        "lang": "pt",
        "tags": [SCALE_TAGS[i % len(SCALE_TAGS)]],
        "data_inicio": "2019-01-01",
        "data_fim": "2021-12-31",
    }


def bench_scale(
    ds: BeirDataset,
    n: int,
    encoder: Embedder,
    texts: Sequence[str],
    settings: TrilhaSettings,
    progress: bool,
) -> dict[str, Any]:
    """Build an ``n``-unit synthetic workspace and time hybrid search, plain and filtered."""
    words, cdf = corpus_vocabulary(ds)
    vectors = encoder.encode_queries(list(texts))
    with tempfile.TemporaryDirectory(prefix="trilha-bench-scale-") as tmp:
        start = time.perf_counter()
        with Workspace.open(
            tmp, settings, embedder=RandomEmbedder(vectors.shape[1]), create=True
        ) as ws:
            ws.ingest(synthetic_documents(n, words, cdf), progress=progress)
            build = time.perf_counter() - start
            plain, plain_traces = _time_search(ws, texts, vectors, False, progress)
            filtered, filtered_traces = _time_search(ws, texts, vectors, True, progress)
            return {
                "units": len(ws),
                "hybrid_p50_ms": latency_summary(plain)["p50_ms"],
                "hybrid_filtered_p50_ms": latency_summary(filtered)["p50_ms"],
                "build_seconds": round(build, 2),
                "queries": len(texts),
                "filter_example": scale_filters(0),
                "filter_example_matches": _matching_units(ws, scale_filters(0)),
                "stages": stage_p50(plain_traces),
                "stages_filtered": stage_p50(filtered_traces),
            }


def _time_search(
    ws: Workspace,
    texts: Sequence[str],
    vectors: npt.NDArray[np.float32],
    filtered: bool,
    progress: bool,
) -> tuple[list[float], list[Trace]]:
    """Hybrid search (top 10) of each text with its own vector; the ``i``-th text filtered by
    :func:`scale_filters` ``(i)`` when ``filtered``."""
    row = {t: i for i, t in enumerate(texts)}

    def call(text: str) -> Trace:
        i = row[text]
        extra = {"filters": scale_filters(i)} if filtered else {}
        return ws.search(text, top_k=10, vector=vectors[i], **extra).trace

    desc = "scale filtered" if filtered else "scale"
    return time_calls(call, texts, desc=desc, progress=progress)


def _matching_units(ws: Workspace, filters: dict[str, Any]) -> int:
    return ws.count_matching(coerce_filters(filters))
