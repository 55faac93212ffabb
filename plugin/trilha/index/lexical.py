"""The lexical index: BM25 (Lucene variant) over the units a caller may see, filters as row masks.

The index keeps each unit's term frequencies and length (:class:`~trilha.index.bm25.TermMatrix`)
rather than precomputed scores, so that ``N``, document frequencies and the average length are
taken over the rows the caller's visibility keeps (:meth:`LexicalIndex.score_all`'s ``visible``):
a unit the caller may not see moves none of their scores. The query's analysers are those of the
visible units' languages, for the same reason. The caller's own filters choose among the visible
rows and leave the statistics alone.

The index is derived state: it is rebuilt from the unit store's stored tokens after each ingest
batch (seconds for 100k units; nothing is re-tokenised) and persisted beside a generation
stamp, so reopening an unchanged workspace loads it instead of rebuilding. Filters are applied
to the score vector before top-k selection, so a unit outside the filter can never be returned,
not even with a zero score.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from trilha.index.bm25 import TermMatrix, VisibleStats
from trilha.index.columns import BoolArray, MetaColumns
from trilha.index.language import primary_code
from trilha.index.tokenize import base_lang, tokenize_query
from trilha.types import TextUnit

log = logging.getLogger(__name__)

#: What :meth:`LexicalIndex.save` writes; a snapshot of another format is rebuilt, not read.
FORMAT = "tf-1"
#: Visible views (statistics, languages) kept per index, one per distinct visibility mask.
VIEWS = 64


class _View(NamedTuple):
    """What the rows of one visibility mask make of the index."""

    stats: VisibleStats
    unit_langs: list[str]
    langs: list[str]


class LexicalIndex:
    """BM25 over units: :meth:`score_all` scores every row, :meth:`top` selects under a mask."""

    def __init__(
        self,
        units: Sequence[TextUnit],
        terms: TermMatrix | None,
        k1: float = 1.5,
        b: float = 0.75,
    ) -> None:
        self.units = tuple(units)  # a snapshot: never changed, replaced whole
        self.row_of = {u.unit_id: i for i, u in enumerate(self.units)}
        self.columns = MetaColumns([u.payload() for u in self.units])
        codes = {primary_code(u.lang): None for u in self.units}  # in order of first use
        index_of = {code: i for i, code in enumerate(codes)}
        self._lang_names = list(codes)
        self._lang_rows = np.array([index_of[primary_code(u.lang)] for u in self.units], np.int64)
        self._terms = terms
        self.k1, self.b = k1, b
        self._everyone = self._view_of(None)
        #: Every unit's languages, most frequent first, hidden units included: for operator
        #: tools over the whole corpus; a caller's query language is chosen from
        #: :meth:`langs_of` their visible rows, so that hidden units cannot change it.
        self.unit_langs = self._everyone.unit_langs
        #: The analysers of those languages, most frequent first.
        self.langs = self._everyone.langs
        self._views: OrderedDict[int, tuple[BoolArray, _View]] = OrderedDict()
        self._lock = threading.Lock()
        #: The unit store's generation this snapshot reflects (-1: not from a store).
        self.generation = -1

    @classmethod
    def build(
        cls,
        units: Sequence[TextUnit],
        tokens: Sequence[list[str]],
        k1: float = 1.5,
        b: float = 0.75,
    ) -> LexicalIndex:
        """Index units whose tokens were computed at ingest."""
        if not units:
            return cls([], None, k1, b)
        return cls(units, TermMatrix.build(tokens), k1, b)

    def __len__(self) -> int:
        return len(self.units)

    # -- what the visible rows make of the index ----------------------------------------------
    def _unit_langs(self, visible: BoolArray | None) -> list[str]:
        """The languages of the ``visible`` rows, most frequent first, ties in order of first
        use among them (as ``Counter.most_common`` orders them)."""
        rows = np.arange(len(self.units)) if visible is None else np.flatnonzero(visible)
        langs = self._lang_rows[rows]
        counts = np.bincount(langs, minlength=len(self._lang_names))
        first = np.full(len(self._lang_names), len(self.units))
        np.minimum.at(first, langs, rows)
        order = sorted(np.flatnonzero(counts), key=lambda i: (-counts[i], first[i]))
        return [self._lang_names[i] for i in order] or ["en"]

    def _view_of(self, visible: BoolArray | None) -> _View:
        lengths = None if self._terms is None else self._terms.lengths
        stats = VisibleStats(0, 0.0) if lengths is None else VisibleStats.of(lengths, visible)
        unit_langs = self._unit_langs(visible)
        return _View(stats, unit_langs, list(dict.fromkeys(base_lang(x) for x in unit_langs)))

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

    def score_all(
        self, text: str, visible: BoolArray | None = None
    ) -> npt.NDArray[np.float64] | None:
        """The BM25 score of every row for ``text``, with the statistics of the ``visible``
        rows (all rows: None); rows outside ``visible`` score 0. None when no query term is
        indexed."""
        if self._terms is None:
            return None
        view = self._view(visible)
        tokens = tokenize_query(text, view.langs)
        return self._terms.scores(tokens, visible, view.stats, self.k1, self.b)

    @staticmethod
    def top(
        scores: npt.NDArray[np.float64] | None, k: int, mask: BoolArray | None = None
    ) -> list[tuple[int, float]]:
        """Top ``k`` (row, score) pairs with a positive score, restricted to ``mask``."""
        if scores is None or k <= 0:
            return []
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        positive = np.flatnonzero(scores > 0)
        if positive.size > k:
            part = np.argpartition(-scores[positive], k - 1)[:k]
            positive = positive[part]
        order = positive[np.argsort(-scores[positive], kind="stable")]
        return [(int(r), float(scores[r])) for r in order]

    # -- persistence ------------------------------------------------------------------------
    def save(self, folder: Path, generation: int) -> None:
        """Persist the term matrix and the generation it reflects.

        The matrix goes whole into a new folder, ``bm25-<generation>``, before ``state.json``
        is replaced to point at it (a rename), so a process reading the workspace while this
        one writes it loads either the old snapshot or the new one, never half of each. Older
        folders are then removed (one writer saves at a time: it holds the workspace lock)."""
        folder.mkdir(parents=True, exist_ok=True)
        name = f"bm25-{generation}"
        if self._terms is not None and not (folder / name).exists():
            staging = Path(tempfile.mkdtemp(prefix=".saving-", dir=folder))
            self._terms.save(staging)
            staging.rename(folder / name)
        state = {"generation": generation, "units": len(self.units), "empty": self._terms is None}
        staged = folder / f".state-{os.getpid()}.json"
        staged.write_text(json.dumps({**state, "folder": name, "format": FORMAT}))
        os.replace(staged, folder / "state.json")
        for old in folder.iterdir():
            if old.is_dir() and old.name != name:  # older snapshots, a crashed save's staging
                shutil.rmtree(old, ignore_errors=True)

    @classmethod
    def load(
        cls,
        folder: Path,
        generation: int,
        units: Sequence[TextUnit],
        k1: float = 1.5,
        b: float = 0.75,
    ) -> LexicalIndex | None:
        """The saved index if it reflects ``generation``; None when it must be rebuilt (also
        when an older trilha wrote it: bm25s's precomputed scores, without term frequencies)."""
        state_file = folder / "state.json"
        if not state_file.exists():
            return None
        try:
            state = json.loads(state_file.read_text())
            if state["generation"] != generation or state["units"] != len(units):
                return None
            if state.get("format") != FORMAT:
                return None
            terms = None if state["empty"] else TermMatrix.load(folder / str(state["folder"]))
        except (OSError, ValueError, KeyError) as e:
            log.warning("lexical index at %s unreadable (%s); rebuilding", folder, e)
            return None
        return cls(units, terms, k1, b)
