"""Per-side candidate counts reconcile seeds 001 and 002."""

from __future__ import annotations

import pytest

from trilha.retrieve.plan import per_side_candidates


@pytest.mark.parametrize(
    ("top_k", "k", "cap", "expected"),
    [
        (10, None, 100, 30),  # seed 001: top_k * 3
        (40, None, 100, 100),  # capped at 100
        (10, 40, 100, 30),  # seed 002: ceil(40/2)=20 < 30
        (5, 81, 100, 41),  # ceil(81/2)=41 > 15
        (150, None, 100, 150),  # never fewer than top_k
        (12, 40, 100, 36),
    ],
)
def test_per_side(top_k: int, k: int | None, cap: int, expected: int) -> None:
    assert per_side_candidates(top_k, k, cap) == expected
