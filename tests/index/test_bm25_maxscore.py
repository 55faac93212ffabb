"""MaxScore's top ``k`` is the top ``k`` of every row's score: the same rows, order and floats.

:meth:`Bm25Query.top` skips rows that cannot make the top ``k``; whatever it skips, its answer
must equal :meth:`LexicalIndex.top` over :meth:`Segments.scores` (every row scored), under any
visibility and filter mask, ``k`` above the matches, ties, segments and dead rows, any ``k1``
and ``b``; and :meth:`Bm25Query.at` must give any row's score, bitwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trilha.index import bm25
from trilha.index.bm25 import Bm25Query, Segments, TermMatrix, VisibleStats
from trilha.index.columns import BoolArray
from trilha.index.lexical import LexicalIndex

#: The seeds of the first threshold and the sort/sum switch, small and large, so that
#: examples of a few hundred rows take every path (a weak first threshold, both gathers), and
#: the size below which every row is scored: pruning forced (0), or every row (the default,
#: far above these examples).
TUNINGS = [(256, 8, 0), (1, 8, 0), (3, 10**9, 0), (1, 1, 0), (256, 8, bm25.EVERY_ROW_BELOW)]


@pytest.fixture(params=TUNINGS, ids=lambda t: f"seeds{t[0]}-dense{t[1]}-every{t[2]}")
def tuning(request: pytest.FixtureRequest) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bm25, "SEEDS", request.param[0])
        patch.setattr(bm25, "DENSE", request.param[1])
        patch.setattr(bm25, "EVERY_ROW_BELOW", request.param[2])
        yield


def _segments(docs: list[list[str]], cuts: list[int], dead: list[int]) -> Segments:
    """``docs`` in segments cut at ``cuts``, the rows ``dead`` deleted."""
    bounds = [0, *sorted({c % (len(docs) + 1) for c in cuts}), len(docs)]
    segments = Segments((), (), np.zeros(0, np.int64))
    for lo, hi in pairwise(bounds):
        if hi > lo:
            segments = segments.extended(TermMatrix.build(docs[lo:hi]), np.zeros(0, np.int64))
    gone = np.array(sorted({d % len(docs) for d in dead}), dtype=np.int64)
    return segments.extended(None, gone) if gone.size else segments


def _check(
    segments: Segments,
    tokens: list[str],
    visible: BoolArray | None,
    mask: BoolArray | None,
    k: int,
    k1: float = 1.5,
    b: float = 0.75,
) -> None:
    rows = visible if segments.alive is None else segments.alive
    if visible is not None and segments.alive is not None:
        rows = visible & segments.alive
    stats = VisibleStats.of(segments.lengths, rows)
    every = segments.scores(tokens, rows, stats, k1, b)
    query = Bm25Query.of(segments, tokens, rows, stats, k1, b)
    assert (query is None) == (every is None)
    if query is None or every is None:
        return
    assert query.top(k, mask) == LexicalIndex.top(every, k, mask)
    all_rows = np.arange(segments.n, dtype=np.int64)
    assert np.array_equal(query.at(all_rows), every)  # bitwise, rows anywhere


words = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"])
docs = st.lists(st.lists(words, max_size=8), min_size=1, max_size=120)


@pytest.mark.usefixtures("tuning")
@settings(  # the fixture only sets constants: each example may share it
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    docs,
    st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h", "zz"]), max_size=7),
    st.lists(st.integers(0, 200), max_size=3),
    st.lists(st.integers(0, 200), max_size=20),
    st.integers(0, 2**32 - 1),
    st.integers(0, 60),
    st.sampled_from([(1.5, 0.75), (1.2, 0.0), (0.0, 0.5), (3.0, 1.0)]),
)
def test_the_top_k_is_that_of_every_rows_score(
    corpus: list[list[str]],
    tokens: list[str],
    cuts: list[int],
    dead: list[int],
    seed: int,
    k: int,
    params: tuple[float, float],
) -> None:
    """Few words in short rows: many equal scores, at the k-th place too."""
    segments = _segments(corpus, cuts, dead)
    rng = np.random.default_rng(seed)
    visible = rng.random(segments.n) < 0.7 if seed % 3 == 0 else None
    mask = rng.random(segments.n) < 0.5 if seed % 2 == 0 else None
    _check(segments, tokens, visible, mask, k, *params)


@pytest.mark.usefixtures("tuning")
@pytest.mark.parametrize("seed", range(6))
def test_a_large_corpus_of_rare_and_common_terms(seed: int) -> None:
    """Zipf-distributed words over rows of varied length, a long query: the skipping paths run
    (common terms only looked up for the candidates) and still give every row's answer."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(400)]
    sizes = rng.integers(1, 40, 3000)
    picks = np.minimum(rng.zipf(1.3, int(sizes.sum())) - 1, len(vocab) - 1)
    ends = np.cumsum(sizes)
    corpus = [[vocab[p] for p in picks[e - s : e]] for s, e in zip(sizes, ends, strict=True)]
    segments = _segments(corpus, [1000, 2500], rng.integers(0, 3000, 200).tolist())
    tokens = [vocab[i] for i in rng.integers(0, 60, 12)]
    visible = rng.random(segments.n) < 0.8
    for k in (1, 10, 40, 5000):
        _check(segments, tokens, None, None, k)
        _check(segments, tokens, visible, None, k)
        _check(segments, tokens, visible, rng.random(segments.n) < 0.1, k)


def test_ties_are_ordered_by_row() -> None:
    """Rows 0, 2 and 3 hold "x" once in as many tokens: equal scores, taken by row."""
    segments = Segments.of(TermMatrix.build([["x", "y"], ["y"], ["x", "z"], ["x", "q"]]))
    stats = VisibleStats.of(segments.lengths, None)
    query = Bm25Query.of(segments, ["x"], None, stats, 1.5, 0.75)
    assert query is not None
    assert [r for r, _ in query.top(2)] == [0, 2]
    assert [r for r, _ in query.top(9)] == [0, 2, 3]
    assert [r for r, _ in query.top(9, np.array([False, True, False, True]))] == [3]
    assert query.top(0) == []


def test_no_held_term_is_no_query() -> None:
    segments = Segments.of(TermMatrix.build([["x"], ["y"]]))
    stats = VisibleStats.of(segments.lengths, None)
    assert Bm25Query.of(segments, [], None, stats, 1.5, 0.75) is None
    assert Bm25Query.of(segments, ["nowhere"], None, stats, 1.5, 0.75) is None


def test_peaks_are_each_count_and_its_shortest_row() -> None:
    matrix = TermMatrix.build([["x", "x", "a"], ["x"], ["x", "x"], ["x", "b", "c", "d"]])
    counts, shortest = matrix.peaks("x")
    assert counts.tolist() == [1.0, 2.0] and shortest.tolist() == [1, 2]
    assert matrix.peaks("nowhere")[0].size == 0


def test_joined_postings_are_kept_up_to_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A segmented index keeps the postings it joined for the terms last searched, dropping the
    least recently searched past :data:`bm25.LIVE_POSTINGS`; what it returns is the same
    either way."""
    monkeypatch.setattr(bm25, "LIVE_POSTINGS", 5)
    segments = _segments([["a", "b"], ["a"], ["b", "c"], ["a", "c"], ["a"]], [2], [4])
    assert segments.postings("a")[0].tolist() == [0, 1, 3]
    assert segments.postings("b")[0].tolist() == [0, 2]
    assert list(segments._live) == ["a", "b"]  # 5 postings: both kept
    assert segments.postings("a")[0].tolist() == [0, 1, 3]  # searched again: newest
    assert segments.postings("c")[0].tolist() == [2, 3]
    assert list(segments._live) == ["a", "c"]  # "b", searched least recently, dropped
    assert segments._held == [5]
    assert segments.postings("nowhere")[0].size == 0
    for tokens in (["a", "c"], ["b"], ["c", "c", "a"]):
        _check(segments, tokens, None, None, 2)
