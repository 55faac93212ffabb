"""Fitting items into the token budget and ``max_results`` (REQ-RETR-015, REQ-RETR-029).

Items are ordered by the configured memory-class priority, then by score. Each is kept whole
while it fits; the first that does not is cut to the room left when at least
``min_item_tokens`` remain, otherwise dropped, and so on down the list. The budget is never
exceeded: the sum of the kept items' tokens is at most ``max_tokens``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trilha.config import MemoryClass
from trilha.orchestrate.bundle import ContextItem
from trilha.tokens import count_tokens, truncate_to_tokens


@dataclass(frozen=True)
class Fitted:
    """The items kept, in order, and how many were dropped or cut."""

    items: list[ContextItem]
    dropped: int
    truncated: int

    @property
    def tokens(self) -> int:
        """Tokens of the kept items."""
        return sum(item.tokens for item in self.items)


def fit(
    items: Sequence[ContextItem],
    *,
    max_tokens: int,
    max_results: int,
    priority: Sequence[MemoryClass],
    min_item_tokens: int,
) -> Fitted:
    """The items that fit ``max_tokens`` and ``max_results``, duplicates (same ``item_id``)
    removed, best-placed copy kept."""
    rank = {klass: i for i, klass in enumerate(priority)}
    ordered = sorted(items, key=lambda item: (rank[item.memory_class], -item.score))
    kept: list[ContextItem] = []
    seen: set[str] = set()
    used = dropped = truncated = 0
    for item in ordered:
        if item.item_id in seen:
            continue
        seen.add(item.item_id)
        room = max_tokens - used
        if len(kept) >= max_results or (item.tokens > room and room < min_item_tokens):
            dropped += 1
            continue
        if item.tokens > room:
            item = _cut(item, room)
            truncated += 1
            if not item.text:
                dropped, truncated = dropped + 1, truncated - 1
                continue
        kept.append(item)
        used += item.tokens
    return Fitted(kept, dropped, truncated)


def _cut(item: ContextItem, room: int) -> ContextItem:
    text = truncate_to_tokens(item.text, room)
    return item.model_copy(update={"text": text, "tokens": count_tokens(text), "truncated": True})
