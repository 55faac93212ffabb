"""``trilha tune``: fit the fusion of a workspace on a BEIR split and write it to the workspace.

>>> run_tune(Path("data/set"), Path(".trilha"), split="train")  # doctest: +SKIP

The corpus is ingested into the workspace (unchanged documents are skipped), each training query
is scored once on both sides (:mod:`trilha.tune.candidates`), and :mod:`trilha.tune.fit` picks
the merge, the shares, RRF's ``k`` and the side depths for the queries' language. The result is
written to the workspace's ``fusion.yaml`` (:mod:`trilha.retrieve.fusion_table`), which every
later search of that workspace in that language uses, and which ``trilha info`` shows.
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trilha.eval.beir import load_beir
from trilha.index.language import query_language
from trilha.retrieve.fusion_table import (
    TUNED_FILE,
    Fusion,
    FusionLayer,
    FusionTable,
    read_table,
    write_table,
)
from trilha.settings import TrilhaSettings, uncached
from trilha.tune.candidates import collect
from trilha.tune.fit import StageFit, depth_grid, fit_stage, merge_grid
from trilha.workspace import Workspace

#: ``trilha eval`` scores top-100 lists; searches return 10 by default.
EVAL_TOP_K = 100
SEARCH_TOP_K = 10
#: Fields a stage writes.
_MERGE_FIELDS = ("merge", "weight_bm25", "weight_semantic", "rrf_k", "signal")
_DEPTH_FIELDS = ("depth_bm25", "depth_semantic")


def run_tune(
    data_dir: Path | str,
    workspace_dir: Path | str,
    split: str = "train",
    *,
    lang: str | None = None,
    folds: int = 5,
    write: bool = True,
    progress: bool = True,
    settings: TrilhaSettings | None = None,
) -> dict[str, Any]:
    """Fit the fusion on ``split``'s qrels; write it to the workspace unless ``write`` is False.
    ``lang`` is the corpus's language (default: detected per document)."""
    start = time.perf_counter()
    ds = load_beir(Path(data_dir), split)
    with Workspace.open(workspace_dir, uncached(settings), create=True) as ws:
        ws.ingest(ds.documents(), progress=progress, lang=lang)
        langs = ws.searcher.lexical.unit_langs  # an operator's corpus: every unit counts
        query_lang = Counter(query_language(q.text, langs) for q in ds.queries)
        key = query_lang.most_common(1)[0][0]
        in_force = ws.fusion.resolve(key)[0]
        queries = collect(ws, ds.queries, ds.qrels, progress)
        penalty = ws.settings.doc_penalty
        merge = fit_stage(queries, merge_grid(in_force), in_force, EVAL_TOP_K, folds, penalty)
        base = merge.chosen if merge.heldout_gain > 0 else in_force
        depth = fit_stage(queries, depth_grid(base), base, SEARCH_TOP_K, folds, penalty)
        chosen = depth.chosen if depth.heldout_gain > 0 else base
        written = _write(ws, key, chosen, merge, depth, ds.name, split) if write else None
    return {
        "dataset": ds.name,
        "split": split,
        "queries": len(queries),
        "lang": key,
        "untuned": in_force.model_dump(),
        "tuned": chosen.model_dump(),
        "stages": {"merge": _report(merge, EVAL_TOP_K), "depth": _report(depth, SEARCH_TOP_K)},
        "written": str(written) if written else None,
        "seconds": round(time.perf_counter() - start, 2),
    }


def _report(fit: StageFit, top_k: int) -> dict[str, Any]:
    return {
        "top_k": top_k,
        "train_ndcg@10": {
            "untuned": round(fit.untuned_train_ndcg, 4),
            "tuned": round(fit.train_ndcg, 4),
        },
        "heldout_ndcg@10": [{"untuned": round(u, 4), "tuned": round(t, 4)} for u, t in fit.heldout],
        "heldout_gain": round(fit.heldout_gain, 4),
        "kept": fit.heldout_gain > 0,
    }


def _write(
    ws: Workspace,
    lang: str,
    chosen: Fusion,
    merge: StageFit,
    depth: StageFit,
    dataset: str,
    split: str,
) -> Path:
    """Set ``lang``'s entry of the workspace's fusion table; reload the workspace's fusion."""
    path = ws.path / TUNED_FILE
    table = read_table(path) if path.exists() else {}
    fields = [
        *(_MERGE_FIELDS if merge.heldout_gain > 0 else ()),
        *(_DEPTH_FIELDS if depth.heldout_gain > 0 else ()),
    ]
    values = {f: getattr(chosen, f) for f in fields}
    table[lang] = FusionLayer(**{**table.get(lang, FusionLayer()).values(), **values})
    header = (
        f"Written by trilha tune on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC from {dataset} "
        f"({split}).\n{lang}: held-out nDCG@10 gain {merge.heldout_gain:+.4f} (merge, top-100), "
        f"{depth.heldout_gain:+.4f} (depths, top-10)."
    )
    write_table(path, table, header)
    ws.fusion = FusionTable.of(ws.settings, ws.path)
    return path
