"""Misdetected languages and BM25: does a handful of documents stored in the wrong language lift
themselves over the rest of a collection? (issue 30, item 11)

Usage: ``PYTHONPATH=plugin python evalsets/lang_poison.py [--data DIR] [--n 10] [--out FILE]``.

On a BEIR folder in one language (SciFact by default: English), three BM25 indices as trilha
builds them at ingest (one unit per passage, title + text, bm25s Lucene k1 1.5 b 0.75):

- ``single``: every passage analysed as English (what a correct detector gives);
- ``poisoned``: the same, except ``--n`` passages stored as the detector stores a misdetected
  document: ``lang`` fr, de or es (in turn) and tokens from that language's analyser. The
  passages taken are those holding the most distinct English stopwords (shortest first among
  equals), the ones whose kept stopwords meet the most queries. Queries are analysed with every
  language the index holds, as :class:`~trilha.index.lexical.LexicalIndex` does;
- ``poisoned_before``: the poisoned index queried as trilha did before issue 30 (every language
  of the index analyses the query, each dropping only its own stopwords), scored by bm25s (the
  same formula, which trilha's lexical index ran then);
- ``redetected``: the poisoned passages' languages decided again as an ingest now decides
  them (:func:`~trilha.index.language.document_language`, the collection's main language
  being English).

Prints one JSON line per index (nDCG@10, Recall@100, MRR@10, and how many queries' top hit is
a poisoned passage) and writes them all to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np

from trilha.eval.beir import BeirDataset, load_beir
from trilha.eval.metrics import evaluate
from trilha.index.language import document_language
from trilha.index.lexical import LexicalIndex
from trilha.index.tokenize import stopwords, tokenize
from trilha.types import TextUnit

POISON_LANGS = ("fr", "de", "es")


def _units(data: BeirDataset) -> list[TextUnit]:
    return [
        TextUnit(
            unit_id=f"{d.doc_id}#0",
            doc_id=d.doc_id,
            text=d.text,
            title=d.meta.get("title"),
            lang="en",
        )
        for d in data.documents()
    ]


def _text(unit: TextUnit) -> str:
    return f"{unit.title or ''}\n{unit.text}"


def most_stopwords(units: Sequence[TextUnit], n: int) -> list[int]:
    """Rows of the ``n`` units holding the most distinct English stopwords, shortest first
    among equals."""
    stop = stopwords("en")

    def key(row: int) -> tuple[int, int]:
        words = _text(units[row]).lower().split()
        return (-len(stop.intersection(words)), len(words))

    return sorted(range(len(units)), key=key)[:n]


def run_index(data: BeirDataset, units: Sequence[TextUnit], marked: set[int]) -> dict[str, float]:
    """Metrics of the index over ``units`` (each tokenised in its own ``lang``), and how many
    queries' top hit is a ``marked`` row."""
    index = LexicalIndex.build(units, [tokenize(_text(u), u.lang) for u in units])
    run: dict[str, dict[str, float]] = {}
    top_marked = 0
    for q in data.queries:
        top = index.top(index.score_all(q.text), 100)
        run[q.query_id] = {units[row].doc_id: score for row, score in top}
        top_marked += bool(top) and top[0][0] in marked
    return {**evaluate(data.qrels, run), "queries_topped_by_marked": float(top_marked)}


def every_analyser(text: str, langs: Sequence[str]) -> list[str]:
    """A query's tokens as trilha analysed it before issue 30: the first language's tokens,
    then those only another language's analyser (with its own stopwords) gives, once each."""
    tokens = tokenize(text, langs[0])
    seen = set(tokens)
    for lang in langs[1:]:
        extra = [t for t in dict.fromkeys(tokenize(text, lang)) if t not in seen]
        tokens += extra
        seen.update(extra)
    return tokens


def run_before(data: BeirDataset, units: Sequence[TextUnit], marked: set[int]) -> dict[str, float]:
    """:func:`run_index` with the query analysis of :func:`every_analyser`, on bm25s."""
    bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    bm25.index([tokenize(_text(u), u.lang) or [""] for u in units], show_progress=False)
    langs = list(dict.fromkeys(lang for lang, _ in Counter(u.lang for u in units).most_common()))
    run: dict[str, dict[str, float]] = {}
    top_marked = 0
    for q in data.queries:
        ids = bm25.get_tokens_ids(every_analyser(q.text, langs))
        scores = np.asarray(bm25.get_scores_from_ids(ids), dtype=np.float64)
        top = LexicalIndex.top(scores if ids else None, 100)
        run[q.query_id] = {units[row].doc_id: score for row, score in top}
        top_marked += bool(top) and top[0][0] in marked
    return {**evaluate(data.qrels, run), "queries_topped_by_marked": float(top_marked)}


def main() -> int:
    """Print one JSON line per index and write them all to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data/scifact"))
    parser.add_argument("--split", default="test")
    parser.add_argument("--n", type=int, default=10, help="passages stored as misdetected")
    parser.add_argument("--out", type=Path, default=Path("results/lang-poison-scifact.json"))
    args = parser.parse_args()
    data = load_beir(args.data, args.split)
    units = _units(data)
    rows = most_stopwords(units, args.n)
    poisoned = list(units)
    for i, row in enumerate(rows):
        poisoned[row] = units[row].model_copy(update={"lang": POISON_LANGS[i % 3]})
    redetected = list(poisoned)
    for row in rows:
        lang = document_language(_text(poisoned[row]), "en")
        redetected[row] = poisoned[row].model_copy(update={"lang": lang})
    report: dict[str, object] = {
        "set": args.data.name,
        "split": args.split,
        "marked": {units[r].doc_id: poisoned[r].lang for r in rows},
    }
    for name, index_units in (
        ("single", units),
        ("poisoned", poisoned),
        ("poisoned_before", poisoned),
        ("redetected", redetected),
    ):
        run = run_before if name == "poisoned_before" else run_index
        scores = run(data, index_units, set(rows))
        report[name] = scores
        print(json.dumps({"index": name, **{k: round(v, 4) for k, v in scores.items()}}))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
