"""A caller's own KG booster: the protocol asks ``boost`` only (``prepare`` is optional)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from trilha.workspace import Workspace


class OnlyBoost:
    """A booster with ``boost`` and nothing else: the first candidate gets the whole boost."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def boost(
        self, query: str, unit_ids: Sequence[str], relevant: object = None, who: object = None
    ) -> tuple[dict[str, float], str | None]:
        self.asked.append(query)
        return {uid: float(i == 0) for i, uid in enumerate(unit_ids)}, None


def test_a_booster_without_prepare_boosts_hybrid_searches(small_ws: Workspace) -> None:
    own = OnlyBoost()
    small_ws.searcher.booster = own
    result = small_ws.search("security incident", kg=True, top_k=3)
    assert result.hits and not result.trace.warnings
    assert [s.name for s in result.trace.stages if s.name == "kg"] == ["kg"]
    again = asyncio.run(small_ws.asearch("vpn remote work", kg=True, top_k=3))
    assert again.hits and not again.trace.warnings
    assert own.asked == ["security incident", "vpn remote work"]
