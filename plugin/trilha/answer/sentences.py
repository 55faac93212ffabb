"""Splitting a unit's text into sentences, for extractive answers and groundedness.

A sentence ends at ``.``, ``!`` or ``?`` followed by a space and a capital letter or an opening
quote or bracket (any letter, in a line whose sentences never start with a capital), at Chinese
``。！？``, and at every line break (Markdown lists and headings are their own lines; heading
marks and list bullets are dropped). A period after a known abbreviation (``art.``, ``Dr.``,
``nº.``, ``e.g.``) or a single letter does not end one.
"""

from __future__ import annotations

import re
from functools import lru_cache

_ABBREVIATED = (
    "art arts dr dra drs sr sra srs prof profa inc fl fls min rel des cf ex p pp n nº no nos "
    "vol cap ed etc vs e.g i.e et al fig eq ref sec resp u.s"
)
_ABBREVIATIONS = frozenset(_ABBREVIATED.split())
_END = re.compile(
    r"(?<=[.!?])([\"'”’)\]]*)\s+(?:[-*•]\s+)?(?=[\"'“‘(\[]?[A-ZÀ-ÖØ-Þ])"
    r"|(?<=:)\s+[-*•]\s+(?=[A-ZÀ-ÖØ-Þ])|(?<=[。！？])"
)
_END_LOWER = re.compile(r"(?<=[.!?])([\"'”’)\]]*)\s+(?:[-*•]\s+)?(?=[\"'“‘(\[]?\w)|(?<=[。！？])")
_BULLET = re.compile(r"^\s*(?:#{1,6}\s+|[-*+•]\s+|\d{1,3}[.)]\s+|>\s*)")
_LAST_WORD = re.compile(r"(\S+)\.[\"'”’)\]]*$")


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order, stripped, none empty (see the module docstring).
    Remembered for the last :data:`_REMEMBERED` texts: an answer splits its candidates to
    rerank them, then again to select its context and to compose."""
    return list(_split(text))


#: Texts whose sentences are kept (a few answers' candidates).
_REMEMBERED = 512


@lru_cache(maxsize=_REMEMBERED)
def _split(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).strip()
        if not line:
            continue
        pending = ""
        for piece in _pieces(line):
            pending = f"{pending} {piece}".strip() if pending else piece
            if not _ends_in_abbreviation(pending):
                out.append(pending)
                pending = ""
        if pending:
            out.append(pending)
    return tuple(out)


def _pieces(line: str) -> list[str]:
    pieces, at = [], 0
    # text written all in lower case (as some corpora are) has no capital to start a sentence
    ends = _END_LOWER if _lower_case(line) else _END
    for found in ends.finditer(line):
        pieces.append(line[at : found.start()] + (found.group(1) or ""))
        at = found.end()
    pieces.append(line[at:])
    return [p.strip() for p in pieces if p.strip()]


def _lower_case(line: str) -> bool:
    """True when no sentence of ``line`` starts with a capital letter."""
    starts = re.findall(r"(?:^|[.!?]\s+)[\"'“‘(\[]?(\w)", line)
    return bool(starts) and not any(c.isupper() for c in starts)


def _ends_in_abbreviation(sentence: str) -> bool:
    found = _LAST_WORD.search(sentence)
    if found is None:
        return False
    word = found.group(1).lower().lstrip("(\"'“")
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())
