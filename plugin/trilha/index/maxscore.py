"""The top ``k`` rows of a BM25 query without scoring every row: MaxScore.

Turtle & Flood ("Query evaluation: strategies and optimizations", 1995): each query term has an
upper bound, the most one row can get from it. Terms are taken from the highest bound down,
every row of a term's postings becoming a candidate; once the ``k``-th best candidate's partial
sum (a lower bound of the ``k``-th best score) beats the bounds of the terms left, no row
outside the candidates can make the top ``k``, and the remaining terms (the common ones, with
long postings and low IDF) are only looked up for the candidates. A candidate whose partial sum
plus the bounds left cannot reach that threshold is dropped as it falls behind.

Nothing is approximate: a row leaves only when it is strictly below ``k`` others (with a margin
far above the floats' rounding), and the rows kept get the exact score of
:meth:`~trilha.index.bm25.Segments.scores`, each term's part added in query order (the same
floats, bitwise). Ties are ordered by row. A term's bound comes from
:meth:`~trilha.index.bm25.TermMatrix.peaks`, so it holds for any ``k1``, ``b`` and visibility.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from trilha.index.bm25 import (
    Floats,
    Ints,
    Segments,
    VisibleStats,
    idf,
    query_counts,
    saturation,
)
from trilha.index.columns import BoolArray

#: Relative slack on every comparison of sums of bounds with a threshold: far above the
#: rounding of a sum of a few dozen floats (~1e-15), so no row that may tie is dropped.
SLACK = 1e-9


@dataclass(frozen=True)
class Term:
    """A query term over the live rows: its postings, its weight and its bound."""

    rows: Ints  # the live rows holding the term, in row order
    tf: Floats  # the term's count in each
    weight: float  # the query count times the IDF over the visible rows
    bound: float  # the most a visible row gets from the term


@dataclass(frozen=True)
class Bm25Query:
    """A query's terms (in query order) and the statistics they are scored with."""

    terms: tuple[Term, ...]
    lengths: Ints
    visible: BoolArray | None
    avgdl: float
    k1: float
    b: float

    @classmethod
    def of(
        cls,
        segments: Segments,
        tokens: Sequence[str],
        visible: BoolArray | None,
        stats: VisibleStats,
        k1: float,
        b: float,
    ) -> Bm25Query | None:
        """The query of ``tokens`` over ``segments`` with the statistics of the ``visible`` live
        rows (all live rows: None); None when no live row holds a query term (as
        :meth:`Segments.scores`)."""
        counts = query_counts(tokens).items()
        held = [(t, c, p) for t, c in counts if (p := segments.postings(t))[0].size]
        if not held or stats.n == 0:
            return None
        if visible is segments.alive:
            visible = None  # every live row (the postings hold no other)
        terms = []
        for token, count, (rows, tf) in held:
            df = rows.size if visible is None else int(np.count_nonzero(visible[rows]))
            if df:
                weight = count * idf(df, stats.n)
                tfs, shortest = segments.peaks(token)
                best = float(saturation(tfs, shortest, stats.avgdl, k1, b).max())
                terms.append(Term(rows, tf, weight, weight * best))
        return cls(tuple(terms), segments.lengths, visible, stats.avgdl, k1, b)

    def _part(self, term: Term, tf: Floats, rows: Ints) -> Floats:
        """``term``'s part of the score of ``rows`` (that hold it ``tf`` times): the floats
        of :meth:`Segments.scores`."""
        return term.weight * saturation(tf, self.lengths[rows], self.avgdl, self.k1, self.b)

    def at(self, rows: Ints) -> Floats:
        """The exact score of each of ``rows`` (0 outside the visible rows): each term's part
        added in query order, as :meth:`Segments.scores` adds them."""
        out = np.zeros(rows.size, dtype=np.float64)
        seen = None if self.visible is None else self.visible[rows]
        for term in self.terms:
            at, hit = _lookup(term.rows, rows)
            if seen is not None:
                hit &= seen
            out[hit] += self._part(term, term.tf[at[hit]], rows[hit])
        return out

    def top(self, k: int, mask: BoolArray | None = None) -> list[tuple[int, float]]:
        """The ``k`` best (row, score) pairs among the visible rows ``mask`` keeps (all: None),
        best first, ties by row; what :meth:`LexicalIndex.top` picks from every row's score."""
        if k <= 0 or not self.terms:
            return []
        rows = self._candidates(k, mask)
        scores = self.at(rows)
        order = np.lexsort((rows, -scores))[:k]
        return list(zip(rows[order].tolist(), scores[order].tolist(), strict=True))

    def _candidates(self, k: int, mask: BoolArray | None) -> Ints:
        """Rows (in row order) among which the top ``k`` are."""
        terms = sorted(self.terms, key=lambda t: -t.bound)
        # left[i]: the most a row can get from terms[i:]
        left = [*np.cumsum([t.bound for t in reversed(terms)])[::-1].tolist(), 0.0]
        floor = self._floor(terms, k, mask)
        # the terms whose rows may all be candidates: a row none of them holds is below floor
        wide = next((i for i, rest in enumerate(left) if _below(rest, floor)), len(terms))
        rows, sums = self._gathered(terms[:wide], mask, floor, left[wide])
        for i in range(wide, len(terms)):
            term = terms[i]
            self._add(term, rows, sums)
            floor = max(floor, _kth(sums, k))  # a partial sum is at most the score
            kept = ~_below(sums + left[i + 1], floor)
            rows, sums = rows[kept], sums[kept]
        return rows

    def _add(self, term: Term, rows: Ints, sums: Floats) -> None:
        """Add ``term``'s parts to the ``sums`` of ``rows`` (sorted) that hold it, looking the
        shorter list up in the longer."""
        if rows.size <= term.rows.size:
            at, hit = _lookup(term.rows, rows)
            sums[hit] += self._part(term, term.tf[at[hit]], rows[hit])
        else:
            at, hit = _lookup(rows, term.rows)
            sums[at[hit]] += self._part(term, term.tf[hit], term.rows[hit])

    def _floor(self, terms: Sequence[Term], k: int, mask: BoolArray | None) -> float:
        """A lower bound of the ``k``-th best score: the ``k``-th best exact score of a few
        rows of the highest-bound terms (0: fewer than ``k`` such rows)."""
        seeds: list[Ints] = []
        found, most = 0, max(k, SEEDS)
        for term in terms:
            rows, tf = self._kept(term, mask)
            if rows.size > most:  # the rows the term gives the most
                rows = rows[np.argpartition(-self._part(term, tf, rows), most - 1)[:most]]
            seeds.append(rows)
            found += rows.size
            if found >= most:
                break
        rows = np.unique(np.concatenate(seeds)) if seeds else _NO_ROWS
        return _kth(self.at(rows), k)

    def _gathered(
        self, terms: Sequence[Term], mask: BoolArray | None, floor: float, rest: float
    ) -> tuple[Ints, Floats]:
        """The visible rows in ``mask`` that hold any of ``terms`` and whose sum of those
        terms' parts, plus ``rest``, may reach ``floor`` (in row order), and those sums."""
        found, parts = [], []
        for term in terms:
            rows, tf = self._kept(term, mask)
            found.append(rows)
            parts.append(self._part(term, tf, rows))
        if not found:
            return _NO_ROWS, _NO_SUMS
        rows, summed = np.concatenate(found), np.concatenate(parts)
        cut = floor * (1 - SLACK) / (1 + SLACK) - rest
        if rows.size * DENSE < self.lengths.size:
            order = np.argsort(rows, kind="stable")  # sorted runs: merged
            rows, summed = rows[order], summed[order]
            first = np.ones(rows.size, dtype=bool)
            np.not_equal(rows[1:], rows[:-1], out=first[1:])
            starts = np.flatnonzero(first)
            rows, summed = rows[starts], np.add.reduceat(summed, starts)
            kept = np.flatnonzero(summed >= cut if cut > 0 else summed > 0)
            return rows[kept], summed[kept]
        dense = np.asarray(np.bincount(rows, summed, self.lengths.size), dtype=np.float64)
        held = np.flatnonzero(dense >= cut if cut > 0 else dense > 0)
        return held, dense[held]

    def _kept(self, term: Term, mask: BoolArray | None) -> tuple[Ints, Floats]:
        """``term``'s rows that are visible and in ``mask``, and its counts there."""
        keep = None if self.visible is None else self.visible[term.rows]
        if mask is not None:
            keep = mask[term.rows] if keep is None else keep & mask[term.rows]
        if keep is None:
            return term.rows, term.tf
        return term.rows[keep], term.tf[keep]


#: Rows whose exact scores give the first lower bound of the ``k``-th best score.
SEEDS = 256
#: Above one posting in this many rows, a sum over every row is cheaper than a sort.
DENSE = 8

_NO_ROWS: Ints = np.zeros(0, dtype=np.int64)
_NO_SUMS: Floats = np.zeros(0, dtype=np.float64)


def _below(bound: float | Floats, floor: float) -> bool | BoolArray:
    """Whether ``bound`` (a sum of parts or bounds) is surely below ``floor`` (never when
    ``floor`` is 0: no bound yet)."""
    return bound * (1 + SLACK) < floor * (1 - SLACK)  # type: ignore[no-any-return]


def _lookup(postings: Ints, rows: Ints) -> tuple[Ints, BoolArray]:
    """Where each of ``rows`` is in the sorted ``postings`` and whether it is there."""
    if not postings.size:
        return np.zeros(rows.size, dtype=np.int64), np.zeros(rows.size, dtype=bool)
    at = np.minimum(np.searchsorted(postings, rows), postings.size - 1)
    return at, postings[at] == rows


def _kth(sums: Floats, k: int) -> float:
    """The ``k``-th largest of ``sums`` (0 when there are fewer)."""
    if sums.size < k:
        return 0.0
    return float(np.partition(sums, sums.size - k)[sums.size - k])
