"""ParseQuery's work: a question normalised, and the filters it states explicitly.

Normalising is Unicode NFC, control characters removed and whitespace collapsed. A question is
*valid* when something searchable is left (a letter or a digit) within ``MAX_QUESTION_CHARS``.

Filters are read from the question only where it states them outright, so that an ordinary
question is never narrowed by accident:

* a year after ``em``, ``no ano de``, ``durante``, ``in``, ``during`` (the whole year),
  ``desde``, ``a partir de``, ``since``, ``after`` (from it), ``até``, ``antes de``, ``until``,
  ``before`` (up to it);
* a language asked for: ``em português``, ``in English``, ``em inglês``, ``in Portuguese``, …;
* a ``setor`` or ``tema`` the caller can see, named after ``setor``/``área``/``department``/
  ``sector`` (``setor de TI``, ``TI department``) or ``tema``/``assunto``/``topic``.

A filter the request itself gives wins over one read from the question.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trilha.index.tokenize import fold_accents
from trilha.types import MAX_QUESTION_CHARS

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_YEAR = r"((?:19|20)\d{2})\b"
_WHOLE_YEAR = re.compile(rf"\b(?:em|no ano de|durante|in|during)\s+{_YEAR}", re.IGNORECASE)
_FROM_YEAR = re.compile(rf"\b(?:desde|a partir de|since|after)\s+{_YEAR}", re.IGNORECASE)
_TO_YEAR = re.compile(rf"\b(?:ate|antes de|until|before)\s+{_YEAR}", re.IGNORECASE)
_LANGS = {
    "pt": r"(?:em|in)\s+(?:portugues|portuguese)",
    "en": r"(?:em|in)\s+(?:ingles|english)",
    "es": r"(?:em|in)\s+(?:espanhol|spanish)",
    "zh": r"(?:em|in)\s+(?:chines|chinese)",
}
_NAMED_BEFORE = {"setor": "setor|area|departamento|sector", "tema": "tema|assunto|topic|theme"}
_NAMED_AFTER = {"setor": "department|sector|team", "tema": "topic|theme"}


@dataclass(frozen=True)
class ParsedQuestion:
    """A normalised question, whether it can be searched, and the filters it states."""

    text: str
    valid: bool
    filters: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    #: The phrases that stated the filters (folded), which are not what the question is about.
    spent: tuple[str, ...] = ()


def normalise(question: str) -> str:
    """NFC, no control characters, whitespace collapsed."""
    text = unicodedata.normalize("NFC", question)
    return " ".join(_CONTROL.sub(" ", text).split())


def parse_question(
    question: str, known: Mapping[str, Sequence[str]] | None = None
) -> ParsedQuestion:
    """The normalised question, its validity and its explicit filters; ``known`` holds the
    ``setor`` and ``tema`` values the caller may see (see the module docstring)."""
    text = normalise(question)
    if not any(c.isalnum() for c in text):
        return ParsedQuestion(text, False, reason="the question has no words; ask something")
    if len(text) > MAX_QUESTION_CHARS:
        return ParsedQuestion(
            text, False, reason=f"the question is over {MAX_QUESTION_CHARS} characters; shorten it"
        )
    folded = fold_accents(text.casefold())
    filters: dict[str, Any] = {}
    spent: list[str] = []
    for found in (_years(folded), _language(folded)):
        filters.update(found[0])
        spent += found[1]
    for name, values in (known or {}).items():
        value, phrase = _named(folded, name, values)
        if value is not None:
            filters[name] = value
            spent.append(phrase)
    return ParsedQuestion(text, True, filters, spent=tuple(spent))


Found = tuple[dict[str, str], list[str]]


def _years(folded: str) -> Found:
    whole = _WHOLE_YEAR.search(folded)
    if whole:
        year = whole.group(1)
        return {"data_inicio": f"{year}-01-01", "data_fim": f"{year}-12-31"}, [whole.group()]
    since, until = _FROM_YEAR.search(folded), _TO_YEAR.search(folded)
    if since and until and since.group(1) > until.group(1):
        return {}, []
    out: Found = ({}, [])
    if since:
        out[0]["data_inicio"] = f"{since.group(1)}-01-01"
        out[1].append(since.group())
    if until:
        out[0]["data_fim"] = f"{until.group(1)}-12-31"
        out[1].append(until.group())
    return out


def _language(folded: str) -> Found:
    for code, pattern in _LANGS.items():
        found = re.search(rf"\b{pattern}\b", folded)
        if found:
            return {"lang": code}, [found.group()]
    return {}, []


def _named(folded: str, name: str, values: Sequence[str]) -> tuple[str | None, str]:
    """The longest known value of ``name`` that the question names with its marker word, and
    the phrase that named it."""
    before, after = _NAMED_BEFORE.get(name), _NAMED_AFTER.get(name)
    for value in sorted(values, key=len, reverse=True):
        v = re.escape(fold_accents(value.casefold()))
        for pattern in (
            rf"\b(?:{before})\s+(?:de\s+|do\s+|da\s+|of\s+)?{v}\b" if before else None,
            rf"\b{v}\s+(?:{after})\b" if after else None,
        ):
            found = re.search(pattern, folded) if pattern else None
            if found:
                return value, found.group()
    return None, ""
