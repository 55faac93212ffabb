"""Groundedness of an answer: is each sentence supported by the units it cites?

The judge is **lexical overlap** (no entailment model ships offline; this module names its
method in every report): a sentence is *supported* by a unit when at least ``SUPPORT`` (0.7) of
the sentence's content terms — the unit's language analyser, stopwords out, stems in — occur in
the unit's text (masked as the answer is). Then:

* **groundedness** — the share of the answer's sentences supported by at least one unit they cite;
* **citation precision** — the share of (sentence, cited unit) pairs where that unit alone
  supports the sentence (ALCE's precision, with overlap as the judge);
* **cited relevance** — with BEIR qrels, the share of cited documents judged relevant, and
  whether the answer cites at least one.

Extractive answers quote their units, so they are grounded by construction; the measure earns
its keep on LLM answers, whose paraphrases it can only judge by their words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from trilha.answer.pii import mask_pii
from trilha.answer.types import Answer
from trilha.index.tokenize import tokenize
from trilha.types import TextUnit

#: The share of a sentence's terms a unit must hold to support it.
SUPPORT = 0.7
METHOD = "lexical overlap (share of the sentence's analysed terms in the cited unit >= 0.7)"


@dataclass(frozen=True)
class AnswerScore:
    """One answer's groundedness, citation precision and (with qrels) cited relevance."""

    sentences: int
    supported: int
    pairs: int
    precise_pairs: int
    cited_docs: int
    relevant_cited_docs: int | None

    @property
    def groundedness(self) -> float:
        """Supported sentences / sentences (1.0 for an answer with none)."""
        return self.supported / self.sentences if self.sentences else 1.0

    @property
    def citation_precision(self) -> float:
        """Supporting (sentence, unit) pairs / pairs (1.0 with none)."""
        return self.precise_pairs / self.pairs if self.pairs else 1.0


def support(sentence: str, unit: TextUnit) -> float:
    """The share of ``sentence``'s analysed terms found in ``unit``'s (masked) text."""
    terms = set(tokenize(sentence, unit.lang))
    if not terms:
        return 1.0
    held = set(tokenize(mask_pii(unit.text).text, unit.lang))
    return len(terms & held) / len(terms)


def score_answer(
    answer: Answer, units: Mapping[str, TextUnit], relevant: Mapping[str, int] | None = None
) -> AnswerScore:
    """Score ``answer`` against the full text of the units it cites (``units`` by unit id) and,
    when given, the query's qrels (doc id -> grade)."""
    by_number = {c.number: c for c in answer.citations}
    supported = pairs = precise = 0
    for sentence in answer.sentences:
        cited = [units.get(by_number[n].unit_id) for n in sentence.citations if n in by_number]
        shares = [support(sentence.text, u) for u in cited if u is not None]
        pairs += len(shares)
        precise += sum(s >= SUPPORT for s in shares)
        supported += any(s >= SUPPORT for s in shares)
    docs = {c.doc_id for c in answer.citations}
    relevant_cited = None if relevant is None else sum(relevant.get(d, 0) > 0 for d in docs)
    return AnswerScore(len(answer.sentences), supported, pairs, precise, len(docs), relevant_cited)
