"""Language-aware tokenisation for the lexical index.

Tokens follow bm25s' defaults (``(?u)\\b\\w\\w+\\b``, lower-cased, stopwords removed, Snowball
stemmed), with the stopword list and stemmer of each unit's language. Accents are folded after
stemming so that 'decisão' and 'decisao' meet. Portuguese text and words are first prepared by
:mod:`trilha.index.portuguese` (numbers such as ``13.709`` kept whole, ``nº`` dropped, ordinals
unified, ``artigo`` -> ``art``, ``-ões`` plurals made singular); other languages go straight to
the stemmer.

Runs of Han characters are cut out first and segmented into words (:mod:`trilha.index.han`)
whatever the language, on the index and the query side alike, so ``图数据库`` meets a document
that contains it even when that document was ingested as 'en'.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import Stemmer
from bm25s import stopwords as bm25s_stopwords

from trilha.index.han import HAN_RUN, has_han, search_words
from trilha.index.language import detect_language, primary_code
from trilha.index.portuguese import default_preparer

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
#: Bumped whenever :func:`tokenize` changes its output: a workspace whose stored tokens carry
#: another version re-tokenises them when it opens (1: Snowball per language; 2: Han segmented;
#: 3: Portuguese numbers, citations and -ão plurals prepared before stemming).
TOKENIZER_VERSION = "3"

_STEMMER_NAMES = {
    "en": "english",
    "pt": "portuguese",
    "es": "spanish",
    "fr": "french",
    "de": "german",
    "it": "italian",
    "nl": "dutch",
}
_STOPWORDS = {
    "en": bm25s_stopwords.STOPWORDS_EN,
    "pt": bm25s_stopwords.STOPWORDS_PORTUGUESE,
    "es": bm25s_stopwords.STOPWORDS_SPANISH,
    "fr": bm25s_stopwords.STOPWORDS_FRENCH,
    "de": bm25s_stopwords.STOPWORDS_GERMAN,
    "it": bm25s_stopwords.STOPWORDS_ITALIAN,
    "nl": bm25s_stopwords.STOPWORDS_DUTCH,
}


def base_lang(lang: str | None) -> str:
    """'pt-BR' -> 'pt'; unknown or empty -> 'en'."""
    code = primary_code(lang)
    return code if code in _STEMMER_NAMES else "en"


def fold_accents(token: str) -> str:
    """``token`` without its accents (NFKD, combining marks dropped); ASCII is returned as is."""
    if token.isascii():
        return token
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@lru_cache(maxsize=16)
def _stemmer(lang: str) -> Any:
    return Stemmer.Stemmer(_STEMMER_NAMES[lang])


@lru_cache(maxsize=16)
def _stopset(lang: str) -> frozenset[str]:
    extra = default_preparer().stopwords if lang == "pt" else frozenset()
    return frozenset(_STOPWORDS[lang]) | extra


def stopwords(lang: str | None) -> frozenset[str]:
    """The (lower-case) words :func:`tokenize` drops from a ``lang`` text."""
    return _stopset(base_lang(lang))


def tokenize(text: str, lang: str | None = "en") -> list[str]:
    """Tokens of ``text`` in ``lang``: lower-cased, stopwords out, stemmed, accents folded;
    then the words of its Han runs (any ``lang``)."""
    code = base_lang(lang)
    return _analysed(text, code, _stopset(code))


def _analysed(text: str, code: str, stop: frozenset[str]) -> list[str]:
    """:func:`tokenize` with the analyser of ``code`` and the stopwords ``stop``."""
    han = has_han(text)
    rest = HAN_RUN.sub(" ", text) if han else text
    if code == "pt":
        prepare = default_preparer()
        found = _TOKEN.findall(prepare.text(rest).lower())
        words = prepare.words([w for w in found if w not in stop])
    else:
        words = [w for w in _TOKEN.findall(rest.lower()) if w not in stop]
    tokens = [fold_accents(s) for s in _stemmer(code).stemWords(words)]
    return tokens + search_words(text) if han else tokens


#: Word -> token per language for :func:`token_set` (cleared past :data:`_MEMO_WORDS` words).
_MEMO: dict[str, dict[str, str]] = {}
_MEMO_WORDS = 200_000


def token_set(text: str, lang: str | None) -> frozenset[str]:
    """``frozenset(tokenize(text, lang))``, faster over many texts: each distinct word is
    stemmed once per process (up to :data:`_MEMO_WORDS` words, then the memo starts again).
    Portuguese and Han text take :func:`tokenize` itself (their preparation is not per word)."""
    code = base_lang(lang)
    if code == "pt" or has_han(text):
        return frozenset(tokenize(text, lang))
    stop = _stopset(code)
    words = {w for w in _TOKEN.findall(text.lower()) if w not in stop}
    memo = _MEMO.get(code)
    if memo is None or len(memo) > _MEMO_WORDS:
        memo = _MEMO[code] = {}
    new = [w for w in words if w not in memo]
    if new:
        stems = _stemmer(code).stemWords(new)
        memo.update(zip(new, (fold_accents(t) for t in stems), strict=True))
    return frozenset(memo[w] for w in words)


def query_analysers(text: str, langs: Iterable[str]) -> list[str]:
    """The analysers a query is tokenised with in an index holding ``langs`` (most frequent
    first): the index's only one; else, when the query's language is detected
    (:func:`~trilha.index.language.detect_language`) and held, the index's most frequent
    language and the query's; else (``'dano moral'``, an id) all of them."""
    codes = list(dict.fromkeys(base_lang(lang) for lang in langs)) or ["en"]
    if len(codes) == 1:
        return codes
    detected = detect_language(text)
    if detected is None or base_lang(detected) not in codes:
        return codes
    return [c for c in codes if c in (codes[0], base_lang(detected))]


def tokenize_query(text: str, langs: Iterable[str]) -> list[str]:
    """Query tokens for an index holding ``langs`` (most frequent first), with the analysers
    of :func:`query_analysers`.

    The first analyser's tokens keep their multiplicity (as BM25 expects); tokens that only another
    analyser produces are appended once, so a pt query still meets pt-stemmed units in an index
    that is mostly en, and an en-only index sees exactly the en analysis.

    A minority of units in another language must not decide every query: each analyser also drops
    the others' stopwords (the fr analyser would keep "the" and "of", rare terms in an English
    collection, held only by the few units stored as fr: a misdetected abstract, a bilingual page),
    and an English query is not given the fr stems ("cel" for "cells") that only those units hold.
    """
    codes = query_analysers(text, langs)
    stop = frozenset().union(*(_stopset(code) for code in codes))
    tokens = _analysed(text, codes[0], stop)
    seen = set(tokens)
    for code in codes[1:]:
        for tok in _analysed(text, code, stop):
            if tok not in seen:
                seen.add(tok)
                tokens.append(tok)
    return tokens
