"""``trilha tune``: fit the fusion of a workspace on a BEIR split and write it to the workspace.

>>> run_tune(Path("data/set"), Path(".trilha"), split="train")  # doctest: +SKIP

The corpus is ingested into the workspace (unchanged documents are skipped), each training query
is scored on both sides (:mod:`trilha.tune.candidates`; BM25 again for each ``k1`` and ``b``),
and :mod:`trilha.tune.fit` picks BM25's ``k1`` and ``b``, the merge, the shares, RRF's ``k`` and
the side depths for the queries' language. The result is written to the workspace's
``fusion.yaml`` (:mod:`trilha.retrieve.fusion_table`), which every later search of that
workspace in that language uses, and which ``trilha info`` shows.
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from trilha.eval.beir import load_beir
from trilha.index.tokenize import query_language
from trilha.retrieve.fusion_table import (
    TUNED_FILE,
    Fusion,
    FusionLayer,
    FusionTable,
    read_table,
    write_table,
)
from trilha.settings import TrilhaSettings, uncached
from trilha.tune.candidates import Sides
from trilha.tune.fit import (
    StageFit,
    chosen_of,
    depth_grid,
    fit_stage,
    lexical_grid,
    merge_grid,
    untuned_first,
)
from trilha.tune.replay import ndcg_matrix
from trilha.workspace import Workspace

#: ``trilha eval`` scores top-100 lists; searches return 10 by default.
EVAL_TOP_K = 100
SEARCH_TOP_K = 10
#: Fields a stage writes.
_LEXICAL_FIELDS = ("bm25_k1", "bm25_b")
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
    """Fit BM25's k1 and b and the fusion on ``split``'s qrels; write them to the workspace
    unless ``write`` is False.
    ``lang`` is the corpus's language (default: detected per document)."""
    start = time.perf_counter()
    ds = load_beir(Path(data_dir), split)
    with Workspace.open(workspace_dir, uncached(settings), create=True) as ws:
        ws.ingest(ds.documents(), progress=progress, lang=lang)
        langs = ws.searcher.lexical.unit_langs  # an operator's corpus: every unit counts
        query_lang = Counter(query_language(q.text, langs) for q in ds.queries)
        key = query_lang.most_common(1)[0][0]
        in_force, origin = ws.fusion.resolve(key)
        penalty = ws.settings.doc_penalty
        sides = Sides(ws, ds.queries, ds.qrels, progress)
        # k1 and b given as settings win over the workspace's file: nothing to fit then
        pinned = any(origin[f] == "settings" for f in _LEXICAL_FIELDS)
        grid = untuned_first(in_force, [] if pinned else lexical_grid(in_force))
        lexical = _fit_lexical(sides, grid, folds, penalty, progress)
        base = lexical.chosen if lexical.kept else in_force
        queries = sides.candidates(base.bm25_k1, base.bm25_b)
        merge = fit_stage(queries, merge_grid(base), base, EVAL_TOP_K, folds, penalty)
        base = merge.chosen if merge.kept else base
        depth = fit_stage(queries, depth_grid(base), base, SEARCH_TOP_K, folds, penalty)
        chosen = depth.chosen if depth.kept else base
        stages = {"lexical": lexical, "merge": merge, "depth": depth}
        written = _write(ws, key, chosen, stages, ds.name, split) if write else None
    return {
        "dataset": ds.name,
        "split": split,
        "queries": len(queries),
        "lang": key,
        "untuned": in_force.model_dump(),
        "tuned": chosen.model_dump(),
        "stages": {
            "lexical": _report(lexical, EVAL_TOP_K),
            "merge": _report(merge, EVAL_TOP_K),
            "depth": _report(depth, SEARCH_TOP_K),
        },
        "written": str(written) if written else None,
        "seconds": round(time.perf_counter() - start, 2),
    }


def _fit_lexical(
    sides: Sides, grid: list[Fusion], folds: int, penalty: float, progress: bool
) -> StageFit:
    """Stage 1: BM25's k1 and b (``grid``, the fusion in force first), each pair's candidates
    scored again and fused as in force."""
    rows = []
    for f in tqdm(grid, desc="bm25 k1, b", unit="pair", disable=not progress or len(grid) < 2):
        found = sides.candidates(f.bm25_k1, f.bm25_b)
        rows.append(ndcg_matrix(found, [f], EVAL_TOP_K, doc_penalty=penalty)[0])
    return chosen_of(grid, np.array(rows, dtype=np.float64), folds)


def _report(fit: StageFit, top_k: int) -> dict[str, Any]:
    return {
        "top_k": top_k,
        "train_ndcg@10": {
            "untuned": round(fit.untuned_train_ndcg, 4),
            "tuned": round(fit.train_ndcg, 4),
        },
        "heldout_ndcg@10": [{"untuned": round(u, 4), "tuned": round(t, 4)} for u, t in fit.heldout],
        "heldout_gain": round(fit.heldout_gain, 4),
        "kept": fit.kept,
    }


def _write(
    ws: Workspace,
    lang: str,
    chosen: Fusion,
    stages: dict[str, StageFit],
    dataset: str,
    split: str,
) -> Path:
    """Set ``lang``'s entry of the workspace's fusion table with what each stage that gained on
    held-out folds chose; reload the workspace's fusion."""
    path = ws.path / TUNED_FILE
    table = read_table(path) if path.exists() else {}
    written = {"lexical": _LEXICAL_FIELDS, "merge": _MERGE_FIELDS, "depth": _DEPTH_FIELDS}
    fields = [f for name, fit in stages.items() if fit.kept for f in written[name]]
    values = {f: getattr(chosen, f) for f in fields}
    table[lang] = FusionLayer(**{**table.get(lang, FusionLayer()).values(), **values})
    header = (
        f"Written by trilha tune on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC from {dataset} "
        f"({split}).\n{lang}: held-out nDCG@10 gain {stages['lexical'].heldout_gain:+.4f} "
        f"(BM25 k1 and b, top-100), {stages['merge'].heldout_gain:+.4f} (merge, top-100), "
        f"{stages['depth'].heldout_gain:+.4f} (depths, top-10)."
    )
    write_table(path, table, header)
    ws.fusion = FusionTable.of(ws.settings, ws.path)
    return path
