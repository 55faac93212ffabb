"""A lexical index grown by segments scores exactly as one built whole from its live units.

Units are added in batches (each a segment) and deleted or replaced (dead rows); every score,
every ranking and every filter mask must then equal those of :meth:`LexicalIndex.build` over
the live units in the same order, for every caller's visibility (hidden units still move no
visible score), and after :meth:`LexicalIndex.compacted` too.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trilha.access.compiled import compile_policy
from trilha.access.principal import Principal
from trilha.index.bm25 import Segments, TermMatrix
from trilha.index.filter_input import coerce_filters
from trilha.index.lexical import LexicalIndex
from trilha.types import TextUnit

WORDS = ["contrato", "prazo", "recurso", "vpn", "laptop", "incident", "policy", "ferias"]
QUERIES = ["prazo recurso", "vpn incident laptop", "contrato contrato ferias", "policy", "zzz"]
PRINCIPALS = [
    Principal.anonymous(),
    Principal(user_id="ana", roles=["rh"]),
    Principal(user_id="caio", roles=["rh"], clearance=2),
]


def _unit(i: int, words: list[str], version: int = 0) -> tuple[TextUnit, list[str]]:
    unit = TextUnit(
        unit_id=f"u{i}",
        doc_id=f"d{i // 2}",
        text=" ".join(words),
        lang="pt" if i % 3 else "en",
        tags=["rh"] if i % 2 else ["ti"],
        visibility="restricted" if i % 4 == 1 else "public",
        acl=["rh"] if i % 4 == 1 else [],
        sensitivity=2 if i % 5 == 2 else 0,
        extra={"v": version},
    )
    return unit, words


def _whole(live: list[tuple[TextUnit, list[str]]]) -> LexicalIndex:
    return LexicalIndex.build([u for u, _ in live], [t for _, t in live])


def _same(grown: LexicalIndex, whole: LexicalIndex) -> None:
    """Every caller's scores, top-10 and filter masks agree, unit by unit."""
    assert len(grown) == len(whole) and grown.units == whole.units
    filters = [coerce_filters({"tags": ["rh"]}), coerce_filters({"lang": "en"})]
    for principal in PRINCIPALS:
        policy = compile_policy(principal)
        g_vis, w_vis = policy.row_mask(grown.columns), policy.row_mask(whole.columns)
        assert policy.sees_all(grown.columns) == policy.sees_all(whole.columns)
        assert grown.langs_of(g_vis) == whole.langs_of(w_vis)
        for query in QUERIES:
            g, w = grown.score_all(query, g_vis), whole.score_all(query, w_vis)
            assert (g is None) == (w is None)
            g_query = grown.query(query, g_vis)
            assert (g_query is None) == (g is None)
            if g is None or w is None or g_query is None:
                continue
            assert np.array_equal(g_query.at(np.arange(len(grown.rows))), g)
            by_unit = {u.unit_id: g[grown.row_of[u.unit_id]] for u in whole.units}
            assert by_unit == {u.unit_id: w[r] for r, u in enumerate(whole.units)}
            for flt in [None, *filters]:
                g_mask = policy.row_mask(grown.columns, flt)
                w_mask = policy.row_mask(whole.columns, flt)
                g_top = [(grown.rows[r].unit_id, s) for r, s in grown.top(g, 10, g_mask)]
                w_top = [(whole.rows[r].unit_id, s) for r, s in whole.top(w, 10, w_mask)]
                assert g_top == w_top
                assert g_query.top(10, g_mask) == grown.top(g, 10, g_mask)
    assert grown.columns.values("lang") == whole.columns.values("lang")
    for flt in filters:
        assert flt is not None
        mask, w_mask = grown.columns.mask(flt), whole.columns.mask(flt)
        assert [u.unit_id for u in grown.units_in(mask)] == [
            u.unit_id for u in whole.units_in(w_mask)
        ]
        assert grown.columns.values("tags", mask) == whole.columns.values("tags", w_mask)
        assert grown.columns.all_match(flt) == whole.columns.all_match(flt)


def _grow(batches: list[list[int]], deletions: list[list[int]], seed: int) -> None:
    """Add the units of each batch (ids already held are replaced), delete those of the
    matching deletion list, and compare with a whole build after each step."""
    rng = np.random.default_rng(seed)
    live: dict[int, tuple[TextUnit, list[str]]] = {}
    rows: dict[int, int] = {}  # unit -> its store row
    index = LexicalIndex.build([], [])
    next_row = 1
    for version, (batch, gone) in enumerate(zip(batches, deletions, strict=True), start=1):
        deleted = [rows.pop(i) for i in dict.fromkeys([*batch, *gone]) if i in rows]
        for i in gone:
            live.pop(i, None)
        added = []
        for i in dict.fromkeys(batch):
            words = list(rng.choice(WORDS, size=int(rng.integers(0, 6))))
            live.pop(i, None)
            live[i] = _unit(i, words, version)
            rows[i] = next_row
            next_row += 1
            added.append(live[i])
        index = index.extended(
            [u for u, _ in added],
            [t for _, t in added],
            np.array([rows[int(u.unit_id[1:])] for u, _ in added], dtype=np.int64),
            np.array(sorted(deleted), dtype=np.int64),
        )
        order = sorted(live, key=lambda i: rows[i])  # the store's order
        whole = _whole([live[i] for i in order])
        _same(index, whole)
        _same(index.joined(0), whole)
        _same(index.compacted(), whole)


ids = st.lists(st.integers(0, 14), max_size=6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(ids, ids), min_size=1, max_size=5), st.integers(0, 1000))
def test_a_grown_index_scores_as_one_built_whole(steps: list[tuple[list[int], list[int]]],
                                                 seed: int) -> None:  # fmt: skip
    _grow([b for b, _ in steps], [d for _, d in steps], seed)


def test_replacing_and_deleting_units_of_a_base() -> None:
    _grow([list(range(12)), [3, 4], [], [12, 13, 3]], [[], [0, 7], [4, 5, 12], []], seed=3)


def test_a_term_only_dead_rows_held_is_no_longer_indexed() -> None:
    units = [TextUnit(unit_id=f"u{i}", doc_id="d", text="x") for i in range(3)]
    index = LexicalIndex.build(units, [["rare"], ["common"], ["common"]], store_rows=np.arange(3))
    assert index.score_all("rare") is not None
    after = index.extended([], [], np.zeros(0, np.int64), np.array([0]))
    assert after.score_all("rare") is None and index.score_all("rare") is not None
    assert "u0" not in after.row_of and "u0" in index.row_of  # the old snapshot is unchanged
    assert len(after) == 2 and after.dead == 1 and len(index) == 3


def test_merging_segments_keeps_each_terms_rows_in_order() -> None:
    first = TermMatrix.build([["a", "b"], ["b"]])
    second = TermMatrix.build([["b", "c"], ["a"]])
    segments = Segments.of(first).extended(second, np.array([1]))
    merged = segments.merged()
    whole = TermMatrix.build([["a", "b"], ["b", "c"], ["a"]])
    for term in "abc":
        assert merged.postings(term)[0].tolist() == whole.postings(term)[0].tolist()
        assert merged.postings(term)[1].tolist() == whole.postings(term)[1].tolist()
    assert merged.lengths.tolist() == whole.lengths.tolist() == [2, 2, 1]
    joined = segments.joined(0)
    assert len(joined.parts) == 1 and joined.postings("b")[0].tolist() == [0, 2]


@pytest.mark.parametrize("query", QUERIES)
def test_an_empty_index_grows(query: str) -> None:
    unit, words = _unit(0, ["prazo", "recurso"])
    grown = LexicalIndex.build([], []).extended(
        [unit], [words], np.array([1]), np.zeros(0, np.int64)
    )
    _same(grown, _whole([(unit, words)]))


def test_scores_are_bitwise_those_of_one_addition_per_term() -> None:
    """All terms are summed in one pass; each row's additions are the same, in the same order,
    as adding each term's contributions in turn."""
    from trilha.index.bm25 import idf, query_counts, saturation

    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(40)]
    tokens = [list(rng.choice(words, size=int(rng.integers(3, 30)))) for _ in range(300)]
    grown = LexicalIndex.build([], []).extended(
        [TextUnit(unit_id=f"u{i}", doc_id=f"d{i}", text="x") for i in range(300)],
        tokens,
        np.arange(1, 301),
        np.zeros(0, np.int64),
    )
    segments = grown._terms
    view = grown._view(None)
    query = ["w1", "w2", "w2", "w7", "w33", "nowhere"]
    expected = np.zeros(segments.n)
    for term, count in query_counts(query).items():
        rows, tf = segments.postings(term)
        if rows.size:
            part = saturation(tf, segments.lengths[rows], view.stats.avgdl, 1.2, 0.6)
            expected[rows] += count * idf(int(rows.size), view.stats.n) * part
    got = segments.scores(query, view.rows, view.stats, 1.2, 0.6)
    assert got is not None and np.array_equal(got, expected)
