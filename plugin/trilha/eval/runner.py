"""Evaluate every system on a BEIR folder: nDCG@10, Recall@100 and MRR@10, as JSON and a chart.

>>> run_eval(Path("data/scifact"), Path("out/scifact.json"))  # doctest: +SKIP

The corpus is ingested into a workspace (``<out dir>/.trilha-eval/<dataset>`` unless given);
ingest skips unchanged documents, so a rerun encodes nothing. Cross-encoder scores are cached
in ``<workspace>/rerank-scores.sqlite``, so a rerun with the same model rescores nothing.
Runs are handed to trec_eval as rank-derived scores (``n - rank``), so each system is scored on
exactly the order it returned (trec_eval would otherwise re-break score ties by document id).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from trilha.encode.onnx_export import model_cache
from trilha.errors import requires_extra
from trilha.eval.beir import BeirDataset, BeirQuery, load_beir
from trilha.eval.metrics import evaluate
from trilha.eval.systems import Ranking, ScoreCache, Selection, System, build_systems
from trilha.rerank.cross_encoder import Backend, Precision, resolve_backend
from trilha.settings import TrilhaSettings, uncached
from trilha.workspace import Workspace
from trilha.workspace.compose import older_models

log = logging.getLogger(__name__)

METRICS = ("ndcg@10", "recall@100", "mrr@10")


def default_workspace(out_path: Path, dataset: str) -> Path:
    """Where an evaluation keeps its workspace when none is given."""
    return out_path.parent / ".trilha-eval" / dataset


def rank_scores(ranking: Ranking) -> dict[str, float]:
    """``{doc_id: n - rank}``: strictly decreasing, so trec_eval keeps the system's order."""
    n = len(ranking)
    return {doc_id: float(n - i) for i, (doc_id, _) in enumerate(ranking)}


def run_system(
    system: System,
    queries: Sequence[BeirQuery],
    name: str = "",
    progress: bool = False,
    ignore_identical_ids: bool = False,
) -> dict[str, dict[str, float]]:
    """A trec_eval run of one system over ``queries``. ``ignore_identical_ids`` drops a query's
    own id from its ranking (BEIR's convention for ArguAna and Quora, where the query is in the
    corpus)."""
    bar = tqdm(queries, desc=name, unit="q", disable=not progress)
    run = {}
    for q in bar:
        ranking = system(q.text)
        if ignore_identical_ids:
            ranking = [(doc_id, s) for doc_id, s in ranking if doc_id != q.query_id]
        run[q.query_id] = rank_scores(ranking)
    return run


@dataclass(frozen=True)
class RerankOptions:
    """The cross-encoder of ``hybrid_weighted_rerank`` and how it runs.

    The system reorders the weighted hybrid top-100 by the cross-encoder score (``blend`` > 0
    mixes in the fused score, see :func:`trilha.rerank.base.apply_scores`; 0 is untuned).
    The backend and precision are resolved once (``auto`` made concrete by
    :func:`trilha.rerank.cross_encoder.resolve_backend`), so a score cache never mixes bf16,
    fp32 and int8 scores.
    """

    model: str
    backend: Backend = "torch"
    precision: Precision = "fp32"
    max_length: int = 256
    blend: float = 0.0

    def cache_key(self) -> str:
        """What cached scores depend on: the model (resolved path), backend, precision, length."""
        local = Path(self.model).expanduser()
        where = str(local.resolve()) if local.exists() else self.model
        return f"{where}|{self.backend}|{self.precision}|{self.max_length}"


def open_score_cache(ws: Workspace, options: RerankOptions) -> ScoreCache:
    """The cross-encoder behind a score cache kept in the workspace folder."""
    from trilha.rerank.cross_encoder import CrossEncoderReranker

    reranker = CrossEncoderReranker(
        options.model,
        top_n=100,
        batch_size=ws.settings.rerank_batch_size,
        max_length=options.max_length,
        backend=options.backend,
        precision=options.precision,
        cache_dir=model_cache(ws.settings.model_cache),
        older_cache=older_models(ws.path),
    )
    return ScoreCache(ws.path / "rerank-scores.sqlite", reranker, options.cache_key())


def ingest_dataset(
    ws: Workspace, ds: BeirDataset, progress: bool, lang: str | None
) -> dict[str, Any]:
    """Ingest a BEIR corpus into ``ws`` (unchanged documents are skipped); the report. A
    document refused (no text, a bad field) is never retrieved: warned and listed."""
    report = ws.ingest(ds.documents(), progress=progress, lang=lang)
    refused = [str(r) for r in report.refused]
    if refused:
        log.warning(
            "%d corpus document(s) refused, so never retrieved; first: %s", len(refused), refused[0]
        )
    return {
        "refused": len(refused),
        "refusals": refused[:20],
        "docs_seen": report.docs_seen,
        "docs_added": report.docs_added,
        "docs_updated": report.docs_updated,
        "docs_unchanged": report.docs_unchanged,
        "units_written": report.units_written,
        "seconds": round(report.seconds, 3),
        "encode_seconds": round(report.encode_seconds, 3),
    }


def run_eval(
    data_dir: Path | str,
    out_path: Path | str,
    workspace_dir: Path | str | None = None,
    reranker: str | Path | None = None,
    split: str = "test",
    max_queries: int | None = None,
    progress: bool = True,
    *,
    rerank_backend: Backend = "auto",
    rerank_precision: Precision = "auto",
    rerank_blend: float = 0.0,
    rerank_max_length: int = 256,
    settings: TrilhaSettings | None = None,
    systems: Sequence[str] | None = None,
    lang: str | None = None,
    ignore_identical_ids: bool = False,
) -> dict[str, Any]:
    """Evaluate the ``systems`` (default: all) on a BEIR split; writes ``out_path`` (JSON) and
    its ``.png``. The ``*_rerank`` systems need a ``reranker`` (model id or folder; ``rerank_*``
    as in :class:`RerankOptions`); ``lang``: the corpus's (default: detected per document);
    ``ignore_identical_ids`` as in :func:`run_system`."""
    start = time.perf_counter()
    selection = Selection.of(systems, reranker, ignore_identical_ids)
    ds = load_beir(Path(data_dir), split)
    queries = ds.queries[:max_queries] if max_queries else ds.queries
    folder = Path(workspace_dir) if workspace_dir else default_workspace(Path(out_path), ds.name)
    options = rerank_options(
        reranker, rerank_backend, rerank_precision, rerank_max_length, rerank_blend
    )
    with Workspace.open(folder, uncached(settings), create=True) as ws:
        ingest = ingest_dataset(ws, ds, progress, lang)
        metrics, seconds, rerank = _score_systems(ws, queries, ds, options, selection, progress)
        encoder = ws.embedder.model_id  # what 'auto' chose, when it was left to choose
    config = _config(split, folder, rerank, selection, lang, encoder)
    result = _assemble(ds.name, len(queries), metrics, config, ingest, seconds, start)
    write_outputs(result, Path(out_path))
    return result


def _assemble(
    dataset: str,
    n_queries: int,
    metrics: dict[str, dict[str, float]],
    config: dict[str, Any],
    ingest: dict[str, Any],
    seconds: dict[str, float],
    start: float,
) -> dict[str, Any]:
    """The report of a run that began at ``start`` (a perf_counter reading)."""
    return {
        "dataset": dataset,
        "n_queries": n_queries,
        "systems": metrics,
        "config": config,
        "ingest": ingest,
        "seconds": {"systems": seconds, "total": round(time.perf_counter() - start, 2)},
    }


def rerank_options(
    model: str | Path | None,
    backend: Backend,
    precision: Precision,
    max_length: int,
    blend: float,
) -> RerankOptions | None:
    """The options of ``hybrid_weighted_rerank`` (precision 'auto' made concrete); None
    without a model."""
    if model is None:
        return None
    concrete_backend, concrete_precision = resolve_backend(backend, precision)
    return RerankOptions(str(model), concrete_backend, concrete_precision, max_length, blend)


def _config(
    split: str,
    folder: Path,
    rerank: dict[str, Any] | None,
    selection: Selection,
    lang: str | None,
    encoder: str,
) -> dict[str, Any]:
    return {
        "split": split,
        "lang": lang or "detected",
        "encoder": encoder,
        "ignore_identical_ids": selection.ignore_identical_ids,
        "top_k": 100,
        "workspace": str(folder),
        "run_scores": "n - rank (each system's own order)",
        "reranker": rerank,
    }


def _score_systems(
    ws: Workspace,
    queries: Sequence[BeirQuery],
    ds: BeirDataset,
    options: RerankOptions | None,
    selection: Selection,
    progress: bool,
) -> tuple[dict[str, dict[str, float]], dict[str, float], dict[str, Any] | None]:
    """Metrics and seconds per system, and the reranker's settings and cache counts."""
    qrels = {q.query_id: ds.qrels[q.query_id] for q in queries}
    metrics: dict[str, dict[str, float]] = {}
    seconds: dict[str, float] = {}
    with ExitStack() as stack:
        cache = None if options is None else stack.enter_context(open_score_cache(ws, options))
        blend = 0.0 if options is None else options.blend
        systems = build_systems(ws, 100, cache, blend, selection.names)
        for name, system in systems.items():
            t0 = time.perf_counter()
            run = run_system(system, queries, name, progress, selection.ignore_identical_ids)
            seconds[name] = round(time.perf_counter() - t0, 2)
            metrics[name] = {k: round(v, 4) for k, v in evaluate(qrels, run).items()}
            log.info("%s: %s", name, metrics[name])
    if options is None or cache is None:
        return metrics, seconds, None
    counts = {"pool": 100, "cached_pairs": cache.hits, "scored_pairs": cache.misses}
    return metrics, seconds, {**asdict(options), **counts}


def write_json(result: dict[str, Any], out: Path) -> None:
    """``result`` as indented JSON at ``out`` (its folder made when missing)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


def write_outputs(result: dict[str, Any], out: Path) -> None:
    """The JSON at ``out`` and the bar chart beside it (same stem, ``.png``)."""
    write_json(result, out)
    plot_metrics(result["systems"], out.with_suffix(".png"), title=result["dataset"])


def plot_metrics(systems: dict[str, dict[str, float]], png: Path, title: str = "") -> None:
    """Grouped bars: one group per system, one bar per metric, each bar labelled."""
    with requires_extra("eval", "the evaluation's plot (matplotlib)"):
        from matplotlib.figure import Figure

    fig = Figure(figsize=(max(6.0, 1.6 * len(systems) + 2), 4.8), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / len(METRICS)
    names = list(systems)
    for i, metric in enumerate(METRICS):
        xs = [j + (i - (len(METRICS) - 1) / 2) * width for j in range(len(names))]
        bars = ax.bar(xs, [systems[n][metric] for n in names], width, label=metric)
        ax.bar_label(bars, fmt="%.3f", fontsize=7, rotation=90, padding=2)
    ax.set_xticks(range(len(names)), names, rotation=20, ha="right")
    ax.set_ylim(0, 1.25)
    ax.set_ylabel("score")
    ax.set_title(title)
    ax.legend(loc="upper left", ncols=len(METRICS), fontsize=8)
    fig.savefig(png, dpi=120)
