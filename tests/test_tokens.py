"""Token counting and truncation with LlamaIndex's offline tokenizer."""

from __future__ import annotations

import pytest

from trilha.tokens import count_tokens, truncate_to_tokens

TEXT = "Quais tarefas da minha startup estão atrasadas? " * 20


def test_counts_like_llamaindex() -> None:
    from llama_index.core.utils import get_tokenizer

    assert count_tokens(TEXT) == len(get_tokenizer()(TEXT)) > 100
    assert count_tokens("") == 0


@pytest.mark.parametrize("budget", [1, 3, 10, 57, 200])
def test_truncation_never_exceeds_the_budget(budget: int) -> None:
    cut = truncate_to_tokens(TEXT, budget)
    assert count_tokens(cut) <= budget
    if cut:
        assert cut.endswith(" …")
        assert TEXT.startswith(cut.removesuffix(" …"))


def test_a_text_that_fits_is_whole() -> None:
    assert truncate_to_tokens("curto", 10) == "curto"
    assert truncate_to_tokens("x" * 500, 20).endswith("…")
    assert count_tokens(truncate_to_tokens("x" * 500, 20)) <= 20
