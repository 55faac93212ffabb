"""The synthetic scale test: ``N`` units made from a corpus's words, vectors that follow their
text without a model, the dense index's HNSW built, then hybrid, filtered, dense and BM25 search
timed, dense recall@10 measured against exact search, and 1,000 documents added while a search
runs.

Vectors are no encoder's (encoding is excluded, and the JSON says so): each unit's bag of words
goes through a fixed projection (:class:`ProjectionEmbedder`: the corpus's latent semantic
analysis, idf-weighted, normalised), and so does each query. Each synthetic unit takes most of
its words from one real document of the corpus (its topic), so units about the same topic are
near each other, as with a real encoder; random vectors (:class:`RandomEmbedder`) have no
neighbourhoods, and HNSW recall on them says nothing."""

from __future__ import annotations

import re
import resource
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tqdm.auto import tqdm

from trilha.eval.beir import BeirDataset
from trilha.eval.timing import latency_summary, stage_p50, time_calls
from trilha.index.filter_input import coerce_filters
from trilha.index.qdrant_edge import QdrantEdgeIndex
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.types import SearchResult, Trace
from trilha.workspace import Workspace

SCALE_TAGS = ("contrato", "lgpd", "licitacao", "rh", "financeiro", "ti", "juridico", "auditoria")
#: Documents added to the built index, timed, while a search runs.
ADDED_DOCS = 1_000
#: Share of a synthetic unit's words taken from its topic document (the rest by frequency).
TOPIC_SHARE = 0.7
_WORD = re.compile(r"[^\W\d_]{2,}")
#: What the scale JSON says of its vectors and timings.
SCALE_NOTE = (
    "encoding excluded: units and queries get vectors from a fixed projection of their bag of "
    "words (the corpus's LSA basis, idf-weighted, normalised; no model runs), so query "
    "encoding is not timed; "
    "each unit draws 70% of its words from one corpus document (its topic); searches are warm, "
    "top_k 10, hybrid = weighted merge without the KG boost (the scale workspace has no graph)"
)


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


@dataclass(frozen=True)
class Vocabulary:
    """A corpus's words, their counts, and each document's words (as indices): the synthetic
    units' topics."""

    words: list[str]
    counts: npt.NDArray[np.float64]
    topics: list[npt.NDArray[np.int64]]

    @property
    def cdf(self) -> npt.NDArray[np.float64]:
        """Cumulative frequency distribution of the words."""
        return np.asarray(np.cumsum(self.counts) / self.counts.sum(), dtype=np.float64)

    @classmethod
    def of(cls, ds: BeirDataset) -> Vocabulary:
        """Words, counts and topics of ``ds``'s corpus."""
        index: dict[str, int] = {}
        counts: Counter[int] = Counter()
        topics: list[npt.NDArray[np.int64]] = []
        for doc in ds.documents():
            ids = [index.setdefault(w, len(index)) for w in _WORD.findall(doc.text.lower())]
            counts.update(ids)
            if ids:
                topics.append(np.asarray(ids, dtype=np.int64))
        freq = np.asarray([counts[i] for i in range(len(index))], dtype=np.float64)
        return cls(list(index), freq, topics)


def corpus_vocabulary(ds: BeirDataset) -> tuple[list[str], npt.NDArray[np.float64]]:
    """Words of the corpus and their cumulative frequency distribution."""
    vocab = Vocabulary.of(ds)
    return vocab.words, vocab.cdf


class _Corpus:
    """The corpus as a sparse documents x words matrix (sqrt term counts times idf), with the
    two products a randomized SVD needs."""

    def __init__(self, vocab: Vocabulary) -> None:
        df = np.zeros(len(vocab.words), dtype=np.float64)
        self.rows: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]] = []
        for ids in vocab.topics:
            cols, counts = np.unique(ids, return_counts=True)
            df[cols] += 1
            self.rows.append((cols, np.sqrt(counts).astype(np.float32)))
        self.idf = np.log(max(len(vocab.topics), 1) / np.maximum(df, 1.0)).astype(np.float32)
        self.rows = [(cols, tf * self.idf[cols]) for cols, tf in self.rows]
        self.width = len(vocab.words)

    def times(self, m: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """A @ m."""
        return np.stack([tf @ m[cols] for cols, tf in self.rows]).astype(np.float32)

    def t_times(self, m: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """A.T @ m."""
        out = np.zeros((self.width, m.shape[1]), dtype=np.float32)
        for (cols, tf), row in zip(self.rows, m, strict=True):
            out[cols] += tf[:, None] * row[None, :]
        return out


def lsa_basis(vocab: Vocabulary, dimension: int, seed: int = 7) -> npt.NDArray[np.float32]:
    """Words x ``dimension`` projection: the corpus's latent semantic directions (the top right
    singular vectors of its tf-idf matrix, by a randomized SVD with a fixed seed), each word's
    row times its idf; columns past the corpus's rank stay zero."""
    corpus = _Corpus(vocab)
    rank = min(dimension, len(vocab.topics), corpus.width)
    out = np.zeros((corpus.width, dimension), dtype=np.float32)
    if rank == 0:
        return out
    probe = np.random.default_rng(seed).standard_normal((corpus.width, rank + 8), np.float32)
    q, _ = np.linalg.qr(corpus.times(probe))
    q, _ = np.linalg.qr(corpus.times(corpus.t_times(q)))  # one power iteration
    _, _, vt = np.linalg.svd(corpus.t_times(q).T, full_matrices=False)
    out[:, :rank] = vt[:rank].T * corpus.idf[:, None]
    return out


class ProjectionEmbedder:
    """Vectors that follow the text, with no model: each text's bag of words (the square root
    of each word's count) through a fixed projection, normalised. The projection is the
    corpus's latent semantic analysis (:func:`lsa_basis`), so texts sharing words, or words
    that share documents, are near each other, and the vectors have the low intrinsic
    dimension of a real encoder's (a random projection's are as hard for HNSW as random
    vectors: recall@10 0.67 against 0.997 at 30k units, ef 128). A text without a known word
    gets a fixed vector."""

    def __init__(self, vocab: Vocabulary, dimension: int = 384, seed: int = 7) -> None:
        self._dimension = dimension
        self._index = {w: i for i, w in enumerate(vocab.words)}
        self._matrix = np.ascontiguousarray(lsa_basis(vocab, dimension, seed))
        rng = np.random.default_rng(seed)
        self._empty = rng.standard_normal(dimension).astype(np.float32)
        self._empty /= np.linalg.norm(self._empty)

    @property
    def model_id(self) -> str:
        """Identifies the projection in ``workspace.json``."""
        return f"bow-projection-{self._dimension}"

    @property
    def dimension(self) -> int:
        """Vector size."""
        return self._dimension

    def _encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            counts = Counter(self._index.get(w, -1) for w in _WORD.findall(text.lower()))
            counts.pop(-1, None)
            if not counts:
                out[row] = self._empty
                continue
            ids = np.fromiter(counts, dtype=np.int64, count=len(counts))
            tf = np.sqrt(np.fromiter(counts.values(), dtype=np.float32, count=len(counts)))
            v = tf @ self._matrix[ids]
            norm = float(np.linalg.norm(v))
            out[row] = v / norm if norm > 0 else self._empty
        return out

    def encode_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One projected vector per text."""
        return self._encode(texts)

    def encode_documents(
        self, texts: Sequence[str], show_progress: bool = False
    ) -> npt.NDArray[np.float32]:
        """One projected vector per text."""
        return self._encode(texts)


def synthetic_documents(
    n: int,
    words: Sequence[str],
    cdf: npt.NDArray[np.float64],
    seed: int = 7,
    topics: Sequence[npt.NDArray[np.int64]] | None = None,
    start: int = 0,
) -> Iterator[SourceDocument]:
    """``n`` one-unit documents ``syn-<start>``…: 40-160 words drawn by corpus frequency (with
    ``topics``, :data:`TOPIC_SHARE` of them from one topic's words), lang en/pt, 1-2 tags of
    :data:`SCALE_TAGS`, a date in 2010-2024."""
    rng = np.random.default_rng(seed)
    vocab = np.asarray(words, dtype=object)
    for i in range(start, start + n):
        picks = np.searchsorted(cdf, rng.random(int(rng.integers(40, 161))))
        if topics:
            topic = topics[int(rng.integers(0, len(topics)))]
            own = rng.random(len(picks)) < TOPIC_SHARE
            picks[own] = topic[rng.integers(0, len(topic), int(own.sum()))]
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
    texts: Sequence[str],
    settings: TrilhaSettings,
    progress: bool,
    folder: Path | str | None = None,
    added: int = ADDED_DOCS,
) -> dict[str, Any]:
    """Build an ``n``-unit synthetic workspace (in ``folder``, else a temporary one) and
    measure it: build and HNSW time, hybrid (plain, filtered), dense and BM25 latency, dense
    recall@10 against exact search, ``added`` documents ingested while a search runs, RSS and
    disk."""
    vocab = Vocabulary.of(ds)
    embedder = ProjectionEmbedder(vocab, settings.embedding_dimension)
    vectors = embedder.encode_queries(list(texts))
    settings = settings.model_copy(update={"graph_backend": "none"})
    with tempfile.TemporaryDirectory(prefix="trilha-bench-scale-", dir=folder) as tmp:
        start = time.perf_counter()
        with Workspace.open(tmp, settings, embedder=embedder, create=True) as ws:
            docs = synthetic_documents(n, vocab.words, vocab.cdf, topics=vocab.topics)
            report = ws.ingest(docs, progress=progress)
            ingest_s = time.perf_counter() - start
            hnsw_s = _settle(ws, progress)
            out: dict[str, Any] = {
                "units": len(ws),
                "note": SCALE_NOTE,
                "build_seconds": round(time.perf_counter() - start, 2),
                "ingest_seconds": round(ingest_s, 2),
                "vectors_seconds_inside_ingest": round(report.encode_seconds, 2),
                "hnsw_wait_seconds": hnsw_s,
                "dense_index": _dense_state(ws),
                "queries": len(texts),
                "filter_example": scale_filters(0),
                "filter_example_matches": _matching_units(ws, scale_filters(0)),
            }
            out.update(_latencies(ws, texts, vectors, progress))
            out["recall_at_10"] = _recall(ws, texts, vectors)
            out["dense_by_ef"] = _ef_sweep(ws, vectors)
            out["added"] = _add_while_searching(ws, vocab, n, added, texts, vectors, progress)
            out["dense_index_after_add"] = _dense_state(ws)
            out["memory"] = _memory()
            out["disk_mb"] = _disk_mb(Path(tmp))
            return out


def _settle(ws: Workspace, progress: bool) -> float:
    """Wait for the dense index's background HNSW build (seconds waited; a bar of them)."""
    dense = ws.dense
    if not isinstance(dense, QdrantEdgeIndex):
        return 0.0
    start = time.perf_counter()
    waiter = threading.Thread(target=dense.settle, daemon=True)
    waiter.start()
    with tqdm(desc="hnsw build", unit="s", disable=not progress) as bar:
        while waiter.is_alive():
            waiter.join(1.0)
            bar.update(1)
    return round(time.perf_counter() - start, 2)


def _dense_state(ws: Workspace) -> dict[str, Any]:
    dense = ws.dense
    if not isinstance(dense, QdrantEdgeIndex):
        return {"kind": type(dense).__name__}
    state = dense.hnsw_state()
    state["threshold"] = dense.hnsw.threshold if dense.hnsw else 0
    if dense.hnsw:
        state.update(m=dense.hnsw.m, ef_construct=dense.hnsw.ef_construct, ef=dense.hnsw.ef)
    return state


def _latencies(
    ws: Workspace, texts: Sequence[str], vectors: npt.NDArray[np.float32], progress: bool
) -> dict[str, Any]:
    """P50/P95 of hybrid (plain and filtered), dense and BM25 search, and stage medians."""
    out: dict[str, Any] = {}
    runs = {
        "hybrid": ({}, False),
        "hybrid_filtered": ({}, True),
        "dense": ({"sides": ("semantic",)}, False),
        "dense_filtered": ({"sides": ("semantic",)}, True),
        "bm25": ({"sides": ("bm25",)}, False),
    }
    latency: dict[str, Any] = {}
    for name, (extra, filtered) in runs.items():
        times, traces = _time_search(ws, texts, vectors, filtered, progress, name, **extra)
        latency[name] = latency_summary(times)
        if name.startswith("hybrid"):
            out["stages" if name == "hybrid" else "stages_filtered"] = stage_p50(traces)
    out["latency"] = latency
    out["hybrid_p50_ms"] = latency["hybrid"]["p50_ms"]
    out["hybrid_filtered_p50_ms"] = latency["hybrid_filtered"]["p50_ms"]
    return out


def _time_search(
    ws: Workspace,
    texts: Sequence[str],
    vectors: npt.NDArray[np.float32],
    filtered: bool,
    progress: bool,
    desc: str = "scale",
    **fields: Any,
) -> tuple[list[float], list[Trace]]:
    """Search (top 10, weighted merge, no KG) of each text with its own vector; the ``i``-th
    text filtered by :func:`scale_filters` ``(i)`` when ``filtered``."""
    row = {t: i for i, t in enumerate(texts)}

    def call(text: str) -> Trace:
        i = row[text]
        extra = {"filters": scale_filters(i)} if filtered else {}
        return _search(ws, text, vectors[i], **extra, **fields).trace

    return time_calls(call, texts, desc=f"scale {desc}", progress=progress)


def _search(
    ws: Workspace, text: str, vector: npt.NDArray[np.float32], **fields: Any
) -> SearchResult:
    return ws.search(text, top_k=10, vector=vector, merge="weighted", kg=False, **fields)


def _recall(
    ws: Workspace, texts: Sequence[str], vectors: npt.NDArray[np.float32]
) -> dict[str, float] | None:
    """Dense recall@10 against exact search, plain and filtered: the dense side as a search
    asks it (a filter's units counted on the lexical snapshot and, below the HNSW threshold,
    scored from its vectors), and, ``dense_filtered_planner``, the index left to its own
    estimate of the filter. A unit scoring as high as the exact 10th counts as found (equal
    cosines are cut in either order)."""
    dense = ws.dense
    if not isinstance(dense, QdrantEdgeIndex):
        return None
    out: dict[str, float] = {}
    for name, filtered, searched in (
        ("dense", False, True),
        ("dense_filtered", True, True),
        ("dense_filtered_planner", True, False),
    ):
        found = wanted = 0
        for i, (text, v) in enumerate(zip(texts, vectors, strict=True)):
            filters = scale_filters(i) if filtered else None
            expr = coerce_filters(filters) if filters is not None else None
            if searched:
                hits = _search(ws, text, v, filters=filters, sides=("semantic",)).hits
                got = {h.unit.unit_id: h.scores.semantic or 0.0 for h in hits}
            else:
                got = dict(dense.search(v, 10, expr))
            want = dict(dense.search(v, 10, expr, exact=True))
            tenth = min(want.values(), default=0.0) - 1e-6
            hit = sum(u in want or score >= tenth for u, score in got.items())
            found, wanted = found + min(hit, len(want)), wanted + len(want)
        out[name] = round(found / wanted, 4) if wanted else 1.0
    return out


#: The graph search widths the scale test compares (recall against P50).
EF_SWEEP = (64, 128, 256, 512, 1024)


def _ef_sweep(ws: Workspace, vectors: npt.NDArray[np.float32]) -> dict[str, Any] | None:
    """Dense recall@10 against exact and P50 (the dense index alone, no filter) for each
    candidate count of :data:`EF_SWEEP`, to choose ``TRILHA_DENSE_HNSW_EF`` by."""
    dense = ws.dense
    if not isinstance(dense, QdrantEdgeIndex):
        return None
    want = [{u for u, _ in dense.search(v, 10, exact=True)} for v in vectors]
    out: dict[str, Any] = {}
    for ef in EF_SWEEP:
        found, times = 0, []
        for v, exact in zip(vectors, want, strict=True):
            start = time.perf_counter()
            hits = dense.search(v, 10, ef=ef)
            times.append((time.perf_counter() - start) * 1000.0)
            found += len({u for u, _ in hits} & exact)
        recall = round(found / max(sum(len(w) for w in want), 1), 4)
        out[str(ef)] = {"recall_at_10": recall, "p50_ms": latency_summary(times)["p50_ms"]}
    return out


def _add_while_searching(
    ws: Workspace,
    vocab: Vocabulary,
    n: int,
    added: int,
    texts: Sequence[str],
    vectors: npt.NDArray[np.float32],
    progress: bool,
) -> dict[str, Any]:
    """Ingest ``added`` new documents while another thread searches (hybrid) without pause;
    then look the new documents up by their own text."""
    if added <= 0:
        return {}
    docs = list(synthetic_documents(added, vocab.words, vocab.cdf, 11, vocab.topics, start=n))
    stop = threading.Event()
    times: list[float] = []
    failures: list[str] = []

    def search() -> None:
        i = 0
        while not stop.is_set():
            k = i % len(texts)
            t0 = time.perf_counter()
            try:
                _search(ws, texts[k], vectors[k])
            except Exception as e:  # reported, not raised: the point is whether it happens
                failures.append(repr(e))
            times.append((time.perf_counter() - t0) * 1000.0)
            i += 1

    searcher = threading.Thread(target=search, daemon=True)
    start = time.perf_counter()
    searcher.start()
    try:
        ws.ingest(docs, progress=progress)
    finally:
        seconds = time.perf_counter() - start
        stop.set()
        searcher.join()
    sample = docs[:: max(1, len(docs) // 20)]
    found = sum(_finds(ws, d) for d in sample)
    out: dict[str, Any] = {
        "docs": added,
        "seconds": round(seconds, 2),
        "units_after": len(ws),
        "searches_during": len(times),
        "search_failures": len(failures),
        "found_after_by_own_text": f"{found}/{len(sample)}",
    }
    if times:
        out["search_during"] = {
            **latency_summary(times),
            "max_ms": round(max(times), 1),
        }
    if failures:
        out["first_failure"] = failures[0]
    return out


def _finds(ws: Workspace, doc: SourceDocument) -> bool:
    """Whether a search for ``doc``'s own text returns it."""
    hits = _search(ws, doc.text, ws.embedder.encode_queries([doc.text])[0]).hits
    return any(h.unit.doc_id == doc.doc_id for h in hits)


def _memory() -> dict[str, float]:
    """This process's RSS now and at its peak, and the peak of its children (the HNSW build)."""
    with open("/proc/self/status") as f:
        rss = next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {
        "rss_mb": round(rss / 1024, 1),
        "peak_rss_mb": round(peak / 1024, 1),
        "children_peak_rss_mb": round(child / 1024, 1),
    }


def _disk_mb(root: Path) -> dict[str, float]:
    """Disk use (allocated blocks) of the workspace and of each of its top entries."""
    parts: dict[str, float] = {}
    for entry in sorted(root.iterdir()):
        files = [entry] if entry.is_file() else [p for p in entry.rglob("*") if p.is_file()]
        used = sum(p.stat().st_blocks * 512 for p in files)
        parts[entry.name] = round(used / 2**20, 1)
    return {"total": round(sum(parts.values()), 1), **parts}


def _matching_units(ws: Workspace, filters: dict[str, Any]) -> int:
    return ws.count_matching(coerce_filters(filters))
