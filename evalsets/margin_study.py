"""How far the weighted hybrid leads or trails on each set, and whether another scaling of its
two sides would change that: the study behind issue 36's English margins.

Usage: ``PYTHONPATH=plugin python evalsets/margin_study.py --set NAME=DIR:WORKSPACE ...
[--out FILE]``, each workspace one that ``trilha eval`` filled with the set's corpus. Every query
of both splits is scored against the whole corpus on both sides (as in
``confidence_study.py``), and the merges are replayed at ``trilha eval``'s operating point:
each side's top 100, both sides' scores over their union, documents by their best unit,
nDCG@10.

* **Margins.** Today's merge (min-max over the union, BM25 share 0.5 / 0.9) against BM25 alone,
  dense alone and LlamaIndex's relative-score fusion (each side min-max scaled over its own
  list, a unit missing from a list counting 0, equal shares), per query: the mean difference,
  the queries won and lost, and a paired sign-flip permutation test (20,000 draws, two-sided).
* **Scalings.** Min-max over the union (today), z-scores over the union, mean ± 3 standard
  deviations of each side's own list, and LlamaIndex's, each at BM25 shares 0.4-0.7, with and
  without the ``peak`` signal (:func:`trilha.retrieve.fusion.shaped`). Leaving each set out, the
  setting with the best mean (and the best smallest) training gain over today's on the other
  sets is scored on the left-out set's test split.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from itertools import product
from pathlib import Path

import numpy as np
from confidence_study import DEPTH, ranked, scored

from trilha.eval.metrics import ndcg_per_query

TODAY = ("minmax", 0.5 / 0.9, False)
SHARES = (0.4, 0.45, 0.5, 0.5 / 0.9, 0.6, 0.65, 0.7)
Array = np.ndarray


def ranking(b: Array, c: Array, kind: str, share: float, peak: bool) -> Array:
    """Rows in the order the merge ``kind`` at BM25 share ``share`` gives them
    (:func:`confidence_study.ranked`)."""
    return np.asarray(ranked(b, c, share, kind, peak), dtype=np.int64)


def per_query(set_: dict, split: str, order: Callable[[Array, Array], Array]) -> Array:
    """nDCG@10 of each query of ``split`` with the rows ``order`` gives."""
    bm25, cos, qrels = set_[split]
    docs = set_["docs"]
    runs = {
        str(i): list(dict.fromkeys(docs[r] for r in order(b, c)[:DEPTH].tolist()))
        for i, (b, c) in enumerate(zip(bm25, cos, strict=True))
    }
    got = ndcg_per_query({str(i): rel for i, rel in enumerate(qrels)}, runs)
    return np.array([got[str(i)] for i in range(len(qrels))])


def paired(a: Array, b: Array, draws: int = 20_000) -> dict[str, float]:
    """``a − b`` per query: mean, queries won and lost, two-sided sign-flip permutation p."""
    d = a - b
    signs = np.random.default_rng(0).choice([-1.0, 1.0], size=(draws, len(d)))
    p = float((np.abs((signs * d).mean(axis=1)) >= abs(d.mean()) - 1e-12).mean())
    return {"diff": float(d.mean()), "won": int((d > 0).sum()), "lost": int((d < 0).sum()), "p": p}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", action="append", required=True, help="NAME=DIR:WORKSPACE")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    where = dict(s.split("=", 1) for s in args.set)
    sets = {n: scored(Path(p.split(":")[0]), Path(p.split(":")[1])) for n, p in where.items()}
    names = list(sets)
    report: dict = {"margins": {}, "scalings": {}, "left_out": {}}

    print("| set | hybrid weighted | vs BM25 | vs dense | vs LlamaIndex fusion |")
    print("|---|---|---|---|---|")
    baselines = {
        "bm25": lambda b, c: ranking(b, c, "minmax", 1.0, False),
        "dense": lambda b, c: np.argsort(-c, kind="stable")[:DEPTH],
        "llamaindex": lambda b, c: ranking(b, c, "llamaindex", 0.5, False),
    }
    for n in names:
        today = per_query(sets[n], "test", lambda b, c: ranking(b, c, *TODAY))
        row = {k: paired(today, per_query(sets[n], "test", f)) for k, f in baselines.items()}
        report["margins"][n] = {"hybrid": float(today.mean()), **row}
        cells = [f"{r['diff']:+.4f} ({r['won']}/{r['lost']}, p {r['p']:.2f})" for r in row.values()]
        print(f"| {n} | {today.mean():.4f} | " + " | ".join(cells) + " |")

    grid = list(product(("minmax", "z", "dbsf", "llamaindex"), SHARES, (False, True)))
    mean = {
        (n, split, g): float(per_query(sets[n], split, lambda b, c, g=g: ranking(b, c, *g)).mean())
        for n in names for split in ("train", "test") for g in grid
    }  # fmt: skip
    report["scalings"] = {f"{n}|{s}|{g}": v for (n, s, g), v in mean.items()}

    def gain(g: tuple, n: str, split: str) -> float:
        return mean[(n, split, g)] - mean[(n, split, TODAY)]

    print("\n| set | best mean on the others | its test gain | best smallest | its test gain |")
    print("|---|---|---|---|---|")
    for n in names:
        others = [m for m in names if m != n]
        by_mean = max(grid, key=lambda g: np.mean([gain(g, m, "train") for m in others]))
        by_min = max(grid, key=lambda g: min(gain(g, m, "train") for m in others))
        report["left_out"][n] = {
            "by_mean": [str(by_mean), gain(by_mean, n, "test")],
            "by_min": [str(by_min), gain(by_min, n, "test")],
        }
        print(
            f"| {n} | {by_mean} | {gain(by_mean, n, 'test'):+.4f} "
            f"| {by_min} | {gain(by_min, n, 'test'):+.4f} |"
        )
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
