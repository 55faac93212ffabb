"""The token budget and max_results: never exceeded, priorities kept, cuts reported."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from trilha.config import MemoryClass
from trilha.orchestrate.budget import fit
from trilha.orchestrate.bundle import ContextItem, ItemCitation, Provenance
from trilha.tokens import count_tokens

PRIORITY: tuple[MemoryClass, ...] = ("working_set", "semantic", "procedural", "claims", "episodic")


def _item(n: int, klass: MemoryClass, words: int, score: float = 1.0) -> ContextItem:
    text = " ".join(f"palavra{n}x{i}" for i in range(words))
    return ContextItem(
        item_id=f"I:{n}",
        item_type="chunk",
        memory_class=klass,
        text=text,
        score=score,
        tokens=count_tokens(text),
        source="test",
        provenance=Provenance(
            source_type="document", source_ref="r", created_at=None, confidence=1
        ),
        citation=ItemCitation(label=f"item {n}"),
    )


def test_priority_then_score_and_a_cut_item() -> None:
    items = [_item(1, "episodic", 10), _item(2, "semantic", 40, 0.5), _item(3, "semantic", 40, 0.9)]
    items.append(_item(4, "working_set", 5))
    budget = items[3].tokens + items[2].tokens + 30
    fitted = fit(items, max_tokens=budget, max_results=10, priority=PRIORITY, min_item_tokens=24)
    assert [i.item_id for i in fitted.items] == ["I:4", "I:3", "I:2"]
    assert fitted.items[-1].truncated and fitted.truncated == 1 and fitted.dropped == 1
    assert fitted.tokens <= budget


def test_max_results_and_duplicates() -> None:
    items = [_item(1, "semantic", 3), _item(1, "semantic", 3), _item(2, "semantic", 3)]
    fitted = fit(items, max_tokens=1000, max_results=1, priority=PRIORITY, min_item_tokens=24)
    assert [i.item_id for i in fitted.items] == ["I:1"] and fitted.dropped == 1


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(1, 120), st.sampled_from(PRIORITY)), max_size=12),
    budget=st.integers(1, 600),
    min_tokens=st.integers(1, 50),
)
def test_the_budget_is_never_exceeded(
    sizes: list[tuple[int, MemoryClass]], budget: int, min_tokens: int
) -> None:
    items = [_item(n, klass, words) for n, (words, klass) in enumerate(sizes)]
    fitted = fit(
        items, max_tokens=budget, max_results=50, priority=PRIORITY, min_item_tokens=min_tokens
    )
    assert fitted.tokens <= budget
    assert all(count_tokens(i.text) == i.tokens for i in fitted.items)
    assert len(fitted.items) + fitted.dropped == len(items)
