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

The index grows by segments (:class:`Segments`): a matrix per batch of added units, each over
its own rows, and a tombstone mask of the rows deleted (or replaced) since. ``N``, df and avgdl
are taken over the live visible rows of every segment together, so a segmented index scores
exactly as one matrix of its live rows would (the same floats: df and length sums are
integers, the per-row arithmetic is the same). :meth:`Segments.merged` folds the segments
into one matrix without their dead rows, in the same row order; until then a snapshot keeps
the live postings it joined for the terms last searched (:data:`LIVE_POSTINGS`).

A search's top ``k`` need not score every row: :class:`Bm25Query` takes it by MaxScore
(Turtle & Flood, "Query evaluation: strategies and optimizations", 1995). Each query term has an
upper bound, the most one row can get from it (from :meth:`TermMatrix.peaks`, so it holds for
any ``k1``, ``b`` and visibility). Terms are taken from the highest bound down, every row of a
term's postings becoming a candidate; once the ``k``-th best candidate's partial sum (a lower
bound of the ``k``-th best score) beats the bounds of the terms left, no row outside the
candidates can make the top ``k``, and the remaining terms (the common ones, with long postings
and low IDF) are only looked up for the candidates. A candidate whose partial sum plus the
bounds left cannot reach that threshold is dropped as it falls behind. Nothing is approximate:
a row leaves only when it is strictly below ``k`` others (with a margin far above the floats'
rounding), and the rows kept get the exact score of :meth:`Segments.scores`, each term's part
added in query order (the same floats, bitwise). Ties are ordered by row.
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import numpy.typing as npt

from trilha.index.columns import BoolArray

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

#: Postings of several segments (or with dead rows) a :class:`Segments` keeps joined, for the
#: terms last searched: 16 bytes each (64 MiB), the common terms most queries share.
LIVE_POSTINGS = 1 << 22

_NO_ROWS: Ints = np.zeros(0, dtype=np.int64)
_NO_TF: Floats = np.zeros(0, dtype=np.float64)


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
    _peaks: dict[int, tuple[Floats, Ints]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

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

    def postings(self, term: str) -> tuple[Ints, Floats]:
        """The rows holding ``term`` (in row order) and its count in each; empty when absent."""
        t = self.vocab.get(term)
        if t is None:
            return _NO_ROWS, _NO_TF
        return self.rows[self.indptr[t] : self.indptr[t + 1]], self.tf[
            self.indptr[t] : self.indptr[t + 1]
        ]

    def peaks(self, term: str) -> tuple[Floats, Ints]:
        """Each count ``term`` has in some row and the shortest row with that count: the rows
        among which one scores the most for ``term``, whatever ``k1``, ``b`` and the average
        length (saturation grows with the count and falls with the length). Found on first
        use, then kept; empty when absent."""
        t = self.vocab.get(term)
        if t is None:
            return _NO_TF, _NO_ROWS
        known = self._peaks.get(t)
        if known is None:
            span = slice(self.indptr[t], self.indptr[t + 1])
            counts = self.tf[span].astype(np.int64)
            shortest = np.full(int(counts.max()) + 1, np.iinfo(np.int64).max)
            np.minimum.at(shortest, counts, self.lengths[self.rows[span]])
            held = np.flatnonzero(shortest < np.iinfo(np.int64).max)
            known = self._peaks[t] = (held.astype(np.float64), shortest[held])
        return known

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


@dataclass(frozen=True)
class Segments:
    """Term matrices over consecutive row ranges (``starts[i]`` is ``parts[i]``'s first row),
    every row's length, and the rows still alive (None: all)."""

    parts: tuple[TermMatrix, ...]
    starts: tuple[int, ...]
    lengths: Ints
    alive: BoolArray | None = None
    _live: OrderedDict[str, tuple[Ints, Floats]] = field(
        default_factory=OrderedDict, init=False, repr=False, compare=False
    )
    _held: list[int] = field(default_factory=lambda: [0], init=False, repr=False, compare=False)
    _lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    @classmethod
    def of(cls, matrix: TermMatrix) -> Segments:
        """One matrix, every row alive."""
        return cls((matrix,), (0,), matrix.lengths)

    @property
    def n(self) -> int:
        """Rows, dead ones included."""
        return int(self.lengths.size)

    def extended(self, matrix: TermMatrix | None, dead: Ints) -> Segments:
        """These segments with ``matrix``'s rows appended (None: no rows) and the rows ``dead``
        killed: a new value, this one unchanged (a search may be reading it)."""
        n = self.n + (0 if matrix is None else matrix.lengths.size)
        alive = None
        if self.alive is not None or dead.size:
            alive = np.ones(n, dtype=bool)
            if self.alive is not None:
                alive[: self.n] = self.alive
            alive[dead] = False
        if matrix is None:
            return Segments(self.parts, self.starts, self.lengths, alive)
        return Segments(
            (*self.parts, matrix),
            (*self.starts, self.n),
            np.concatenate([self.lengths, matrix.lengths]),
            alive,
        )

    def holds(self, term: str) -> bool:
        """Whether a live row holds ``term``."""
        if self.alive is None:
            return any(term in part.vocab for part in self.parts)
        return self.postings(term)[0].size > 0

    def postings(self, term: str) -> tuple[Ints, Floats]:
        """The live rows holding ``term`` in every segment, in row order, and its counts (of
        several segments or with dead rows: kept for the next queries, up to
        :data:`LIVE_POSTINGS` postings)."""
        if len(self.parts) == 1 and self.alive is None:
            return self.parts[0].postings(term)
        with self._lock:
            known = self._live.get(term)
            if known is not None:
                self._live.move_to_end(term)
                return known
        known = self._joined_postings(term)
        if not known[0].size:
            return known
        with self._lock:  # the least recently searched terms go first
            if term not in self._live:
                self._live[term] = known
                self._held[0] += known[0].size
            while self._held[0] > LIVE_POSTINGS and len(self._live) > 1:
                _, (rows, _) = self._live.popitem(last=False)
                self._held[0] -= rows.size
        return known

    def _joined_postings(self, term: str) -> tuple[Ints, Floats]:
        """:meth:`postings`, found in each segment."""
        found = [(rows + start if start else rows, tf)
                 for part, start in zip(self.parts, self.starts, strict=True)
                 for rows, tf in [part.postings(term)] if rows.size]  # fmt: skip
        if not found:
            return _NO_ROWS, _NO_TF
        rows = np.concatenate([r for r, _ in found]) if len(found) > 1 else found[0][0]
        tf = np.concatenate([t for _, t in found]) if len(found) > 1 else found[0][1]
        if self.alive is not None:
            keep = self.alive[rows]
            rows, tf = rows[keep], tf[keep]
        return rows, tf

    def peaks(self, term: str) -> tuple[Floats, Ints]:
        """:meth:`TermMatrix.peaks` of every segment together (dead rows included: a bound)."""
        found = [part.peaks(term) for part in self.parts]
        if len(found) == 1:
            return found[0]
        return np.concatenate([c for c, _ in found]), np.concatenate([n for _, n in found])

    def scores(
        self,
        tokens: Sequence[str],
        visible: BoolArray | None,
        stats: VisibleStats,
        k1: float,
        b: float,
    ) -> Floats | None:
        """BM25 of every row for a query's tokens, with ``N``, df and avgdl over the ``visible``
        live rows (all live rows: None; ``stats`` are theirs); other rows score 0. None: no
        query term is held by a live row."""
        query = Bm25Query.of(self, tokens, visible, stats, k1, b)
        return None if query is None else query.every_row

    def merged(self) -> TermMatrix:
        """One matrix of the live rows, renumbered in row order (each term's rows in row order,
        as :meth:`TermMatrix.build` makes them)."""
        if self.alive is None:
            return _joined(self.parts, self.starts, 0, self.lengths)
        live = np.cumsum(self.alive) - 1  # a live row's new number
        return _joined(self.parts, self.starts, 0, self.lengths[self.alive], self.alive, live)

    def joined(self, first: int) -> Segments:
        """The same rows with the segments from ``first`` on joined into one (dead rows kept:
        no row moves), so that a search loops over fewer segments."""
        if len(self.parts) - first < 2:
            return self
        start = self.starts[first]
        tail = _joined(self.parts[first:], self.starts[first:], start, self.lengths[start:])
        return Segments((*self.parts[:first], tail), self.starts[: first + 1], self.lengths,
                        self.alive)  # fmt: skip


def _joined(
    parts: Sequence[TermMatrix],
    starts: Sequence[int],
    origin: int,
    lengths: Ints,
    keep: BoolArray | None = None,
    renumber: Ints | None = None,
) -> TermMatrix:
    """The matrices ``parts`` (their rows from ``starts``) as one whose rows start at
    ``origin``; with ``keep``, only those rows, numbered by ``renumber``."""
    vocab: dict[str, int] = {}
    terms, rows, tf = [], [], []
    for part, start in zip(parts, starts, strict=True):
        ids = np.fromiter((vocab.setdefault(w, len(vocab)) for w in part.vocab), np.int64,
                          count=len(part.vocab))  # fmt: skip
        terms.append(np.repeat(ids, np.diff(part.indptr)))
        rows.append(part.rows + start)
        tf.append(part.tf)
    term, row, counts = np.concatenate(terms), np.concatenate(rows), np.concatenate(tf)
    if keep is not None and renumber is not None:
        held = keep[row]
        term, row, counts = term[held], renumber[row[held]], counts[held]
    else:
        row = row - origin
    # each part is sorted by (term, row) and later parts hold later rows: a stable sort by
    # term alone merges those runs into (term, row) order
    order = np.argsort(term, kind="stable")
    term, row, counts = term[order], row[order], counts[order]
    used = np.bincount(term, minlength=len(vocab))
    words = [w for w, i in vocab.items() if used[i]]
    indptr = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(used[used > 0], out=indptr[1:])
    return TermMatrix({w: i for i, w in enumerate(words)}, indptr, row, counts, lengths)


#: Relative slack on every comparison of sums of bounds with a threshold: far above the
#: rounding of a sum of a few dozen floats (~1e-15), so no row that may tie is dropped.
SLACK = 1e-9


@dataclass(frozen=True)
class Term:
    """A query term over the visible live rows: its postings and its weight."""

    token: str
    rows: Ints  # the visible live rows holding the term, in row order
    tf: Floats  # the term's count in each
    weight: float  # the query count times the IDF over the visible rows


@dataclass(frozen=True)
class Bm25Query:
    """A query's terms (in query order) and the statistics they are scored with."""

    terms: tuple[Term, ...]  # each over the visible rows only
    segments: Segments
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
            if visible is not None:
                seen = visible[rows]
                rows, tf = rows[seen], tf[seen]
            if rows.size:
                terms.append(Term(token, rows, tf, count * idf(rows.size, stats.n)))
        return cls(tuple(terms), segments, stats.avgdl, k1, b)

    @property
    def lengths(self) -> Ints:
        """Every row's length (in tokens)."""
        return self.segments.lengths

    def _part(self, term: Term, tf: Floats, rows: Ints) -> Floats:
        """``term``'s part of the score of ``rows`` (that hold it ``tf`` times)."""
        return term.weight * saturation(tf, self.lengths[rows], self.avgdl, self.k1, self.b)

    def _bound(self, term: Term) -> float:
        """The most one visible row gets from ``term`` (from :meth:`Segments.peaks`)."""
        tfs, shortest = self.segments.peaks(term.token)
        return term.weight * float(saturation(tfs, shortest, self.avgdl, self.k1, self.b).max())

    def at(self, rows: Ints) -> Floats:
        """The exact score of each of ``rows`` (0 outside the visible rows): each term's part
        added in query order, as :attr:`every_row` adds them."""
        if self.lengths.size < EVERY_ROW_BELOW:
            return self.every_row[rows]
        out = np.zeros(rows.size, dtype=np.float64)
        for term in self.terms:
            at, hit = _lookup(term.rows, rows)
            out[hit] += self._part(term, term.tf[at[hit]], rows[hit])
        return out

    def top(self, k: int, mask: BoolArray | None = None) -> list[tuple[int, float]]:
        """The ``k`` best (row, score) pairs among the visible rows ``mask`` keeps (all: None),
        best first, ties by row; what :meth:`LexicalIndex.top` picks from every row's score."""
        if k <= 0 or not self.terms:
            return []
        if self.lengths.size < EVERY_ROW_BELOW:
            scores = self.every_row
            return top_rows(scores if mask is None else np.where(mask, scores, 0.0), k)
        rows = self._candidates(k, mask)
        scores = self.at(rows)
        order = np.lexsort((rows, -scores))[:k]
        return list(zip(rows[order].tolist(), scores[order].tolist(), strict=True))

    @cached_property
    def every_row(self) -> Floats:
        """Every row's score (0 outside the visible rows), each term's parts added in query
        order in one ``bincount`` (the same additions, in the same order, as one scatter per
        term); made once. :meth:`Segments.scores`, and the searches of indexes below
        :data:`EVERY_ROW_BELOW` rows, which score every row."""
        if not self.terms:
            return np.zeros(self.lengths.size, dtype=np.float64)
        kept = [(term, *self._kept(term, None)) for term in self.terms]
        rows = np.concatenate([r for _, r, _ in kept])
        parts = np.concatenate([self._part(term, tf, r) for term, r, tf in kept])
        return np.asarray(np.bincount(rows, parts, self.lengths.size), dtype=np.float64)

    def _candidates(self, k: int, mask: BoolArray | None) -> Ints:
        """Rows (in row order) among which the top ``k`` are."""
        bounded = sorted(((self._bound(t), t) for t in self.terms), key=lambda p: -p[0])
        terms = [t for _, t in bounded]
        # left[i]: the most a row can get from terms[i:]
        left = [*np.cumsum([bound for bound, _ in reversed(bounded)])[::-1].tolist(), 0.0]
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
            return _NO_ROWS, _NO_TF
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
        """``term``'s (visible) rows in ``mask`` (all: None), and its counts there."""
        if mask is None:
            return term.rows, term.tf
        keep = mask[term.rows]
        return term.rows[keep], term.tf[keep]


#: Below this many rows a search scores every row (one ``bincount``) rather than pruning:
#: top 40 of 100 SciFact queries on synthetic indexes took 0.17 against 0.64 ms at 5,000 rows,
#: 0.97 against 1.45 ms at 100,000, and 3.6 against 3.0 ms at 300,000.
EVERY_ROW_BELOW = 200_000
#: Rows whose exact scores give the first lower bound of the ``k``-th best score.
SEEDS = 256
#: Above one posting in this many rows, a sum over every row is cheaper than a sort.
DENSE = 8


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


def top_rows(scores: Floats, k: int) -> list[tuple[int, float]]:
    """The ``k`` best (row, score) pairs of positive ``scores``, best first and equal scores by
    row: every row above the ``k``-th score, then the first rows tied with it."""
    positive = np.flatnonzero(scores > 0)
    found = scores[positive]
    if positive.size > k:
        kth = np.partition(found, positive.size - k)[positive.size - k]
        tied = np.flatnonzero(found == kth)[: k - int(np.count_nonzero(found > kth))]
        chosen = np.sort(np.concatenate([np.flatnonzero(found > kth), tied]))
        positive, found = positive[chosen], found[chosen]
    order = np.argsort(-found, kind="stable")  # rows in order: ties by row
    return list(zip(positive[order].tolist(), found[order].tolist(), strict=True))


def _kth(sums: Floats, k: int) -> float:
    """The ``k``-th largest of ``sums`` (0 when there are fewer)."""
    if sums.size < k:
        return 0.0
    return float(np.partition(sums, sums.size - k)[sums.size - k])
