"""One line from a pydantic ``ValidationError``: the dotted key, then what the value must be.

``profiles.org_context.max_hops: must be ≥ 1`` reads better in a terminal than pydantic's
``Input should be greater than or equal to 1``; the loaders put the file name in front.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

_GOT = "not {got}"
_SAYINGS: dict[str, str] = {
    "greater_than_equal": "must be ≥ {ge}",
    "greater_than": "must be > {gt}",
    "less_than_equal": "must be ≤ {le}",
    "less_than": "must be < {lt}",
    "extra_forbidden": "unknown key; remove it or check its spelling",
    "missing": "required key is missing",
    "literal_error": "must be one of {expected}, " + _GOT,
    "int_type": "must be an integer, " + _GOT,
    "int_parsing": "must be an integer, " + _GOT,
    "int_from_float": "must be an integer, " + _GOT,
    "float_type": "must be a number, " + _GOT,
    "float_parsing": "must be a number, " + _GOT,
    "bool_type": "must be true or false, " + _GOT,
    "bool_parsing": "must be true or false, " + _GOT,
    "string_type": "must be text, " + _GOT,
    "string_too_short": "must not be empty",
    "string_pattern_mismatch": "must match {pattern}, " + _GOT,
    "dict_type": "must be a mapping of keys, " + _GOT,
    "model_type": "must be a mapping of keys, " + _GOT,
    "list_type": "must be a list, " + _GOT,
    "tuple_type": "must be a list, " + _GOT,
    "too_short": "must have at least {min_length} item(s)",
}


def describe(error: ValidationError) -> str:
    """The first problem as ``key: what it must be``, with a count of the others."""
    problems = error.errors()
    more = len(problems) - 1
    return _one(problems[0]) + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")


def dotted_key(loc: Sequence[int | str]) -> str:
    """``('profiles', 'x', 'anchors', 0)`` → ``profiles.x.anchors[0]`` (dict-key markers go)."""
    key = ""
    for part in loc:
        if isinstance(part, int):
            key += f"[{part}]"
        elif part != "[key]":
            key += f".{part}" if key else part
    return key


def _one(problem: ErrorDetails) -> str:
    saying = _SAYINGS.get(problem["type"])
    if saying is None:
        text = problem["msg"].removeprefix("Value error, ")
        text = text[:1].lower() + text[1:]
    else:
        text = saying.format(**problem.get("ctx", {}), got=_shown(problem["input"]))
    key = dotted_key(problem["loc"])
    return f"{key}: {text}" if key else text


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
