"""Context selection within ``max_tokens_ctx`` (seed 002, step 4) and the question's terms.

The kept hits are taken in priority order (rerank score when reranked, else fused). Each unit's
text is masked (:mod:`trilha.answer.pii`) before anything else sees it, then kept whole when it
fits what is left of the budget; a unit longer than that gives a *window*: its best-matching
sentence and its neighbours, widened while they fit. A window under ``MIN_PIECE_TOKENS`` is not
worth citing, and the budget is never exceeded.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from trilha.answer.pii import mask_pii
from trilha.answer.sentences import split_sentences
from trilha.index.tokenize import token_set, tokenize
from trilha.tokens import count_tokens, truncate_to_tokens
from trilha.types import Hit

#: The smallest window worth keeping (tokens).
MIN_PIECE_TOKENS = 40
#: Tokens of a candidate's text the reranker reads when ranking for an answer (:func:`focus`).
#: On 100 SciFact questions 40 scored as 64 did (cited relevant 0.438 / 0.431, answers citing a
#: relevant document 0.711 / 0.725) with pairs 10% shorter.
RERANK_WINDOW_TOKENS = 40


@dataclass(frozen=True)
class Piece:
    """One hit's part of the context: its number in the answer (1-based, priority order), the
    masked text kept, and its sentences."""

    number: int
    hit: Hit
    text: str
    tokens: int
    window: bool
    sentences: tuple[str, ...]


#: Words that make a question a question, not what it is about (dropped from its terms).
QUESTION_WORDS = (
    "what which who whom whose when where why how does do did can could should would is are "
    "was were qual quais quem quando onde como porque por que quê é são há existe existem "
    "cuál cuáles quién dónde cómo cuándo qué es son"
)


class Terms:
    """The question's terms in a language's analyser (question words, and the ``spent`` phrases
    that stated filters, dropped), weighted by
    rarity over a set of sentences (``idf = ln(1 + N / (1 + df))``), scoring how much of the
    question a text holds."""

    def __init__(self, question: str, lang: str | None, spent: Sequence[str] = ()) -> None:
        self.lang = lang
        asked = set(tokenize(" ".join([QUESTION_WORDS, *spent]), lang))
        self.terms = frozenset(t for t in tokenize(question, lang) if t not in asked)
        self.idf: dict[str, float] = {t: 1.0 for t in self.terms}
        self._found: dict[str, frozenset[str]] = {}

    def fit(self, sentences: Sequence[str]) -> None:
        """Weight the terms by their rarity in ``sentences``."""
        df = Counter(t for s in sentences for t in self.found(s))
        n = len(sentences)
        self.idf = {t: math.log(1.0 + n / (1.0 + df[t])) for t in self.terms}

    def found(self, text: str) -> frozenset[str]:
        """The question's terms ``text`` holds (each text analysed once: :meth:`fit` and
        :meth:`coverage` see the same sentences)."""
        hit = self._found.get(text)
        if hit is None:
            hit = self._found[text] = self.terms & token_set(text, self.lang)
        return hit

    def tokens(self, text: str) -> list[str]:
        """``text`` through the same analyser as the question."""
        return tokenize(text, self.lang)

    def coverage(self, text: str) -> float:
        """The idf-weighted share of the question's terms that ``text`` contains, in [0, 1]."""
        total = math.fsum(self.idf.values())
        if total <= 0:
            return 0.0
        return math.fsum(self.idf[t] for t in self.found(text)) / total  # any set order


def select_context(
    hits: Sequence[Hit], max_tokens: int, terms: Terms
) -> tuple[list[Piece], Counter[str]]:
    """The pieces of ``hits`` that fit ``max_tokens`` (see the module docstring), and how many
    personal data items of each kind were masked in them."""
    pieces: list[Piece] = []
    masked: Counter[str] = Counter()
    used = 0
    for hit in hits:
        room = max_tokens - used
        if room < MIN_PIECE_TOKENS:
            break
        clean = mask_pii(hit.unit.text)
        masked.update(clean.counts)
        sentences = split_sentences(clean.text)
        text, window, tokens = clean.text, False, count_tokens(clean.text)
        if tokens > room:
            text, window = _window(sentences, room, terms), True
            sentences = split_sentences(text)
            tokens = count_tokens(text)
        if not text.strip() or (window and tokens < MIN_PIECE_TOKENS):
            continue
        pieces.append(Piece(len(pieces) + 1, hit, text, tokens, window, tuple(sentences)))
        used += tokens
    return pieces, masked


def focus(
    hit: Hit,
    terms: Terms,
    sentences: list[str] | None = None,
    tokens: int = RERANK_WINDOW_TOKENS,
) -> str:
    """What the reranker reads of a candidate: its title and heading, and its text when that
    fits ``tokens``, else the window around its best-matching sentence (the part an answer
    would cite; a cross-encoder's cost grows with the length it reads). ``sentences``: the
    text's, when the caller split it already."""
    unit = hit.unit
    heading = unit.heading if unit.heading != unit.title else None
    text = unit.text
    if count_tokens(text) > tokens:
        text = _window(sentences if sentences is not None else split_sentences(text), tokens, terms)
    return "\n".join(p for p in (unit.title, heading, text) if p)


def _window(sentences: list[str], room: int, terms: Terms) -> str:
    """The best-matching sentence and its neighbours, widened while they fit ``room``."""
    if not sentences:
        return ""
    best = max(range(len(sentences)), key=lambda i: (terms.coverage(sentences[i]), -i))
    lo, hi = best, best + 1
    text = truncate_to_tokens(sentences[best], room)
    span = _SpanCounter(sentences)
    while True:
        grown = False
        for lo2, hi2 in ((lo, hi + 1), (lo - 1, hi)):
            if lo2 < 0 or hi2 > len(sentences):
                continue
            if span(lo2, hi2) <= room:
                lo, hi, text, grown = lo2, hi2, " ".join(sentences[lo2:hi2]), True
        if not grown:
            return text


class _SpanCounter:
    """``count_tokens(" ".join(sentences[lo:hi]))`` from per-sentence counts, for stripped
    single-line sentences (what :func:`split_sentences` gives): the tokenizer's pre-split never
    joins the space between two such sentences to the one before it, so a join counts as its
    first sentence plus each later one with its leading space (checked against whole counts on
    42k SciFact spans; whitespace at a sentence's edge would break it). Each sentence is
    counted at most twice."""

    def __init__(self, sentences: Sequence[str]) -> None:
        self.sentences = sentences
        self._alone: dict[int, int] = {}
        self._after: dict[int, int] = {}

    def __call__(self, lo: int, hi: int) -> int:
        first = self._alone.get(lo)
        if first is None:
            first = self._alone[lo] = count_tokens(self.sentences[lo])
        return first + sum(self._spaced(i) for i in range(lo + 1, hi))

    def _spaced(self, i: int) -> int:
        n = self._after.get(i)
        if n is None:
            n = self._after[i] = count_tokens(" " + self.sentences[i])
        return n
