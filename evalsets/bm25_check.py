"""Sanity check of a built set with trilha's own BM25 (no embedding, seconds per set).

Usage: ``PYTHONPATH=plugin python evalsets/bm25_check.py DIR [--lang pt] [--split test]``.
One unit per document (title + text, as trilha indexes a BEIR passage), the lexical index
trilha builds at ingest, nDCG@10 / Recall@100 / MRR@10 through trilha's metrics.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from trilha.eval.beir import load_beir
from trilha.eval.metrics import evaluate
from trilha.index.lexical import LexicalIndex
from trilha.index.tokenize import tokenize
from trilha.types import TextUnit


def bm25_scores(folder: Path, split: str, lang: str) -> dict[str, float]:
    """trilha's BM25 metrics on one split of a BEIR folder, every text analysed as ``lang``."""
    data = load_beir(folder, split)
    units = [
        TextUnit(
            unit_id=f"{d.doc_id}#0",
            doc_id=d.doc_id,
            text=d.text,
            title=d.meta.get("title"),
            lang=lang,
        )
        for d in data.documents()
    ]
    index = LexicalIndex.build(units, [tokenize(f"{u.title or ''}\n{u.text}", lang) for u in units])
    run = {}
    for q in data.queries:
        top = index.top(index.score_all(q.text), 100)
        run[q.query_id] = {units[row].doc_id: score for row, score in top}
    return evaluate(data.qrels, run)


def main() -> int:
    """Print the metrics as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--lang", default="pt")
    parser.add_argument("--split", default="test")
    args = parser.parse_args()
    scores = bm25_scores(args.folder, args.split, args.lang)
    print(json.dumps({"set": args.folder.name, "split": args.split, "lang": args.lang, **scores}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
