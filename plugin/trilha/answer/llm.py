"""The LLM answer through Groq: the numbered, masked context and the question; the model answers
in the question's language, at most 8 lines, every sentence ending with the number of the
passage it rests on (``[2]``), or ``NO_ANSWER``. Sentences the model leaves without a valid
number are dropped (every sentence must cite), with a warning. A timeout, an HTTP error or an
answer with no cited sentence raises :class:`ComposeFailed`; the caller then answers
extractively and says why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from trilha.answer.context import Piece
from trilha.answer.extractive import Composed
from trilha.answer.sentences import split_sentences

#: What the model is told; {language} is the question's language by name.
PROMPT = (
    "You answer a question using only the numbered context passages. Rules: answer in "
    "{language}; at most 8 lines and 5 sentences; end every sentence with the number of each "
    "passage it rests on, like [1] or [1][3]; add nothing the passages do not say; if they do "
    "not answer the question, reply exactly NO_ANSWER."
)
NO_ANSWER = "NO_ANSWER"
_LANGUAGES = {"pt": "Portuguese", "en": "English", "es": "Spanish", "zh": "Chinese"}
_MARKER = re.compile(r"\s*\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")


class ComposeFailed(Exception):
    """The model gave no usable answer; the message says why (one line)."""


class GroqComposer:
    """Answers with a Groq chat model (a ``groq.Groq`` client), ``timeout_s`` per call."""

    def __init__(self, client: Any, model: str, timeout_s: float) -> None:
        self.client = client.with_options(timeout=timeout_s, max_retries=0)
        self.model = model

    def compose(self, question: str, lang: str | None, pieces: Sequence[Piece]) -> Composed:
        """The model's cited sentences (see the module docstring)."""
        language = _LANGUAGES.get((lang or "")[:2], "the question's language")
        context = "\n\n".join(f"[{p.number}] ({p.hit.unit.doc_id}) {p.text}" for p in pieces)
        try:
            completion = self.client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": PROMPT.format(language=language)},
                    {"role": "user", "content": f"Context:\n{context}\n\nQuestion: {question}"},
                ],
                temperature=0,
                max_tokens=400,
            )
            text = completion.choices[0].message.content or ""
        except Exception as e:  # the client's timeouts and HTTP errors alike
            raise ComposeFailed(f"{type(e).__name__}: {_first_line(e)}") from e
        usage = getattr(completion, "usage", None)
        composed = Composed(
            [],
            provider="groq",
            model=self.model,
            tokens_in=int(getattr(usage, "prompt_tokens", 0) or 0),
            tokens_out=int(getattr(usage, "completion_tokens", 0) or 0),
        )
        if text.strip() == NO_ANSWER:
            composed.warnings.append(f"{self.model} found no answer in the context")
            return composed
        composed.sentences, dropped = cited_sentences(text, {p.number for p in pieces})
        if dropped:
            composed.warnings.append(f"{dropped} sentence(s) without a valid citation dropped")
        if not composed.sentences:
            raise ComposeFailed("no sentence of the answer cites a passage")
        return composed


def cited_sentences(text: str, numbers: set[int]) -> tuple[list[tuple[str, list[int]]], int]:
    """The sentences of ``text`` with the passage numbers each cites (only those in
    ``numbers``), markers removed; and how many sentences cited none and were dropped."""
    out: list[tuple[str, list[int]]] = []
    dropped = 0
    for sentence in split_sentences(text):
        cited = [
            int(n)
            for found in _MARKER.finditer(sentence)
            for n in re.split(r"\s*[,;]\s*", found.group(1))
            if int(n) in numbers
        ]
        clean = " ".join(_MARKER.sub("", sentence).split())
        if clean.endswith((" .", " ,")):
            clean = clean[:-2] + clean[-1]
        if cited and clean:
            out.append((clean, list(dict.fromkeys(cited))))
        elif clean:
            dropped += 1
    return out, dropped


def _first_line(error: BaseException) -> str:
    text = str(error)
    return text.splitlines()[0] if text else ""
