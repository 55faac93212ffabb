"""The offline answer: the context's best supporting sentences, each citing its unit.

Every sentence of the selected context that shares a term with the question, and the first
sentence of a whole unit whose heading alone holds the question (``HEADED``, 0.9 of its term
weight: "4.2 Prazo para pedir reembolso" opens with the deadline in words of its own), is
scored by how much of the question it holds together with its unit's title and heading (what
the sentence is about): the idf-weighted share of the question's analysed terms
(:class:`~trilha.answer.context.Terms`), plus a small prior for the unit's rank
(``RANK_PRIOR / number``). The best are taken while they add something: a sentence is taken only
when it holds at least ``MIN_COVERAGE`` (0.2) of the question's term weight and half of the best
sentence's share; never one whose terms mostly repeat a sentence already chosen (Jaccard ≥ 0.6),
nor one under four words. Sentences in the question's language are preferred: when any of them
qualifies, only they are used. The chosen ones are given in reading order (unit rank, then
position), one per line, each ending with its citation ``[n]``, at most ``max_sentences`` (3) of
them, each cut to ``MAX_CHARS``. (On SciFact a rank prior of 0.3 or 1.0 cited relevant documents
more precisely, 0.45 and 0.48 against 0.40, but fewer answers cited one, 0.66 and 0.65 against
0.68; 0.1 was kept.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from trilha.answer.context import Piece, Terms
from trilha.index.language import primary_code

#: The longest sentence quoted whole (characters); longer ones are cut at a word.
MAX_CHARS = 400
_MIN_WORDS = 4
#: A sentence is taken only when it holds this share of the question's term weight, and at
#: least this fraction of the best sentence's share.
MIN_COVERAGE = 0.2
RELATIVE_COVERAGE = 0.5
#: The weight of the unit's rank in a sentence's score (``RANK_PRIOR / rank``).
RANK_PRIOR = 0.1
_DUPLICATE = 0.6
#: A unit whose heading holds this share of the question's term weight is about the question:
#: its first sentence is a candidate even when it repeats none of its terms (the document's
#: title does not count: every unit of a document shares it).
HEADED = 0.9


@dataclass
class Composed:
    """An answer's sentences, each with the numbers of the pieces it cites, and its maker."""

    sentences: list[tuple[str, list[int]]]
    provider: str = "trilha"
    model: str = "extractive"
    tokens_in: int = 0
    tokens_out: int = 0
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Candidate:
    score: float
    coverage: float
    number: int
    position: int
    text: str
    terms: frozenset[str]
    lang: str


def compose_extractive(
    pieces: Sequence[Piece], terms: Terms, lang: str | None, max_sentences: int = 3
) -> Composed:
    """The extractive answer of ``pieces`` (see the module docstring); no sentence when none
    qualifies."""
    terms.fit([s for p in pieces for s in p.sentences])
    candidates = [c for p in pieces for c in _candidates(p, terms)]
    native = [c for c in candidates if lang is None or primary_code(c.lang) == primary_code(lang)]
    ranked = sorted(native or candidates, key=lambda c: (-c.score, c.number, c.position))
    floor = max(MIN_COVERAGE, RELATIVE_COVERAGE * ranked[0].coverage) if ranked else 0.0
    chosen: list[_Candidate] = []
    for c in ranked:
        if len(chosen) == max_sentences:
            break
        if c.coverage >= floor and all(_jaccard(c.terms, o.terms) < _DUPLICATE for o in chosen):
            chosen.append(c)
    chosen.sort(key=lambda c: (c.number, c.position))
    return Composed([(_cut(c.text), [c.number]) for c in chosen])


def _candidates(piece: Piece, terms: Terms) -> list[_Candidate]:
    unit = piece.hit.unit
    about = " ".join(t for t in (unit.title, unit.heading) if t)
    headed = not piece.window and terms.coverage(unit.heading or "") >= HEADED
    out = []
    for position, sentence in enumerate(piece.sentences):
        lead = headed and position == 0
        if len(sentence.split()) < _MIN_WORDS or (not lead and terms.coverage(sentence) <= 0):
            continue
        coverage = terms.coverage(f"{sentence} {about}")
        out.append(
            _Candidate(
                score=coverage + RANK_PRIOR / piece.number,
                coverage=coverage,
                number=piece.number,
                position=position,
                text=sentence,
                terms=frozenset(terms.tokens(sentence)),
                lang=piece.hit.unit.lang,
            )
        )
    return out


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _cut(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    head = text[: MAX_CHARS - 1].rsplit(" ", 1)[0]
    return head.rstrip(" ,;:") + "…"
