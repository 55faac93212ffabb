"""Counting tokens offline, the way LlamaIndex counts them.

Budgets (seed 004's ``max_tokens_context``, REQ-RETR-029) are counted with the tokenizer
LlamaIndex uses by default (tiktoken's ``cl100k_base``), whose encoding file ships inside
``llama-index-core``: no download. The encoding is loaded once per process.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

TokenCounter = Callable[[str], int]


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken
    from llama_index.core.utils import get_tokenizer

    get_tokenizer()  # points tiktoken at the encoding file llama-index-core ships
    return tiktoken.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    """How many tokens ``text`` is for LlamaIndex's default tokenizer (0 for empty text)."""
    return len(_encoding().encode(text, disallowed_special=())) if text else 0


def truncate_to_tokens(text: str, max_tokens: int, marker: str = " …") -> str:
    """``text`` cut to at most ``max_tokens`` tokens, ``marker`` included, at a word boundary
    when one is found; the whole text when it fits, ``""`` when not even the marker fits."""
    if count_tokens(text) <= max_tokens:
        return text
    room = max_tokens - count_tokens(marker)
    if room <= 0:
        return ""
    head = _encoding().decode(_encoding().encode(text, disallowed_special=())[:room])
    cut = head.rsplit(" ", 1)[0] if " " in head.strip() else head
    while cut and count_tokens(cut + marker) > max_tokens:  # decoding can merge tokens
        cut = cut[:-1]
    return cut.rstrip() + marker if cut else ""
