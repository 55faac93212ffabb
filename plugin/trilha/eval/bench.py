"""Latency benchmark of the evaluated systems, ingest, rerank backends and a synthetic scale test.

Everything runs in one process on the same data, warm (a few queries first). trilha's hybrid
systems ask for ``top_k=10`` (the realistic agent call) and include query encoding;
``hybrid_weighted_rerank`` reranks a pool of 40 keeping 12 (seed 002). The rerank backends are
compared by :mod:`trilha.eval.rerank_backends`, the scale test is :mod:`trilha.eval.scale`.

>>> run_bench(Path("data/scifact"), Path("out/bench.json"), queries=100)  # doctest: +SKIP
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Collection, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trilha.access import visibility_filter
from trilha.encode.base import Embedder
from trilha.encode.onnx_export import model_cache
from trilha.eval.answers import ASK_CACHED, ask_calls
from trilha.eval.beir import BeirDataset, load_beir
from trilha.eval.orchestrated import bench_orchestrated
from trilha.eval.principal import BENCH_PRINCIPAL
from trilha.eval.rerank_backends import bench_rerank
from trilha.eval.runner import default_workspace, write_json
from trilha.eval.scale import bench_scale
from trilha.eval.systems import SPECS, fusion_retriever, searcher
from trilha.eval.timing import (
    WARMUP,
    Call,
    latency_summary,
    paired_ratio,
    stage_p50,
    time_calls,
    trace_of,
)
from trilha.ingest.chunking import chunk_document, index_text
from trilha.rerank.cross_encoder import Backend, Precision
from trilha.retrieve.cache import MemoryStore, ResultCache
from trilha.settings import TrilhaSettings, uncached
from trilha.types import SearchResult
from trilha.workspace import Workspace
from trilha.workspace.compose import older_models

if TYPE_CHECKING:
    from trilha.rerank.cross_encoder import CrossEncoderReranker


# -- systems --------------------------------------------------------------------------------
def bench_calls(
    ws: Workspace, rerank: bool, only: Collection[str] | None = None
) -> dict[str, Call]:
    """The systems as timed calls (those in ``only`` when given): top_k=10; rerank pools 40
    and keeps 12."""
    calls = {name: trace_of(searcher(ws, spec, 10)) for name, spec in SPECS.items()}
    if rerank:
        calls["hybrid_weighted_rerank"] = trace_of(
            lambda q: ws.search(q, top_k=12, candidates=40, rerank=True, merge="weighted", kg=False)
        )
    policy = visibility_filter(BENCH_PRINCIPAL)
    calls["hybrid_weighted_visibility"] = trace_of(
        lambda q: ws.search(q, top_k=10, merge="weighted", kg=False, filters=policy)
    )
    if only is None or "llamaindex_fusion" in only:
        calls["llamaindex_fusion"] = _llamaindex(ws)
    calls[CACHED] = _cached(ws)
    calls.update(ask_calls(ws, rerank))
    return {name: call for name, call in calls.items() if only is None or name in only}


def _cached(ws: Workspace) -> Call:
    """``hybrid_weighted`` answered by the result cache (the bench's workspace has none: each
    call lends it one, which :func:`bench_systems` fills before timing)."""
    cache = ResultCache(MemoryStore(ttl_s=86_400, max_entries=1_000_000))

    def cached(text: str) -> SearchResult:
        before, ws.cache = ws.cache, cache
        try:
            return ws.search(text, top_k=10, merge="weighted", kg=False)
        finally:
            ws.cache = before

    return trace_of(cached)


def _llamaindex(ws: Workspace) -> Call:
    fusion = fusion_retriever(ws, top_k=10)

    def llamaindex(text: str) -> None:
        fusion.retrieve(text)

    return llamaindex


#: A repeated ``hybrid_weighted`` search, served by the result cache.
CACHED = "hybrid_weighted_cached"
#: The systems whose P50 is reported over ``hybrid_weighted``'s.
RATIOS = ("hybrid_weighted_kg", "hybrid_weighted_visibility", "orchestrated", "orchestrated_async")
#: Of those, the ones timed a second time interleaved with ``hybrid_weighted`` for the ratio.
PAIRED = ("hybrid_weighted_kg", "hybrid_weighted_visibility")
#: Every system ``--systems`` may name (``hybrid_weighted_rerank`` needs ``--reranker``).
SYSTEMS = (
    *SPECS,
    "hybrid_weighted_rerank",
    "hybrid_weighted_visibility",
    CACHED,
    "llamaindex_fusion",
    "orchestrated",
    "ask",
    "ask_rerank",
    ASK_CACHED,
)


def p50_ratios(systems: dict[str, Any], paired: dict[str, float] | None = None) -> dict[str, float]:
    """The issue targets: kg, visibility and orchestrated P50 over plain weighted hybrid P50,
    one run; ``paired`` ratios (timed interleaved, :data:`PAIRED`) replace those of the
    sequential runs."""
    base = systems.get("hybrid_weighted", {}).get("p50_ms")
    paired = paired or {}
    out: dict[str, float] = {}
    for name in RATIOS:
        p50 = systems.get(name, {}).get("p50_ms")
        if name in paired:
            out[f"{name}_over_hybrid_weighted"] = paired[name]
        elif base and p50:
            out[f"{name}_over_hybrid_weighted"] = round(p50 / base, 3)
    return out


def bench_systems(
    ws: Workspace,
    texts: Sequence[str],
    rerank: bool,
    progress: bool,
    only: Collection[str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, float]]:
    """Latency summary and stage medians of every system (of those in ``only`` when given),
    and the :data:`PAIRED` ratios."""
    systems: dict[str, Any] = {}
    stages: dict[str, Any] = {}
    calls = bench_calls(ws, rerank, only)
    for name, call in calls.items():
        if name in (CACHED, ASK_CACHED):
            for text in texts:  # each query once, so that every timed call is a hit
                call(text)
        times, traces = time_calls(call, texts, desc=name, progress=progress)
        systems[name] = latency_summary(times)
        if traces:
            stages[name] = stage_p50(traces)
    base = calls.get("hybrid_weighted")
    paired = {n: paired_ratio(base, calls[n], texts) for n in PAIRED if base and n in calls}
    return systems, stages, paired


# -- ingest ---------------------------------------------------------------------------------
def bench_ingest(
    ds: BeirDataset, embedder: Embedder, settings: TrilhaSettings, limit: int | None, progress: bool
) -> dict[str, Any]:
    """Ingest into a fresh workspace, then encode the same texts alone, with one encoder."""
    docs = list(islice(ds.documents(), limit))
    embedder.encode_documents(["warm up"])
    with (
        tempfile.TemporaryDirectory(prefix="trilha-bench-ingest-") as tmp,
        Workspace.open(tmp, settings, embedder=embedder, create=True) as fresh,
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
    rerank_backend: Backend | None = None,
    rerank_precision: Precision | None = None,
    scale_queries: int = 100,
    scale_dir: Path | str | None = None,
    settings: TrilhaSettings | None = None,
    systems: Collection[str] | None = None,
) -> dict[str, Any]:
    """Benchmark latency on a BEIR folder; writes ``out_path`` (JSON) and returns the dict.
    ``systems``: only those of :data:`SYSTEMS`; ``ingest_docs=0``: no ingest timing;
    ``scale``: units of the synthetic scale test (:mod:`trilha.eval.scale`), its workspace in
    a temporary folder under ``scale_dir`` (default: the system's)."""
    start, out, settings = time.perf_counter(), Path(out_path), uncached(settings)
    ds = load_beir(Path(data_dir), split)
    texts = [q.text for q in ds.queries[:queries]]
    folder = Path(workspace_dir) if workspace_dir else default_workspace(out, ds.name)
    result: dict[str, Any] = {"dataset": ds.name, "n_queries": len(texts)}
    ce = _reranker(reranker, rerank_backend, rerank_precision, settings, folder)
    result["config"] = _config(folder, reranker, ce, scale)
    with Workspace.open(folder, settings, reranker=ce, create=True) as ws:
        ws.ingest(ds.documents(), progress=progress)
        result.update(bench_latency(ws, texts, reranker is not None, progress, systems))
        if ingest_docs != 0:
            result["ingest"] = bench_ingest(ds, ws.embedder, settings, ingest_docs, progress)
        if reranker is not None:
            result["rerank"] = bench_rerank(ws, str(reranker), texts[:20])
    if scale:
        sample = [q.text for q in ds.queries[:scale_queries]]
        result["scale"] = bench_scale(ds, scale, sample, settings, progress, scale_dir)
    result["seconds"] = round(time.perf_counter() - start, 1)
    write_json(result, out)
    return result


def bench_latency(
    ws: Workspace,
    texts: Sequence[str],
    rerank: bool,
    progress: bool,
    only: Collection[str] | None = None,
) -> dict[str, Any]:
    """``systems`` and ``stages`` of :func:`bench_systems` and of the ``orchestrated`` rows
    (:func:`~trilha.eval.orchestrated.bench_orchestrated`), their ``p50_ratios``, and the
    ``encoder`` they ran with."""
    systems, stages, paired = bench_systems(ws, texts, rerank, progress, only)
    out: dict[str, Any] = {"encoder": ws.embedder.model_id, "systems": systems, "stages": stages}
    if only is None or "orchestrated" in only:
        orchestrated = bench_orchestrated(ws, texts, progress)
        systems.update(orchestrated["systems"])
        stages.update(orchestrated["stages"])
        out["orchestrated"] = orchestrated["orchestrated"]
    out["p50_ratios"] = p50_ratios(systems, paired)
    return out


def _reranker(
    model: str | Path | None,
    backend: Backend | None,
    precision: Precision | None,
    settings: TrilhaSettings,
    folder: Path,
) -> CrossEncoderReranker | None:
    """The cross-encoder timed: the backend and precision asked for, else the settings'."""
    if model is None:
        return None
    from trilha.rerank.cross_encoder import CrossEncoderReranker

    return CrossEncoderReranker(
        str(model),
        top_n=12,
        batch_size=settings.rerank_batch_size,
        max_length=256,
        backend=backend or settings.rerank_backend,
        precision=precision or settings.rerank_precision,
        cache_dir=model_cache(settings.model_cache),
        older_cache=older_models(folder),
    )


def _config(
    folder: Path, reranker: str | Path | None, ce: CrossEncoderReranker | None, scale: int | None
) -> dict[str, Any]:
    return {
        "workspace": str(folder),
        "top_k": 10,
        "warmup_queries": WARMUP,
        "note": "top_k=10 for every system (the realistic agent call); query encoding included "
        "except in the scale test, whose vectors come from no model (see scale.note); the kg and "
        "visibility p50_ratios come from a second run interleaved with hybrid_weighted",
        "rerank": None
        if ce is None
        else {
            "model": str(reranker),
            "backend": ce.backend,
            "precision": ce.precision,
            "batch_size": ce.batch_size,
            "candidates": 40,
            "keep": 12,
            "max_length": ce.max_length,
        },
        "scale": scale,
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg()[0],
    }
