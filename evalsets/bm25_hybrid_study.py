"""Whether one BM25 ``k1`` / ``b`` default helps the weighted hybrid on every set: leave one out.

Usage: ``PYTHONPATH=plugin python evalsets/bm25_hybrid_study.py --set NAME=DIR:WORKSPACE ...
--out FILE``, each workspace one that ``trilha eval`` filled with the set's corpus. For each set
and split, every (k1, b) of ``trilha tune``'s grid is replayed through the search's own
arithmetic (:mod:`trilha.tune.replay`) with the default fusion otherwise, as ``trilha eval``'s
``hybrid_weighted`` runs (top 100, nDCG@10). Then, leaving each set out in turn, the pair with
the best mean training gain over 1.5 / 0.75 on the other sets is scored on the left-out set's
test split: a default that would hold on a corpus it was not chosen on.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from trilha.eval.beir import load_beir
from trilha.settings import Fusion, TrilhaSettings
from trilha.tune.candidates import Sides
from trilha.tune.fit import lexical_grid
from trilha.tune.replay import mean_ndcg
from trilha.workspace import Workspace

SEED = Fusion()


def grid_of(folder: Path, workspace: Path) -> dict[str, dict[str, float]]:
    """nDCG@10 of the default hybrid with each (k1, b), per split."""
    out: dict[str, dict[str, float]] = {}
    settings = TrilhaSettings(graph_backend="none")
    with Workspace.open(workspace, settings) as ws:
        for split in ("train", "test"):
            ds = load_beir(folder, split)
            sides = Sides(ws, ds.queries, ds.qrels)
            for f in lexical_grid(SEED):
                found = sides.candidates(f.bm25_k1, f.bm25_b)
                key = f"{f.bm25_k1}/{f.bm25_b}"
                out.setdefault(key, {})[split] = round(mean_ndcg(found, f, 100), 4)
    return out


def leave_one_out(grids: dict[str, dict[str, dict[str, float]]]) -> dict[str, dict[str, object]]:
    """Per left-out set: the pair chosen on the others' training splits and its test gain."""
    seed = f"{SEED.bm25_k1}/{SEED.bm25_b}"
    out = {}
    for held in grids:
        others = [s for s in grids if s != held]
        keys = list(grids[held])
        gains = [
            np.mean([grids[s][k]["train"] - grids[s][seed]["train"] for s in others]) for k in keys
        ]
        best = keys[int(np.argmax(gains))]
        out[held] = {
            "chosen": best,
            "others_train_gain": round(float(max(gains)), 4),
            "test_gain": round(grids[held][best]["test"] - grids[held][seed]["test"], 4),
        }
    return out


def main() -> int:
    """Run the grid on every ``--set``, then the leave-one-out; print and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", required=True, help="NAME=DIR:WORKSPACE")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    grids = {}
    for spec in args.set:
        name, rest = spec.split("=", 1)
        folder, workspace = rest.split(":", 1)
        grids[name] = grid_of(Path(folder), Path(workspace))
        print(name, json.dumps(grids[name]), flush=True)
    loso = leave_one_out(grids)
    for name, row in loso.items():
        print(f"{name}: {row}")
    if args.out:
        args.out.write_text(json.dumps({"grids": grids, "leave_one_out": loso}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
