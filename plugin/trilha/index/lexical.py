"""The lexical index: BM25 (Lucene variant, bm25s) over every unit, with filters as row masks.

bm25s has no incremental add or delete, so the index is derived state: it is rebuilt from the
unit store's stored tokens after each ingest batch (seconds for 100k units; nothing is
re-tokenised) and persisted beside a generation stamp, so reopening an unchanged workspace
loads it instead of rebuilding. Filters are applied to the score vector before top-k selection,
so a unit outside the filter can never be returned, not even with a zero score.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np
import numpy.typing as npt

from trilha.index.columns import BoolArray, MetaColumns
from trilha.index.language import primary_code
from trilha.index.tokenize import base_lang, tokenize_query
from trilha.types import TextUnit

log = logging.getLogger(__name__)


class LexicalIndex:
    """BM25 over units: :meth:`score_all` scores every row, :meth:`top` selects under a mask."""

    def __init__(self, units: Sequence[TextUnit], bm25: bm25s.BM25 | None) -> None:
        self.units = tuple(units)  # a snapshot: never changed, replaced whole
        self.row_of = {u.unit_id: i for i, u in enumerate(self.units)}
        self.columns = MetaColumns([u.payload() for u in self.units])
        counts = Counter(primary_code(u.lang) for u in self.units)
        #: The units' languages, most frequent first (what a query's language is chosen from).
        self.unit_langs = [lang for lang, _ in counts.most_common()] or ["en"]
        #: The analysers of those languages, most frequent first.
        self.langs = list(dict.fromkeys(base_lang(lang) for lang in self.unit_langs))
        self._bm25 = bm25
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
            return cls([], None)
        bm25 = bm25s.BM25(k1=k1, b=b, method="lucene")
        bm25.index([t if t else [""] for t in tokens], show_progress=False)
        return cls(units, bm25)

    def __len__(self) -> int:
        return len(self.units)

    def query_tokens(self, text: str) -> list[str]:
        """The tokens a query is scored with (analysers of every language in the index)."""
        # the most frequent language's analysis keeps BM25 multiplicities
        return tokenize_query(text, self.langs)

    def score_all(self, text: str) -> npt.NDArray[np.float64] | None:
        """The BM25 score of every row for ``text`` (None when no query term is indexed)."""
        if self._bm25 is None:
            return None
        ids = self._bm25.get_tokens_ids(self.query_tokens(text))
        if not ids:
            return None
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float64)

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
        """Persist the BM25 matrices and the generation they reflect.

        The matrices go whole into a new folder, ``bm25-<generation>``, before ``state.json``
        is replaced to point at it (a rename), so a process reading the workspace while this
        one writes it loads either the old snapshot or the new one, never half of each. Older
        folders are then removed (one writer saves at a time: it holds the workspace lock)."""
        folder.mkdir(parents=True, exist_ok=True)
        name = f"bm25-{generation}"
        if self._bm25 is not None and not (folder / name).exists():
            staging = Path(tempfile.mkdtemp(prefix=".saving-", dir=folder))
            self._bm25.save(str(staging))
            staging.rename(folder / name)
        state = {"generation": generation, "units": len(self.units), "empty": self._bm25 is None}
        staged = folder / f".state-{os.getpid()}.json"
        staged.write_text(json.dumps({**state, "folder": name}))
        os.replace(staged, folder / "state.json")
        for old in folder.iterdir():
            if old.is_dir() and old.name != name:  # older snapshots, a crashed save's staging
                shutil.rmtree(old, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path, generation: int, units: Sequence[TextUnit]) -> LexicalIndex | None:
        """The saved index if it reflects ``generation``; None when it must be rebuilt."""
        state_file = folder / "state.json"
        if not state_file.exists():
            return None
        try:
            state = json.loads(state_file.read_text())
            if state["generation"] != generation or state["units"] != len(units):
                return None
            saved = folder / str(state.get("folder", "bm25"))  # older workspaces: "bm25"
            bm25 = None if state["empty"] else bm25s.BM25.load(str(saved), mmap=False)
        except (OSError, ValueError, KeyError) as e:
            log.warning("lexical index at %s unreadable (%s); rebuilding", folder, e)
            return None
        return cls(units, bm25)
