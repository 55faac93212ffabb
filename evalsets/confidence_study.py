"""Two questions about the weighted hybrid on sets evaluated with ``trilha eval``: can any fusion
of its two sides reach issue 12's target, and does a dense-confidence signal generalise?

Usage: ``PYTHONPATH=plugin python evalsets/confidence_study.py --sets DIR --workspaces DIR
--names a,b [--prefix P] [--data-for NAME=DIR] [--out FILE]``. Each set must have been evaluated
into ``WORKSPACES/PREFIX+NAME`` first, as for ``fusion_study.py``. Every query of both splits is
scored against the whole corpus on both sides (BM25's score vector, the cosine to every stored
vector), and fusions are replayed at ``trilha eval``'s operating point (each side's top 100, the
weighted merge min-max scaled over their union, documents by their best unit, nDCG@10).

* **Ceiling.** The best *test* nDCG@10 over a grid of BM25 shares (0.2–0.9) and the signal's
  settings, chosen on test itself: an upper bound for any setting of these two sides.
* **Signal.** ``confidence = z / sqrt(2 ln N)``, where ``z`` is the best cosine's z-score against
  the query's cosines to all N units: 1 is what the maximum of N chance scores gives. The
  semantic share is multiplied by ``clip((confidence − lo) / (1 − lo), 0, cap)``. ``(lo, cap)``
  is chosen on the training queries of the *other* sets (leave one set out) and scored on the
  held-out set's test queries beside seed 001's default.
"""

from __future__ import annotations

import argparse
import json
from itertools import product
from pathlib import Path

import numpy as np

from trilha.eval.beir import load_beir
from trilha.eval.metrics import ndcg_per_query
from trilha.retrieve.fusion import peakedness
from trilha.workspace import Workspace

SHARES = (0.2, 0.3, 0.4, 0.5, 0.5 / 0.9, 0.6, 0.7, 0.8, 0.9)
SIGNALS = (None, *product((0.5, 0.6, 0.7, 0.8, 0.9), (1.0, 1.25, 1.5, 2.0)))
DEFAULT = 0.5 / 0.9  # seed 001's 0.5 / 0.4, renormalised without the graph
DEPTH = 100


def scored(data: Path, workspace: Path) -> dict:
    """Per split: BM25 and cosine of every query against every unit, and the qrels."""
    out: dict = {}
    with Workspace.open(workspace, create=False) as ws:
        lexical = ws.searcher.lexical
        units = lexical.units
        stored = ws.vectors([u.unit_id for u in units])
        matrix = np.stack([stored[u.unit_id] for u in units]).astype(np.float32)
        out["docs"] = [u.doc_id for u in units]
        for split in ("train", "test"):
            ds = load_beir(data, split)
            queries = [q for q in ds.queries if q.query_id in ds.qrels]
            bm25 = np.zeros((len(queries), len(units)))
            for i, q in enumerate(queries):
                row = lexical.score_all(q.text)
                bm25[i] = 0.0 if row is None else row
            cos = ws.embedder.encode_queries([q.text for q in queries]) @ matrix.T
            out[split] = (
                bm25,
                cos.astype(np.float64),
                [dict(ds.qrels[q.query_id]) for q in queries],
            )
    return out


def _minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = x.min(), x.max()
    return np.ones_like(x) if hi == lo else (x - lo) / (hi - lo)


def _z(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return np.zeros_like(x) if sd == 0 else (x - x.mean()) / sd


def _scaled(kind: str, x: np.ndarray, own: np.ndarray, union: np.ndarray) -> np.ndarray:
    """One side's scores over ``union``, scaled as ``kind`` says (``own``: its own list):
    min-max or z-scores over the union, mean ± 3 standard deviations of its own list, or
    LlamaIndex's min-max over its own list with 0 for a unit it did not return."""
    if kind == "minmax":
        return _minmax(x[union])
    if kind == "z":
        return _z(x[union])
    if kind == "dbsf":
        mean, sd = x[own].mean(), x[own].std()
        return np.ones(len(union)) if sd == 0 else (x[union] - mean + 3 * sd) / (6 * sd)
    if kind == "llamaindex":
        out = np.zeros(len(union))
        where = {row: i for i, row in enumerate(union.tolist())}
        out[[where[r] for r in own.tolist()]] = _minmax(x[own])
        return out
    raise ValueError(kind)


def ranked(
    b: np.ndarray, c: np.ndarray, share: float, kind: str = "minmax", peak: bool = False
) -> list[int]:
    """Rows as the weighted hybrid orders them (BM25 share ``share``, each side scaled as
    ``kind`` says, the shares shaped by :func:`~trilha.retrieve.fusion.peakedness` with
    ``peak``; ties to the better rank)."""
    positive = np.flatnonzero(b > 0)
    b_rows = positive[np.argsort(-b[positive], kind="stable")][:DEPTH]
    c_rows = np.argsort(-c, kind="stable")[:DEPTH]
    if len(b_rows) == 0:
        return c_rows.tolist()
    if peak:
        pb = share * peakedness(b[b_rows].tolist())
        pc = (1 - share) * peakedness(c[c_rows].tolist())
        share = pb / (pb + pc) if pb + pc > 0 else share
    union = np.array(list(dict.fromkeys([*b_rows.tolist(), *c_rows.tolist()])))
    fused = share * _scaled(kind, b, b_rows, union) + (1 - share) * _scaled(kind, c, c_rows, union)
    rank = np.full(len(b), 1 << 30)
    rank[c_rows] = np.arange(len(c_rows))
    rank[b_rows] = np.minimum(rank[b_rows], np.arange(len(b_rows)))
    return union[np.lexsort((rank[union], -fused))].tolist()


def mean_ndcg(set_: dict, split: str, share: float, signal: tuple[float, float] | None) -> float:
    bm25, cos, qrels = set_[split]
    docs, n = set_["docs"], cos.shape[1]
    runs: dict[str, list[str]] = {}
    for i, (b, c) in enumerate(zip(bm25, cos, strict=True)):
        w = share
        if signal is not None:
            lo, cap = signal
            confidence = (c.max() - c.mean()) / (c.std() + 1e-12) / np.sqrt(2 * np.log(n))
            semantic = (1 - share) * float(np.clip((confidence - lo) / (1 - lo), 0, cap))
            w = share / (share + semantic) if share + semantic > 0 else 1.0
        runs[str(i)] = list(dict.fromkeys(docs[r] for r in ranked(b, c, w)))
    judged = {str(i): rel for i, rel in enumerate(qrels)}
    return sum(ndcg_per_query(judged, runs).values()) / len(qrels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", type=Path, required=True)
    parser.add_argument("--workspaces", type=Path, required=True)
    parser.add_argument("--names", required=True)
    parser.add_argument("--prefix", default="")
    parser.add_argument("--data-for", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    names = args.names.split(",")
    where = {n: args.sets / n for n in names} | dict(d.split("=", 1) for d in args.data_for)
    sets = {n: scored(Path(where[n]), args.workspaces / (args.prefix + n)) for n in names}
    signal = {
        (n, s, sig): mean_ndcg(sets[n], s, DEFAULT, sig)
        for n in names for s in ("train", "test") for sig in SIGNALS
    }  # fmt: skip
    report = {}
    print("| set | default | signal chosen on the other sets | its test | ceiling (test) |")
    print("|---|---|---|---|---|")
    for n in names:
        others = [m for m in names if m != n]
        chosen = max(SIGNALS, key=lambda g: np.mean([signal[(m, "train", g)] for m in others]))
        ceiling = max(mean_ndcg(sets[n], "test", w, g) for w in SHARES for g in SIGNALS)
        row = {
            "default": signal[(n, "test", None)],
            "chosen": chosen,
            "chosen_test": signal[(n, "test", chosen)],
            "ceiling": ceiling,
        }
        report[n] = row
        print(
            f"| {n} | {row['default']:.4f} | {chosen} | {row['chosen_test']:.4f} | {ceiling:.4f} |"
        )
    if args.out:
        args.out.write_text(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
