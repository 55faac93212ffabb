"""The forms of a question the rules read: folded (lower case, no accents, words only), its
words, its language and its content words.

Rules are written over the folded form so that ``Quem é``, ``quem e`` and ``QUEM É`` read
alike; keywords keep accents (graph names are matched by :func:`trilha.graph.model.normalise_name`,
which keeps them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping

_NOT_WORD = re.compile(r"[^\w/:-]+")
_EDGE_PUNCT = re.compile(r"(?<!\w)[/:-]+|[/:-]+(?!\w)")
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
_SPACE = re.compile(r"\s+")
_POSSESSIVE = re.compile(r"(\w)'s\b")


def strip_accents(text: str) -> str:
    """``text`` without combining marks (``ação`` → ``acao``)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def fold(text: str) -> str:
    """Lower case, no accents, no ``'s`` (``quarter's`` → ``quarter``), punctuation as spaces
    (``/ : -`` kept inside dates and words), single spaces, and one space at each end so rules
    can match whole words with spaces."""
    plain = _POSSESSIVE.sub(r"\1", text.replace("’", "'"))
    folded = strip_accents(plain.casefold()).replace("'", "")
    spaced = _EDGE_PUNCT.sub(" ", _NOT_WORD.sub(" ", folded))
    return f" {_SPACE.sub(' ', spaced).strip()} "


def words(text: str) -> list[str]:
    """The words of ``text`` in lower case, accents kept (``Política`` → ``política``)."""
    return _WORD.findall(unicodedata.normalize("NFC", text).casefold())


def language(text: str, stopwords: Mapping[str, Collection[str]], default: str = "en") -> str:
    """The language whose stopwords cover most words of ``text`` (accents count for 'pt');
    ``default`` on a tie."""
    found = words(text)
    counts = {lang: sum(1 for w in found if w in stops) for lang, stops in stopwords.items()}
    if "pt" in counts and any(c != strip_accents(c) for c in text):
        counts["pt"] += 1
    best = max(counts.values(), default=0)
    leaders = [lang for lang, n in counts.items() if n == best]
    return default if best == 0 or len(leaders) > 1 else leaders[0]


def keywords(text: str, stopwords: Collection[str]) -> tuple[str, ...]:
    """Content words of ``text``: not stopwords (compared without accents), not one letter,
    each once, in order."""
    out: dict[str, None] = {}
    for w in words(text):
        if len(w) > 1 and strip_accents(w) not in stopwords and not w.isdigit():
            out.setdefault(w, None)
    return tuple(out)
