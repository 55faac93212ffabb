"""Merge arithmetic against hand-computed tables."""

from __future__ import annotations

import pytest

from trilha.retrieve.fusion import (
    Weights,
    active_weights,
    minmax,
    order,
    penalise_duplicates,
    rrf_merge,
    weighted_merge,
)


def test_minmax_scales_to_unit_interval() -> None:
    assert minmax({"a": 10.0, "b": 5.0, "c": 0.0}) == {"a": 1.0, "b": 0.5, "c": 0.0}


def test_minmax_equal_scores_and_single_item_map_to_one() -> None:
    assert minmax({"a": 3.0, "b": 3.0}) == {"a": 1.0, "b": 1.0}
    assert minmax({"a": -2.0}) == {"a": 1.0}
    assert minmax({}) == {}


def test_active_weights_renormalise_without_graph() -> None:
    w = active_weights(Weights(), ["bm25", "semantic"])
    assert w["bm25"] == pytest.approx(0.5 / 0.9)
    assert w["semantic"] == pytest.approx(0.4 / 0.9)
    assert active_weights(Weights(), ["bm25", "semantic", "kg"]) == pytest.approx(
        {"bm25": 0.5, "semantic": 0.4, "kg": 0.1}
    )


def test_weighted_merge_table() -> None:
    # bm25: a=10 b=6 c=2 -> 1, .5, 0 ; semantic: b=.9 d=.5 -> 1, 0
    bm25 = {"a": 10.0, "b": 6.0, "c": 2.0}
    sem = {"b": 0.9, "d": 0.5}
    fused = weighted_merge(bm25, sem, Weights())
    wb, ws = 0.5 / 0.9, 0.4 / 0.9
    assert fused == pytest.approx({"a": wb * 1.0, "b": wb * 0.5 + ws * 1.0, "c": 0.0, "d": 0.0})


def test_weighted_merge_with_kg_uses_seed_weights() -> None:
    fused = weighted_merge({"a": 2.0, "b": 1.0}, {"a": 0.2, "b": 0.8}, Weights(), kg={"b": 1.0})
    assert fused == pytest.approx({"a": 0.5, "b": 0.4 + 0.1})


def test_weighted_merge_with_no_positive_boost_is_exactly_the_merge_without_graph() -> None:
    bm25, sem = {"a": 3.0, "b": 2.0, "c": 1.0}, {"a": 0.1, "b": 0.7, "d": 0.4}
    plain = weighted_merge(bm25, sem, Weights())
    assert weighted_merge(bm25, sem, Weights(), kg=dict.fromkeys("abcd", 0.0)) == plain
    assert weighted_merge(bm25, sem, Weights(), kg={}) == plain


def test_weighted_merge_falls_back_to_the_side_with_results() -> None:
    assert weighted_merge({}, {"x": 0.3, "y": 0.1}, Weights()) == {"x": 1.0, "y": 0.0}


def test_rrf_uses_one_based_ranks_and_weights() -> None:
    fused = rrf_merge(
        {"bm25": ["a", "b"], "semantic": ["b", "c"]}, {"bm25": 2.0, "semantic": 1.0}, k=60
    )
    assert fused == pytest.approx({"a": 2 / 61, "b": 2 / 62 + 1 / 61, "c": 1 / 62})


def test_order_breaks_ties_deterministically() -> None:
    assert order({"b": 1.0, "a": 1.0, "c": 2.0}) == ["c", "a", "b"]
    assert order({"b": 1.0, "a": 1.0}, tiebreak={"b": 1, "a": 2}) == ["b", "a"]


def test_duplicate_penalty_decays_further_units_of_a_doc() -> None:
    scores = {"d1#0": 1.0, "d1#1": 0.9, "d2#0": 0.8, "d1#2": 0.5}
    doc_of = {u: u.split("#")[0] for u in scores}
    out = penalise_duplicates(list(scores), scores, doc_of, 0.5)
    assert out == pytest.approx({"d1#0": 1.0, "d1#1": 0.45, "d2#0": 0.8, "d1#2": 0.125})
    assert penalise_duplicates(list(scores), scores, doc_of, 0.0) == scores
