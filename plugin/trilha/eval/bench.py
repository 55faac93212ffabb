"""Latency benchmark of the evaluated systems, ingest, rerank backends and a synthetic scale test.

Everything runs in one process on the same data, warm (a few queries first). trilha's hybrid
systems ask for ``top_k=10`` (the realistic agent call) and include query encoding;
``hybrid_weighted_rerank`` reranks a pool of 40 keeping 12 (seed 002). The scale test indexes
``N`` synthetic units (corpus vocabulary, random unit vectors from :class:`RandomEmbedder`, so
nothing is encoded) and times hybrid search with and without filters, with real query vectors.

>>> run_bench(Path("data/scifact"), Path("out/bench.json"), queries=100)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import date, timedelta
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from tqdm.auto import tqdm

from trilha.access import Principal, visibility_filter
from trilha.encode.base import Embedder
from trilha.eval.beir import BeirDataset, load_beir
from trilha.eval.runner import Backend, Precision, default_workspace
from trilha.eval.systems import SPECS, fusion_retriever, searcher
from trilha.index.filters import coerce_filters
from trilha.ingest.chunking import chunk_document, index_text
from trilha.ingest.loaders import SourceDocument
from trilha.settings import TrilhaSettings
from trilha.types import SearchResult, Trace
from trilha.workspace import Workspace

if TYPE_CHECKING:
    from trilha.rerank.cross_encoder import CrossEncoderReranker

log = logging.getLogger(__name__)

#: (backend, precision) variants compared for rerank; fp32 torch is the reference order.
RERANK_VARIANTS: tuple[tuple[Backend, Precision], ...] = (
    ("torch", "fp32"),
    ("torch", "bf16"),
    ("onnx", "fp32"),
    ("onnx", "int8"),
)
SCALE_TAGS = ("contrato", "lgpd", "licitacao", "rh", "financeiro", "ti", "juridico", "auditoria")
WARMUP = 5


# -- pure statistics ------------------------------------------------------------------------
def latency_summary(ms: Sequence[float]) -> dict[str, float]:
    """p50 and p95 (ms) and sequential throughput (queries per second) of per-call times."""
    arr = np.asarray(ms, dtype=np.float64)
    return {
        "p50_ms": round(float(np.percentile(arr, 50)), 2),
        "p95_ms": round(float(np.percentile(arr, 95)), 2),
        "qps": round(1000.0 * len(arr) / float(arr.sum()), 2),
    }


def _ranks(x: Sequence[float]) -> npt.NDArray[np.float64]:
    return np.argsort(np.argsort(np.asarray(x), kind="stable"), kind="stable").astype(np.float64)


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rho of two score lists (ties ranked by position)."""
    ra, rb = _ranks(a), _ranks(b)
    return float(np.corrcoef(ra, rb)[0, 1]) if len(a) > 1 else 1.0


def kendall(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-a: (concordant - discordant) / pairs."""
    x, y = np.asarray(a), np.asarray(b)
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    pairs = len(x) * (len(x) - 1)
    return float((dx * dy).sum() / pairs) if pairs else 1.0


def top_overlap(a: Sequence[float], b: Sequence[float], k: int = 10) -> float:
    """Share of the top ``k`` items by ``a`` that are also in the top ``k`` by ``b``."""
    top_a = set(np.argsort(-np.asarray(a), kind="stable")[:k].tolist())
    top_b = set(np.argsort(-np.asarray(b), kind="stable")[:k].tolist())
    return len(top_a & top_b) / max(1, min(k, len(a)))


# -- timing ---------------------------------------------------------------------------------
Call = Callable[[str], Trace | None]


def time_calls(
    call: Call, texts: Sequence[str], warmup: int = WARMUP, desc: str = "", progress: bool = False
) -> tuple[list[float], list[Trace]]:
    """Per-call wall times (ms) over ``texts`` after ``warmup`` untimed calls, and the traces."""
    for text in texts[:warmup]:
        call(text)
    times: list[float] = []
    traces: list[Trace] = []
    for text in tqdm(texts, desc=desc, unit="q", disable=not progress):
        start = time.perf_counter()
        trace = call(text)
        times.append((time.perf_counter() - start) * 1000.0)
        if trace is not None:
            traces.append(trace)
    return times, traces


def stage_p50(traces: Sequence[Trace]) -> dict[str, float]:
    """Median latency of every stage name seen in the traces."""
    seen: dict[str, list[float]] = {}
    for trace in traces:
        for stage in trace.stages:
            seen.setdefault(stage.name, []).append(stage.latency_ms)
    return {name: round(float(np.median(v)), 2) for name, v in seen.items()}


def _trace_of(search: Callable[[str], SearchResult]) -> Call:
    return lambda text: search(text).trace


def bench_calls(ws: Workspace, rerank: bool) -> dict[str, Call]:
    """The systems as timed calls: top_k=10; rerank pools 40 and keeps 12."""
    calls = {name: _trace_of(searcher(ws, spec, 10)) for name, spec in SPECS.items()}
    if rerank:
        calls["hybrid_weighted_rerank"] = _trace_of(
            lambda q: ws.search(q, top_k=12, candidates=40, rerank=True, merge="weighted", kg=False)
        )
    policy = visibility_filter(BENCH_PRINCIPAL)
    calls["hybrid_weighted_visibility"] = _trace_of(
        lambda q: ws.search(q, top_k=10, merge="weighted", kg=False, filters=policy)
    )
    fusion = fusion_retriever(ws, top_k=10)

    def llamaindex(text: str) -> None:
        fusion.retrieve(text)

    calls["llamaindex_fusion"] = llamaindex
    return calls


#: A member of one organisation, project and role: its compiled visibility rule is what
#: ``hybrid_weighted_visibility`` runs inside both indices (as an explicit filter, so the dense
#: side runs it even on a corpus every principal sees whole).
BENCH_PRINCIPAL = Principal(
    user_id="bench-user",
    org_ids=["bench-org"],
    project_ids=["bench-project"],
    roles=["bench-role"],
    hierarchy_level=1,
    clearance=1,
)


def p50_ratios(systems: dict[str, Any]) -> dict[str, float]:
    """The issue targets: kg and visibility P50 over plain weighted hybrid P50, one run."""
    base = systems.get("hybrid_weighted", {}).get("p50_ms")
    out: dict[str, float] = {}
    for name in ("hybrid_weighted_kg", "hybrid_weighted_visibility"):
        p50 = systems.get(name, {}).get("p50_ms")
        if base and p50:
            out[f"{name}_over_hybrid_weighted"] = round(p50 / base, 3)
    return out


def bench_systems(
    ws: Workspace, texts: Sequence[str], rerank: bool, progress: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Latency summary and stage medians of every system."""
    systems: dict[str, Any] = {}
    stages: dict[str, Any] = {}
    for name, call in bench_calls(ws, rerank).items():
        times, traces = time_calls(call, texts, desc=name, progress=progress)
        systems[name] = latency_summary(times)
        if traces:
            stages[name] = stage_p50(traces)
    return systems, stages


# -- ingest ---------------------------------------------------------------------------------
def bench_ingest(
    ds: BeirDataset, embedder: Embedder, settings: TrilhaSettings, limit: int | None, progress: bool
) -> dict[str, Any]:
    """Ingest into a fresh workspace, then encode the same texts alone, with one encoder."""
    docs = list(islice(ds.documents(), limit))
    embedder.encode_documents(["warm up"])
    with (
        tempfile.TemporaryDirectory(prefix="trilha-bench-ingest-") as tmp,
        Workspace.open(tmp, settings, embedder=embedder) as fresh,
    ):
        start = time.perf_counter()
        report = fresh.ingest(docs, progress=progress)
        seconds = time.perf_counter() - start
    texts = [index_text(u) for d in docs for u in chunk_document(d)]
    start = time.perf_counter()
    embedder.encode_documents(texts)
    encode_only = time.perf_counter() - start
    return {
        "docs": len(docs),
        "units": len(texts),
        "seconds": round(seconds, 2),
        "encode_only_seconds": round(encode_only, 2),
        "encode_seconds_inside_ingest": round(report.encode_seconds, 2),
        "ratio": round(seconds / encode_only, 3),
    }


# -- rerank backends ------------------------------------------------------------------------
def bench_rerank(
    ws: Workspace, model: str, texts: Sequence[str], pool: int = 40, max_length: int = 256
) -> dict[str, Any]:
    """p50 of scoring ``pool`` candidates per backend, and agreement with torch fp32."""
    from trilha.rerank.cross_encoder import CrossEncoderReranker

    cands = [(t, [index_text(h.unit) for h in ws.search(t, top_k=pool).hits]) for t in texts]
    out: dict[str, Any] = {"pairs": pool, "max_length": max_length, "queries": len(cands)}
    reference: list[list[float]] | None = None
    for backend, precision in RERANK_VARIANTS:
        ce = CrossEncoderReranker(
            model,
            max_length=max_length,
            backend=backend,
            precision=precision,
            cache_dir=ws.path / "models",
        )
        try:
            times, scores = _time_scoring(ce.score, cands)
        except Exception as e:  # recorded, not raised: a benchmark reports what it could not do
            log.warning("rerank %s/%s unavailable: %s", backend, precision, e)
            out[f"{backend}_{precision}"] = {"available": False, "why": str(e)[:400]}
            continue
        if reference is None:
            reference = scores
            out["reference"] = f"{backend}_{precision}"
        out[f"{backend}_{precision}"] = {
            "available": True,
            **latency_summary(times),
            **agreement(reference, scores),
        }
    return out


def _time_scoring(
    score: Callable[[str, Sequence[str]], list[float]], cands: Sequence[tuple[str, list[str]]]
) -> tuple[list[float], list[list[float]]]:
    for q, passages in cands[:2]:
        score(q, passages)
    times, scores = [], []
    for q, passages in cands:
        start = time.perf_counter()
        scores.append(score(q, passages))
        times.append((time.perf_counter() - start) * 1000.0)
    return times, scores


def agreement(
    reference: Sequence[Sequence[float]], scores: Sequence[Sequence[float]]
) -> dict[str, float]:
    """Mean Spearman, Kendall and top-10 overlap of per-query score lists against a reference."""
    pairs = list(zip(reference, scores, strict=True))
    return {
        "spearman_vs_fp32": round(float(np.mean([spearman(a, b) for a, b in pairs])), 4),
        "kendall_vs_fp32": round(float(np.mean([kendall(a, b) for a, b in pairs])), 4),
        "top10_overlap_vs_fp32": round(float(np.mean([top_overlap(a, b) for a, b in pairs])), 4),
    }


# -- synthetic scale ------------------------------------------------------------------------
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
        with Workspace.open(tmp, settings, embedder=RandomEmbedder(vectors.shape[1])) as ws:
            ws.ingest(synthetic_documents(n, words, cdf), progress=progress)
            build = time.perf_counter() - start
            row = {t: i for i, t in enumerate(texts)}
            plain, plain_traces = time_calls(
                lambda t: ws.search(t, top_k=10, vector=vectors[row[t]]).trace,
                texts,
                desc="scale",
                progress=progress,
            )
            filtered, filtered_traces = time_calls(
                lambda t: (
                    ws.search(
                        t, top_k=10, vector=vectors[row[t]], filters=scale_filters(row[t])
                    ).trace
                ),
                texts,
                desc="scale filtered",
                progress=progress,
            )
            matching = _matching_units(ws, scale_filters(0))
            return {
                "units": len(ws),
                "hybrid_p50_ms": latency_summary(plain)["p50_ms"],
                "hybrid_filtered_p50_ms": latency_summary(filtered)["p50_ms"],
                "build_seconds": round(build, 2),
                "queries": len(texts),
                "filter_example": scale_filters(0),
                "filter_example_matches": matching,
                "stages": stage_p50(plain_traces),
                "stages_filtered": stage_p50(filtered_traces),
            }


def _matching_units(ws: Workspace, filters: dict[str, Any]) -> int:
    return ws.count_matching(coerce_filters(filters))


# -- entry point ----------------------------------------------------------------------------
def run_bench(
    data_dir: Path | str,
    out_path: Path | str,
    workspace_dir: Path | str | None = None,
    queries: int = 100,
    reranker: str | Path | None = None,
    scale: int | None = None,
    progress: bool = True,
    *,
    ingest_docs: int | None = None,
    split: str = "test",
    rerank_backend: Backend = "torch",
    rerank_precision: Precision = "bf16",
    scale_queries: int = 30,
    settings: TrilhaSettings | None = None,
) -> dict[str, Any]:
    """Benchmark latency on a BEIR folder; writes ``out_path`` (JSON) and returns the dict."""
    start = time.perf_counter()
    out, settings = Path(out_path), settings or TrilhaSettings()
    ds = load_beir(Path(data_dir), split)
    texts = [q.text for q in ds.queries[:queries]]
    folder = Path(workspace_dir) if workspace_dir else default_workspace(out, ds.name)
    result: dict[str, Any] = {"dataset": ds.name, "n_queries": len(texts)}
    result["config"] = _config(folder, reranker, rerank_backend, rerank_precision, scale)
    with Workspace.open(
        folder, settings, reranker=_reranker(reranker, rerank_backend, rerank_precision, folder)
    ) as ws:
        ws.ingest(ds.documents(), progress=progress)
        result["systems"], result["stages"] = bench_systems(
            ws, texts, reranker is not None, progress
        )
        result["p50_ratios"] = p50_ratios(result["systems"])
        result["ingest"] = bench_ingest(ds, ws.embedder, settings, ingest_docs, progress)
        if reranker is not None:
            result["rerank"] = bench_rerank(ws, str(reranker), texts[:20])
        if scale:
            result["scale"] = bench_scale(
                ds, scale, ws.embedder, texts[:scale_queries], settings, progress
            )
    result["seconds"] = round(time.perf_counter() - start, 1)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def _reranker(
    model: str | Path | None, backend: Backend, precision: Precision, folder: Path
) -> CrossEncoderReranker | None:
    if model is None:
        return None
    from trilha.rerank.cross_encoder import CrossEncoderReranker

    return CrossEncoderReranker(
        str(model),
        top_n=12,
        max_length=256,
        backend=backend,
        precision=precision,
        cache_dir=folder / "models",
    )


def _config(
    folder: Path, reranker: str | Path | None, backend: str, precision: str, scale: int | None
) -> dict[str, Any]:
    return {
        "workspace": str(folder),
        "top_k": 10,
        "warmup_queries": WARMUP,
        "note": "top_k=10 for every system (the realistic agent call); query encoding included "
        "except in the scale test, whose query vectors are encoded beforehand",
        "rerank": None
        if reranker is None
        else {
            "model": str(reranker),
            "backend": backend,
            "precision": precision,
            "candidates": 40,
            "keep": 12,
            "max_length": 256,
        },
        "scale": scale,
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg()[0],
    }
