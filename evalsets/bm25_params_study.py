"""BM25's k1 and b on every set: nDCG@10 over a grid, beside each corpus's own statistics.

Usage: ``PYTHONPATH=plugin python evalsets/bm25_params_study.py --set NAME=DIR:LANG ... --out
FILE``. One unit per document (title + text), trilha's lexical index built once per set; k1
and b act at query time there, so every setting is scored on the same index. For each set it
prints and writes the nDCG@10 of every (k1, b) on the train and test splits, the best on each,
and two things a judgement-free default could be chosen from: the unit-length statistics, and
the pair that known-item pseudo-queries drawn from the corpus prefer (neither holds: results in
docs/evaluation.md).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from trilha.eval.beir import load_beir
from trilha.eval.metrics import evaluate
from trilha.index.lexical import LexicalIndex
from trilha.index.tokenize import tokenize
from trilha.settings import Fusion
from trilha.tune.fit import BS, K1S  # trilha tune's grid
from trilha.types import TextUnit

#: The grid key of the seed's k1 and b (1.5 / 0.75).
SEED = f"{Fusion().bm25_k1}/{Fusion().bm25_b}"
#: Known-item pseudo-queries per set, and words in each.
PSEUDO_QUERIES = 300
PSEUDO_WORDS = 3


def study(folder: Path, lang: str) -> dict[str, object]:
    """The grid's nDCG@10 on both splits of ``folder`` and its corpus statistics."""
    splits = {s: load_beir(folder, s) for s in ("train", "test")}
    data = splits["test"]
    units = [
        TextUnit(
            unit_id=f"{d.doc_id}#0", doc_id=d.doc_id, text=d.text, title=d.meta.get("title"),
            lang=lang,
        )
        for d in data.documents()
    ]  # fmt: skip
    tokens = [tokenize(f"{u.title or ''}\n{u.text}", lang) for u in units]
    index = LexicalIndex.build(units, tokens)
    lengths = [len(t) for t in tokens]
    grid: dict[str, dict[str, float]] = {}
    for split, ds in splits.items():
        for k1 in K1S:
            for b in BS:
                index.k1, index.b = k1, b
                run = {}
                for q in ds.queries:
                    top = index.top(index.score_all(q.text), 100)
                    run[q.query_id] = {units[row].doc_id: score for row, score in top}
                key = f"{k1}/{b}"
                grid.setdefault(key, {})[split] = round(evaluate(ds.qrels, run)["ndcg@10"], 4)
    pseudo = pseudo_mrr(index, units)
    best = {s: max(grid, key=lambda k, s=s: grid[k][s]) for s in splits}
    best["pseudo"] = max(pseudo, key=lambda k: pseudo[k])
    return {
        "docs": len(units),
        "lengths": length_summary(lengths),
        "best": best,
        "grid": grid,
        "pseudo_mrr@10": pseudo,
    }


def pseudo_mrr(
    index: LexicalIndex, units: list[TextUnit], n: int = PSEUDO_QUERIES, seed: int = 7
) -> dict[str, float]:
    """MRR@10 of known-item pseudo-queries for every (k1, b): :data:`PSEUDO_WORDS` distinct
    words drawn from a sampled unit's text, the unit their one answer (no judgement needed)."""
    rng = random.Random(seed)
    picked = []
    for row in rng.sample(range(len(units)), min(n, len(units))):
        words = list(
            dict.fromkeys(w for w in units[row].text.split() if w.isalpha() and len(w) > 3)
        )
        if len(words) >= PSEUDO_WORDS:
            picked.append((row, " ".join(rng.sample(words, PSEUDO_WORDS))))
    out = {}
    for k1 in K1S:
        for b in BS:
            index.k1, index.b = k1, b
            reciprocal = []
            for row, text in picked:
                scores = index.score_all(text)
                rank = 1 + int((scores > scores[row]).sum()) if scores is not None else 11
                reciprocal.append(1.0 / rank if rank <= 10 else 0.0)
            out[f"{k1}/{b}"] = round(sum(reciprocal) / max(len(reciprocal), 1), 4)
    return out


def length_summary(lengths: list[int]) -> dict[str, float]:
    """Mean, median, spread (coefficient of variation) and 90th percentile of unit lengths."""
    import numpy as np

    values = np.asarray(lengths, dtype=np.float64)
    mean = float(values.mean())
    return {
        "mean": round(mean, 1),
        "median": float(np.median(values)),
        "cv": round(float(values.std() / mean), 3),
        "p90": float(np.percentile(values, 90)),
    }


def main() -> int:
    """Run the study on every ``--set`` and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", required=True, help="NAME=DIR:LANG")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    results = {}
    for spec in args.set:
        name, rest = spec.split("=", 1)
        folder, lang = rest.rsplit(":", 1)
        results[name] = study(Path(folder), lang)
        r = results[name]
        default = r["grid"][SEED]  # type: ignore[index]
        print(f"{name}: {r['lengths']} best {r['best']} at {SEED} {default}", flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
