"""BuildAnswer's work: compose from the selected context, then shape seed 002's answer.

The composer is the settings' (``TRILHA_ANSWER_BACKEND``): ``extractive`` (offline), ``llm``
(Groq; needs a key) or ``auto`` (Groq when a key is set, else extractive). When the LLM fails
the answer is made extractively and the trace says why. Cited pieces are renumbered ``[1]…[m]``
in the order the answer first cites them; the answer is one sentence per line, at most
``MAX_LINES``, personal data masked again (the model may echo the question's).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from trilha.answer.context import Piece, Terms
from trilha.answer.extractive import Composed, compose_extractive
from trilha.answer.llm import ComposeFailed, GroqComposer
from trilha.answer.pii import mask_pii
from trilha.answer.types import AnswerCitation, AnswerSentence
from trilha.errors import ConfigurationError
from trilha.settings import TrilhaSettings

#: Seed 002's short answer: at most this many lines.
MAX_LINES = 8
SNIPPET_CHARS = 300
_NOTHING = {
    "pt": "Não encontrei nos documentos visíveis um trecho que responda à pergunta.",
    "en": "None of the documents you can see has a passage that answers the question.",
    "es": "Ninguno de los documentos visibles tiene un pasaje que responda a la pregunta.",
    "zh": "您可见的文档中没有能回答该问题的段落。",
}


class LLMComposer(Protocol):
    """Composes cited sentences with a language model."""

    model: str

    def compose(self, question: str, lang: str | None, pieces: Sequence[Piece]) -> Composed: ...


def make_composer(settings: TrilhaSettings) -> LLMComposer | None:
    """The configured LLM composer; None answers extractively (see the module docstring)."""
    if settings.answer_backend == "extractive":
        return None
    from trilha.llm.groq import groq_client

    client = groq_client(settings)
    if client is None:
        if settings.answer_backend == "llm":
            raise ConfigurationError(
                "TRILHA_ANSWER_BACKEND=llm needs TRILHA_GROQ_API_KEY; set it, or use extractive"
            )
        return None
    return GroqComposer(client, settings.groq_model, settings.answer_timeout_s)


def compose(
    question: str,
    lang: str | None,
    pieces: Sequence[Piece],
    terms: Terms,
    llm: LLMComposer | None,
) -> Composed:
    """The LLM's answer when one is configured and answers, else the extractive one."""
    if llm is None or not pieces:
        return compose_extractive(pieces, terms, lang)
    try:
        return llm.compose(question, lang, pieces)
    except ComposeFailed as e:
        composed = compose_extractive(pieces, terms, lang)
        composed.warnings.append(f"LLM answer failed ({llm.model}, {e}); answered extractively")
        return composed


def shaped(
    composed: Composed, pieces: Sequence[Piece]
) -> tuple[list[AnswerSentence], list[AnswerCitation], Counter[str]]:
    """The answer's sentences and citations, renumbered, at most :data:`MAX_LINES`, masked;
    with the personal data masked at this last step, by kind."""
    by_number = {p.number: p for p in pieces}
    renumber: dict[int, int] = {}
    sentences: list[AnswerSentence] = []
    masked: Counter[str] = Counter()
    for text, cited in composed.sentences[:MAX_LINES]:
        for n in cited:
            renumber.setdefault(n, len(renumber) + 1)
        clean = mask_pii(text)
        masked.update(clean.counts)
        sentences.append(AnswerSentence(text=clean.text, citations=[renumber[n] for n in cited]))
    citations = [_citation(by_number[old], new) for old, new in renumber.items()]
    return sentences, citations, masked


def answer_text(sentences: Sequence[AnswerSentence], lang: str | None) -> str:
    """One sentence per line, each ending with its ``[n]``; a plain "nothing found" line in the
    question's language when there is no sentence."""
    if not sentences:
        return _NOTHING.get((lang or "en")[:2], _NOTHING["en"])
    return "\n".join(f"{s.text} {''.join(f'[{n}]' for n in s.citations)}" for s in sentences)


def _citation(piece: Piece, number: int) -> AnswerCitation:
    text = piece.text if len(piece.text) <= SNIPPET_CHARS else piece.text[:SNIPPET_CHARS] + "…"
    return AnswerCitation.of(piece.hit, number=number, snippet=text)
