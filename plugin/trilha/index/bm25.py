"""BM25 over the units a caller may see: term frequencies kept, statistics taken at query time.

A score that counted every unit would tell a caller about the units they may not see: a term
that hidden units also use gets a lower IDF, and hidden lengths move the average length. So
the index keeps what BM25 is made of — each unit's term frequencies (a term -> units matrix in
CSC form) and length — and :meth:`TermMatrix.scores` takes ``N``, each query term's document
frequency and the average length over the visible rows only. A unit's score then depends on
the visible units alone: adding, changing or deleting a unit the caller cannot see moves none
of the caller's scores.

The formula is Lucene's BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework:
BM25 and Beyond", 2009, with Lucene's non-negative IDF), the variant ``bm25s`` runs with
``method="lucene"``: with every unit visible the scores are bm25s's, in float64 where bm25s
keeps float32. As in bm25s a unit with no tokens counts as one token long.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from trilha.index.columns import BoolArray

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def idf(df: int, n: int) -> float:
    """Lucene's IDF: ``ln(1 + (N − df + 0.5) / (df + 0.5))`` (never negative)."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def saturation(tf: Floats, lengths: Floats | Ints, avgdl: float, k1: float, b: float) -> Floats:
    """Lucene's term-frequency part: ``tf / (tf + k1·(1 − b + b·dl/avgdl))``."""
    return tf / (tf + k1 * (1.0 - b + b * lengths / avgdl))


def query_counts(tokens: Sequence[str]) -> Counter[str]:
    """Each query term's count, in order of first use (bm25s adds a repeated term again)."""
    return Counter(tokens)


@dataclass(frozen=True)
class VisibleStats:
    """The collection statistics of the rows a caller may see."""

    n: int
    avgdl: float

    @classmethod
    def of(cls, lengths: Ints, visible: BoolArray | None) -> VisibleStats:
        """``N`` and the average length over the ``visible`` rows (all rows: None)."""
        seen = lengths if visible is None else lengths[visible]
        n = int(seen.size)
        return cls(n, float(seen.sum()) / n if n else 0.0)


@dataclass(frozen=True)
class TermMatrix:
    """Term frequencies by term (CSC: ``rows[indptr[t]:indptr[t+1]]`` holds term ``t``'s units,
    ``tf`` their counts) and every unit's length."""

    vocab: dict[str, int]
    indptr: Ints
    rows: Ints
    tf: Floats
    lengths: Ints

    @classmethod
    def build(cls, tokens: Sequence[Sequence[str]]) -> TermMatrix:
        """The matrix of units' tokens (one token list per unit, in row order)."""
        vocab: dict[str, int] = {}
        ids = np.fromiter(
            (vocab.setdefault(t, len(vocab)) for doc in tokens for t in doc), dtype=np.int64
        )
        sizes = np.fromiter((len(doc) for doc in tokens), dtype=np.int64, count=len(tokens))
        units = np.repeat(np.arange(len(tokens), dtype=np.int64), sizes)
        keys, tf = np.unique(ids * len(tokens) + units, return_counts=True)
        terms = keys // max(len(tokens), 1)
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=len(vocab)), out=indptr[1:])
        rows = keys - terms * len(tokens)
        return cls(vocab, indptr, rows, tf.astype(np.float64), np.maximum(sizes, 1))

    def scores(
        self,
        tokens: Sequence[str],
        visible: BoolArray | None,
        stats: VisibleStats,
        k1: float,
        b: float,
    ) -> Floats | None:
        """BM25 of every row for a query's tokens, with ``N``, df and avgdl over the ``visible``
        rows (all: None; ``stats`` are theirs); rows outside ``visible`` score 0. None: no
        query term is indexed."""
        terms = [(self.vocab[t], c) for t, c in query_counts(tokens).items() if t in self.vocab]
        if not terms or stats.n == 0:
            return None
        out = np.zeros(self.lengths.size, dtype=np.float64)
        for term, count in terms:
            rows = self.rows[self.indptr[term] : self.indptr[term + 1]]
            tf = self.tf[self.indptr[term] : self.indptr[term + 1]]
            if visible is not None:
                keep = visible[rows]
                rows, tf = rows[keep], tf[keep]
            if rows.size:
                part = saturation(tf, self.lengths[rows], stats.avgdl, k1, b)
                out[rows] += count * idf(int(rows.size), stats.n) * part
        return out

    # -- persistence ------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Write the matrix into ``folder`` (``terms.npz`` and ``vocab.json``)."""
        np.savez(
            folder / "terms.npz",
            indptr=self.indptr,
            rows=self.rows,
            tf=self.tf,
            lengths=self.lengths,
        )
        (folder / "vocab.json").write_text(json.dumps(list(self.vocab), ensure_ascii=False))

    @classmethod
    def load(cls, folder: Path) -> TermMatrix:
        """The matrix :meth:`save` wrote into ``folder``."""
        words = json.loads((folder / "vocab.json").read_text())
        with np.load(folder / "terms.npz") as arrays:
            return cls(
                {w: i for i, w in enumerate(words)},
                arrays["indptr"],
                arrays["rows"],
                arrays["tf"],
                arrays["lengths"],
            )
