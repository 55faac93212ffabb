"""Checks and clamps for graph query arguments, with the policy in one place.

========================  ==========================================================
argument                  policy
========================  ==========================================================
``max_hops``              int (not bool); < 0 → BadRequestError; > 2 → 2, noted
``limit``                 int; < 1 → BadRequestError; > 500 → 500, noted
``max_length`` (path)     int; < 1 → BadRequestError; > 6 → 6, noted
entity names              strings; empty/blank, NUL or > 300 chars → BadRequestError;
                          at most 50; duplicates (after normalisation) dropped;
                          None or an empty list → no entity filter
ids (doc_id, category)    non-empty strings without NUL
========================  ==========================================================

Clamping is reported in the result's ``notes`` and ``truncated`` never hides a cut. Names are
never placed into Cypher: they travel as parameters, so quotes, backticks, braces or Cypher
keywords are just characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trilha.errors import BadRequestError
from trilha.graph.model import check_rel_type, normalise_name

MAX_HOPS = 2
MAX_LIMIT = 500
MAX_PATH_LENGTH = 6
MAX_NAMES = 50
MAX_NAME_CHARS = 300


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequestError(f"{name} must be an integer, got {value!r}")
    return value


def bounded(name: str, value: Any, low: int, high: int, notes: list[str]) -> int:
    """``value`` as an int in ``[low, high]``: below → error, above → ``high`` plus a note."""
    n = _int(name, value)
    if n < low:
        raise BadRequestError(f"{name} must be >= {low}, got {n}")
    if n > high:
        notes.append(f"{name} {n} clamped to {high}")
        return high
    return n


def text_arg(name: str, value: Any) -> str:
    """A non-empty string without NUL characters, trimmed."""
    if not isinstance(value, str):
        raise BadRequestError(f"{name} must be a string, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise BadRequestError(f"{name} must not be empty")
    if "\x00" in text:
        raise BadRequestError(f"{name} must not contain NUL characters")
    if len(text) > MAX_NAME_CHARS:
        raise BadRequestError(f"{name} is longer than {MAX_NAME_CHARS} characters")
    return text


def entity_names(value: Sequence[str] | None) -> tuple[list[str] | None, list[str]]:
    """``(names as given, distinct normalised keys)``; None means "no entity filter"."""
    if value is None:
        return None, []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise BadRequestError("entity_names must be a list of strings")
    if len(value) > MAX_NAMES:
        raise BadRequestError(f"at most {MAX_NAMES} entity names, got {len(value)}")
    names = [text_arg(f"entity_names[{i}]", v) for i, v in enumerate(value)]
    return names, list(dict.fromkeys(normalise_name(n) for n in names))


def rel_type_list(value: Sequence[str]) -> tuple[str, ...]:
    """Relationship types to walk: a non-empty list, every one from the allow-list."""
    if isinstance(value, str) or not value:
        raise BadRequestError("rel_types must be a non-empty list of relationship types")
    return tuple(check_rel_type(t) for t in value)
