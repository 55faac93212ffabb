"""The lexical index: BM25 (Lucene variant) over the units a caller may see, filters as row masks.

The index keeps each unit's term frequencies and length (:class:`~trilha.index.bm25.Segments`)
rather than precomputed scores, so that ``N``, document frequencies and the average length are
taken over the rows the caller's visibility keeps (:meth:`LexicalIndex.score_all`'s ``visible``):
a unit the caller may not see moves none of their scores. The query's analysers are those of the
visible units' languages, for the same reason. The caller's own filters choose among the visible
rows and leave the statistics alone.

An index is a snapshot, never changed once searched: :meth:`LexicalIndex.extended` makes the
next one from the units added and the rows deleted since, at a cost that grows with them, not
with the corpus. The new units get new rows at the end (a segment of the term matrix, of the
filter columns and of the units by row) and the deleted ones become dead rows, which match no
filter, count in no statistic and are never returned; everything else is shared with the
snapshot before. A unit replaced is one row deleted and one added. Live rows keep the unit
store's order, so scores and ties are those of an index built whole from the live units.
:meth:`LexicalIndex.compacted` folds the segments into one without dead rows (the "merge" of
:mod:`trilha.index.lexical_store`, which keeps the index at the store's generation and saves
it). Filters are applied to the score vector before top-k selection, so a unit outside the
filter can never be returned, not even with a zero score.

A search does not score every row: :meth:`LexicalIndex.query` takes its top ``k`` by MaxScore
(:class:`~trilha.index.bm25.Bm25Query`), which skips the rows that cannot make it and returns what
:meth:`LexicalIndex.top` takes from :meth:`LexicalIndex.score_all` (the same rows, order and
floats); the filter mask and the visibility restrict the rows it takes in the same way.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from typing import NamedTuple, overload

import numpy as np
import numpy.typing as npt

from trilha.index.bm25 import Bm25Query, Ints, Segments, TermMatrix, VisibleStats, top_rows
from trilha.index.columns import BoolArray, MetaColumns
from trilha.index.language import primary_code
from trilha.index.row_vectors import RowVectors, VectorSource
from trilha.index.tokenize import base_lang, tokenize_query
from trilha.types import TextUnit

#: Visible views (statistics, languages) kept per index, one per distinct visibility mask.
VIEWS = 64


class _View(NamedTuple):
    """What the rows of one visibility mask make of the index."""

    stats: VisibleStats
    unit_langs: list[str]
    langs: list[str]
    rows: BoolArray | None  # the mask without dead rows (None: every row)


class UnitRows(Sequence[TextUnit]):
    """The unit of each row, dead rows included: the first ``n`` of a list that later snapshots
    append to (a snapshot never reads past its own ``n``)."""

    def __init__(self, units: list[TextUnit], n: int) -> None:
        self._units, self._n = units, n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> TextUnit: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[TextUnit]: ...
    def __getitem__(self, i: int | slice) -> TextUnit | Sequence[TextUnit]:
        if isinstance(i, slice):
            return self._units[: self._n][i]
        if not -self._n <= i < self._n:
            raise IndexError(i)
        return self._units[i % self._n]

    def __iter__(self) -> Iterator[TextUnit]:
        return iter(self._units[: self._n])

    def taken(self, rows: Ints) -> list[TextUnit]:
        """The units of ``rows``."""
        units = self._units
        return [units[r] for r in rows.tolist()]

    def extended(self, units: Sequence[TextUnit]) -> UnitRows:
        """These rows and ``units`` after them (the list is shared while nothing else grew it)."""
        shared = self._units if len(self._units) == self._n else self._units[: self._n]
        shared.extend(units)
        return UnitRows(shared, self._n + len(units))


class RowIds(Mapping[str, int]):
    """The row of each live unit: the ids of the merged segment, those added since (a unit added
    again after its deletion or replacement gets its newest row there) and the dead rows."""

    def __init__(
        self, base: dict[str, int], added: dict[str, int], alive: BoolArray | None, live: int
    ) -> None:
        self._base, self._added, self._alive, self._live = base, added, alive, live

    def get(self, unit_id: str, default: int | None = None) -> int | None:  # type: ignore[override]
        row = self._added.get(unit_id)
        if row is None:
            row = self._base.get(unit_id)
        if row is None or (self._alive is not None and not self._alive[row]):
            return default
        return row

    def __getitem__(self, unit_id: str) -> int:
        row = self.get(unit_id)
        if row is None:
            raise KeyError(unit_id)
        return row

    def __contains__(self, unit_id: object) -> bool:
        return isinstance(unit_id, str) and self.get(unit_id) is not None

    def __iter__(self) -> Iterator[str]:
        yield from (u for u in self._base if u not in self._added and u in self)
        yield from (u for u in self._added if u in self)

    def __len__(self) -> int:
        return self._live

    def extended(self, units: Sequence[TextUnit], start: int, alive: BoolArray | None) -> RowIds:
        """These ids with ``units`` at rows ``start``... and ``alive`` the rows not deleted."""
        added = {**self._added, **{u.unit_id: start + i for i, u in enumerate(units)}}
        live = len(units) + (start if alive is None else int(np.count_nonzero(alive[:start])))
        return RowIds(self._base, added, alive, live)


class LexicalIndex:
    """BM25 over units: :meth:`score_all` scores every row, :meth:`top` selects under a mask."""

    def __init__(
        self,
        units: Sequence[TextUnit],
        terms: TermMatrix | None,
        k1: float = 1.5,
        b: float = 0.75,
        store_rows: Ints | None = None,
        *,
        columns: MetaColumns | None = None,
        vectors: RowVectors | None = None,
    ) -> None:
        """One segment: ``units`` with their term matrix (None: no units), each unit's row in
        the unit store (default: its position) and, when known, their filter ``columns`` and
        dense ``vectors``."""
        units = list(units)
        #: The unit of each row (dead rows too: see :attr:`units` for the live ones).
        self.rows = UnitRows(units, len(units))
        #: The row of each live unit by id.
        self.row_of = RowIds({u.unit_id: i for i, u in enumerate(units)}, {}, None, len(units))
        self.columns = columns or MetaColumns([u.payload() for u in units])
        #: Each row's dense vector in int8, for exact filtered search (None: not kept).
        self.vectors = vectors
        codes = {primary_code(u.lang): None for u in units}  # in order of first use
        index_of = {code: i for i, code in enumerate(codes)}
        self._lang_names = list(codes)
        self._lang_rows = np.array([index_of[primary_code(u.lang)] for u in units], np.int64)
        empty = Segments((), (), np.zeros(0, np.int64))
        self._terms = empty if terms is None else Segments.of(terms)
        #: Each row's ``row`` in the unit store (increasing: the store's order).
        self.store_rows = (
            np.arange(len(units), dtype=np.int64) if store_rows is None else store_rows
        )
        self.k1, self.b = k1, b
        #: The unit store's generation this snapshot reflects (-1: not from a store).
        self.generation = -1
        #: The last entry of the store's deletion log this snapshot reflects.
        self.seq = 0
        #: Rows of the first segment (the merged base the others were added to).
        self.base_rows = len(units)
        self._start_views()

    def _start_views(self) -> None:
        self._everyone = self._view_of(None)
        #: Every unit's languages, most frequent first, hidden units included: for operator
        #: tools over the whole corpus; a caller's query language is chosen from
        #: :meth:`langs_of` their visible rows, so that hidden units cannot change it.
        self.unit_langs = self._everyone.unit_langs
        #: The analysers of those languages, most frequent first.
        self.langs = self._everyone.langs
        self._views: OrderedDict[int, tuple[BoolArray, _View]] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def build(
        cls,
        units: Sequence[TextUnit],
        tokens: Sequence[list[str]],
        k1: float = 1.5,
        b: float = 0.75,
        store_rows: Ints | None = None,
    ) -> LexicalIndex:
        """Index units whose tokens were computed at ingest."""
        terms = TermMatrix.build(tokens) if units else None
        return cls(units, terms, k1, b, store_rows)

    def __len__(self) -> int:
        """Live units."""
        return len(self.row_of)

    @cached_property
    def units(self) -> tuple[TextUnit, ...]:
        """The live units in store order (made on first use: searches read :attr:`rows`)."""
        alive = self._terms.alive
        if alive is None:
            return tuple(self.rows)
        return tuple(self.rows.taken(np.flatnonzero(alive)))

    def units_in(self, mask: BoolArray | None) -> Iterator[TextUnit]:
        """The live units ``mask`` keeps (all: None; one of :attr:`columns`' masks), in order."""
        keep = self._terms.alive if mask is None else mask
        return iter(self.rows if keep is None else self.rows.taken(np.flatnonzero(keep)))

    @property
    def last_row(self) -> int:
        """The newest unit store row this snapshot holds (0: none)."""
        return int(self.store_rows[-1]) if self.store_rows.size else 0

    @property
    def segments(self) -> int:
        """How many term-matrix segments the snapshot has."""
        return len(self._terms.parts)

    @property
    def dead(self) -> int:
        """Rows of deleted or replaced units the snapshot still holds."""
        return len(self.rows) - len(self)

    # -- growing ---------------------------------------------------------------------------
    def extended(
        self,
        units: Sequence[TextUnit],
        tokens: Sequence[list[str]],
        store_rows: Ints,
        deleted: Ints,
        source: VectorSource | None = None,
    ) -> LexicalIndex:
        """The next snapshot: ``units`` (tokens and unit store rows beside them, rows past
        :attr:`last_row`) added at the end, and the units at the store rows ``deleted`` dead;
        the added rows' vectors are read from ``source`` when the snapshot keeps
        :attr:`vectors` (without a source it keeps none). This snapshot is unchanged; most of
        it is shared."""
        at = np.searchsorted(self.store_rows, deleted)
        held = at < self.store_rows.size
        dead = at[held][self.store_rows[at[held]] == deleted[held]]
        start = len(self.rows)
        terms = self._terms.extended(TermMatrix.build(tokens) if units else None, dead)
        out = LexicalIndex.__new__(LexicalIndex)
        out.rows = self.rows.extended(units)
        out.row_of = self.row_of.extended(units, start, terms.alive)
        out.columns = self.columns.extended([u.payload() for u in units], terms.alive)
        out.vectors = None
        if self.vectors is not None and source is not None:
            out.vectors = self.vectors.extended([u.unit_id for u in units], source)
        codes = dict.fromkeys([*self._lang_names, *(primary_code(u.lang) for u in units)])
        index_of = {code: i for i, code in enumerate(codes)}
        out._lang_names = list(codes)
        added = np.array([index_of[primary_code(u.lang)] for u in units], np.int64)
        out._lang_rows = np.concatenate([self._lang_rows, added])
        out._terms = terms
        out.store_rows = np.concatenate([self.store_rows, np.asarray(store_rows, np.int64)])
        out.k1, out.b, out.generation, out.seq = self.k1, self.b, self.generation, self.seq
        out.base_rows = self.base_rows if self._terms.parts else 0
        out._start_views()
        return out

    def joined(self, most: int) -> LexicalIndex:
        """This snapshot with the segments added since the base joined into one when there
        are more than ``most`` (the same rows and scores; a search loops over fewer)."""
        if len(self._terms.parts) - 1 <= most:
            return self
        out = copy.copy(self)
        out._terms = self._terms.joined(1)
        out._start_views()
        return out

    def with_vectors(self, vectors: RowVectors | None) -> LexicalIndex:
        """This snapshot with other :attr:`vectors` (the same rows; this one is unchanged)."""
        out = copy.copy(self)
        out.vectors = vectors
        return out

    def compacted(self) -> LexicalIndex:
        """The same live units in one segment without dead rows (what a merge saves)."""
        alive = self._terms.alive
        live = np.arange(len(self.rows)) if alive is None else np.flatnonzero(alive)
        units = self.rows.taken(live)
        out = LexicalIndex(
            units,
            self._terms.merged() if units else None,
            self.k1,
            self.b,
            self.store_rows[live],
            columns=self.columns.compacted(),
            vectors=None if self.vectors is None else self.vectors.compacted(live),
        )
        out.generation, out.seq = self.generation, self.seq
        return out

    # -- what the visible rows make of the index ----------------------------------------------
    def _unit_langs(self, visible: BoolArray | None) -> list[str]:
        """The languages of the ``visible`` rows, most frequent first, ties in order of first
        use among them (as ``Counter.most_common`` orders them)."""
        rows = np.arange(len(self.rows)) if visible is None else np.flatnonzero(visible)
        langs = self._lang_rows[rows]
        counts = np.bincount(langs, minlength=len(self._lang_names))
        first = np.full(len(self._lang_names), len(self.rows))
        np.minimum.at(first, langs, rows)
        order = sorted(np.flatnonzero(counts), key=lambda i: (-counts[i], first[i]))
        return [self._lang_names[i] for i in order] or ["en"]

    def _view_of(self, visible: BoolArray | None) -> _View:
        alive = self._terms.alive
        rows = alive if visible is None else visible if alive is None else visible & alive
        stats = VisibleStats.of(self._terms.lengths, rows)
        unit_langs = self._unit_langs(rows)
        langs = list(dict.fromkeys(base_lang(x) for x in unit_langs))
        return _View(stats, unit_langs, langs, rows)

    def _view(self, visible: BoolArray | None) -> _View:
        """The statistics and languages of the ``visible`` rows, kept per mask (the compiled
        policies hand the same mask object to every search of one principal)."""
        if visible is None:
            return self._everyone
        with self._lock:
            known = self._views.get(id(visible))
            if known is not None and known[0] is visible:
                self._views.move_to_end(id(visible))
                return known[1]
        view = self._view_of(visible)
        with self._lock:
            self._views[id(visible)] = (visible, view)
            if len(self._views) > VIEWS:
                self._views.popitem(last=False)
        return view

    def langs_of(self, visible: BoolArray | None) -> list[str]:
        """The languages of the ``visible`` rows (all rows: None), most frequent first: what a
        caller's query language (and so their fusion) is chosen from."""
        return self._view(visible).unit_langs

    def query_tokens(self, text: str, visible: BoolArray | None = None) -> list[str]:
        """The tokens a query is scored with: the analysers of every language among the
        ``visible`` rows (all rows: None)."""
        # the most frequent language's analysis keeps BM25 multiplicities
        return tokenize_query(text, self._view(visible).langs)

    def query(
        self,
        text: str,
        visible: BoolArray | None = None,
        k1: float | None = None,
        b: float | None = None,
    ) -> Bm25Query | None:
        """``text`` as a BM25 query over the ``visible`` rows (all rows: None) with the search's
        ``k1`` and ``b`` (None: the index's): its :meth:`~Bm25Query.top` rows without scoring
        every row, and the score of any row (:meth:`~Bm25Query.at`), those of
        :meth:`score_all`. None when no query term is indexed."""
        if not self._terms.parts:
            return None
        view = self._view(visible)
        # held tokens only: the query's language is detected where it changes them
        tokens = tokenize_query(text, view.langs, self._terms.holds)
        k1, b = self.k1 if k1 is None else k1, self.b if b is None else b
        return Bm25Query.of(self._terms, tokens, view.rows, view.stats, k1, b)

    def score_all(
        self,
        text: str,
        visible: BoolArray | None = None,
        k1: float | None = None,
        b: float | None = None,
    ) -> npt.NDArray[np.float64] | None:
        """The BM25 score of every row for ``text``, with the statistics of the ``visible``
        rows (all rows: None) and the search's ``k1`` and ``b`` (None: the index's); rows
        outside ``visible`` (and dead rows) score 0. None when no query term is indexed."""
        query = self.query(text, visible, k1, b)
        return None if query is None else query.every_row

    @staticmethod
    def top(
        scores: npt.NDArray[np.float64] | None, k: int, mask: BoolArray | None = None
    ) -> list[tuple[int, float]]:
        """Top ``k`` (row, score) pairs with a positive score, restricted to ``mask``, best
        first and equal scores by row (argpartition alone picks among rows tied at the
        ``k``-th score and orders them as its selection leaves them)."""
        if scores is None or k <= 0:
            return []
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        return top_rows(scores, k)

    @property
    def matrix(self) -> TermMatrix | None:
        """The term matrix of a one-segment snapshot without dead rows (what is saved)."""
        if self._terms.alive is not None or len(self._terms.parts) > 1:
            raise ValueError("a segmented snapshot has no one matrix: compact it first")
        return self._terms.parts[0] if self._terms.parts else None
