"""One fusion for a language, fitted across several sets: the study behind a shipped default.

Usage: ``PYTHONPATH=plugin python evalsets/fusion_study.py --sets DIR --workspaces DIR
[--names a,b,c] [--prefix P] [--out FILE]``. Each set ``DIR/NAME`` (BEIR, with train and test
qrels) must have been evaluated into the workspace ``WORKSPACES/PNAME`` (``trilha eval -w``),
so that every unit is encoded already. Every training and test query is scored once on both sides
(:func:`trilha.tune.candidates.collect`), and every setting of ``trilha tune``'s merge grid is
replayed on them at ``trilha eval``'s operating point (top-100, nDCG@10).

The pooled choice maximises the mean over sets of each set's mean training nDCG@10 (every set
weighs the same, whatever its number of queries). Leave-one-set-out tells what that is worth on
a set it was not fitted on: for each set, the setting chosen on the *other* sets' training
queries is scored on that set's test queries, beside seed 001's default. Prints a Markdown
table and writes the numbers as JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from trilha.eval.beir import load_beir
from trilha.retrieve.fusion_table import Fusion
from trilha.tune.candidates import collect
from trilha.tune.fit import merge_grid
from trilha.tune.replay import ndcg_matrix
from trilha.workspace import Workspace

TOP_K = 100


def scores_of(data: Path, workspace: Path, grid: list[Fusion]) -> dict[str, np.ndarray]:
    """Mean nDCG@10 of every setting of ``grid`` on the set's train and test queries."""
    out = {}
    with Workspace.open(workspace, create=True) as ws:
        for split in ("train", "test"):
            ds = load_beir(data, split)
            queries = collect(ws, ds.queries, ds.qrels)
            out[split] = ndcg_matrix(queries, grid, TOP_K).mean(axis=1)
    return out


def describe(f: Fusion) -> str:
    if f.merge == "rrf":
        return f"rrf k={f.rrf_k} bm25={f.weight_bm25:.2f} sem={f.weight_semantic:.2f}"
    return f"weighted bm25={f.weight_bm25:.2f} sem={f.weight_semantic:.2f} signal={f.signal}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", type=Path, required=True)
    parser.add_argument("--workspaces", type=Path, required=True)
    parser.add_argument("--names", default="faquad,pira-pt,tjal-ementas,squad-pt")
    parser.add_argument("--prefix", default="", help="workspace name = PREFIX + set name")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    names = args.names.split(",")
    default = Fusion()
    grid = [default, *[f for f in merge_grid(default) if f != default]]
    scores = {n: scores_of(args.sets / n, args.workspaces / (args.prefix + n), grid) for n in names}
    train = np.array([scores[n]["train"] for n in names])  # sets x settings
    pooled = int(np.argmax(train.mean(axis=0)))
    rows, report = [], {"pooled": describe(grid[pooled]), "sets": {}}
    for i, n in enumerate(names):
        others = [j for j in range(len(names)) if j != i]
        loso = int(np.argmax(train[others].mean(axis=0))) if others else pooled
        test = scores[n]["test"]
        entry = {
            "default_test": round(float(test[0]), 4),
            "loso_choice": describe(grid[loso]),
            "loso_test": round(float(test[loso]), 4),
            "pooled_test": round(float(test[pooled]), 4),
            "own_best_train": describe(grid[int(np.argmax(scores[n]["train"]))]),
        }
        report["sets"][n] = entry
        rows.append(
            f"| {n} | {entry['default_test']:.4f} | {entry['loso_choice']} | "
            f"{entry['loso_test']:.4f} | {entry['pooled_test']:.4f} |"
        )
    print(f"pooled choice: {report['pooled']}\n")
    print("| set | default (test) | chosen on the other sets | its test | pooled choice (test) |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
