""":meth:`LexicalIndex.top`: the best rows under a mask, equal scores taken and ordered by row."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trilha.index.lexical import LexicalIndex

SCORES = np.array([0.0, 2.0, 1.0, 2.0, 3.0, 1.0, 2.0, 0.0, 1.0])


@pytest.mark.parametrize(
    ("k", "mask", "rows"),
    [
        (1, None, [4]),
        (2, None, [4, 1]),  # three rows tie at 2.0: the first
        (3, None, [4, 1, 3]),
        (4, None, [4, 1, 3, 6]),
        (5, None, [4, 1, 3, 6, 2]),
        (20, None, [4, 1, 3, 6, 2, 5, 8]),  # no row scoring 0
        (2, [True, False, True, True, False, True, True, True, True], [3, 6]),
        (0, None, []),
    ],
)
def test_ties_are_taken_and_ordered_by_row(
    k: int, mask: list[bool] | None, rows: list[int]
) -> None:
    keep = None if mask is None else np.array(mask)
    assert LexicalIndex.top(SCORES, k, keep) == [(r, SCORES[r]) for r in rows]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=300), st.integers(0, 50), st.integers(0, 2**32 - 1))
def test_the_top_is_the_first_k_by_score_then_row(values: list[int], k: int, seed: int) -> None:
    scores = np.array(values, dtype=np.float64) / 3
    mask = np.random.default_rng(seed).random(scores.size) < 0.6 if seed % 2 else None
    kept = scores if mask is None else np.where(mask, scores, 0.0)
    best = sorted(np.flatnonzero(kept > 0).tolist(), key=lambda r: (-kept[r], r))[:k]
    assert LexicalIndex.top(scores, k, mask) == [(r, float(kept[r])) for r in best]
