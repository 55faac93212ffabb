"""nDCG@10, Recall@100 and MRR@10 against values computed by hand (trec_eval's linear gain)."""

from __future__ import annotations

import math

import pytest

from trilha.eval.metrics import evaluate

QRELS = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 2, "d4": 1}}
RUN = {
    "q1": {"d1": 3.0, "x1": 2.0, "d2": 1.0},  # relevant at ranks 1 and 3
    "q2": {"y1": 3.0, "y2": 2.0, "d3": 1.0},  # grade 2 at rank 3, d4 never retrieved
}


def _log2(rank: int) -> float:
    return math.log2(rank + 1)


# q1: DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3)
NDCG_Q1 = (1 / _log2(1) + 1 / _log2(3)) / (1 / _log2(1) + 1 / _log2(2))
# q2: DCG = 2/log2(4) = 1; IDCG = 2/log2(2) + 1/log2(3)
NDCG_Q2 = (2 / _log2(3)) / (2 / _log2(1) + 1 / _log2(2))


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("ndcg@10", (NDCG_Q1 + NDCG_Q2) / 2),  # (0.919720 + 0.380094) / 2
        ("recall@100", (2 / 2 + 1 / 2) / 2),
        ("mrr@10", (1 / 1 + 1 / 3) / 2),
    ],
)
def test_metrics_match_hand_computed_values(metric: str, expected: float) -> None:
    assert evaluate(QRELS, RUN)[metric] == pytest.approx(expected, abs=1e-6)


def test_hand_values_are_the_documented_numbers() -> None:
    ndcg = (NDCG_Q1 + NDCG_Q2) / 2
    assert round(ndcg, 6) == 0.649907


def test_a_judged_query_without_results_counts_as_zero() -> None:
    qrels = {**QRELS, "q3": {"d9": 1}}
    full, partial = evaluate(QRELS, RUN), evaluate(qrels, RUN)
    for metric in ("ndcg@10", "recall@100", "mrr@10"):
        assert partial[metric] == pytest.approx(full[metric] * 2 / 3, abs=1e-9)


def test_mrr_only_looks_at_the_first_ten() -> None:
    run = {"q1": {f"x{i}": 100.0 - i for i in range(10)} | {"d1": 1.0}}
    assert evaluate({"q1": {"d1": 1}}, run)["mrr@10"] == 0.0
    assert evaluate({"q1": {"d1": 1}}, run)["recall@100"] == 1.0
