"""Groundedness of an answer: is each sentence supported by the units it cites?

Two judges (:func:`make_judge`; every report names the one it used):

* **entailment**, when a local natural-language-inference cross-encoder is configured
  (``TRILHA_NLI_MODEL``: a sentence-transformers ``CrossEncoder`` id or folder whose labels
  include one named *entailment*): a unit supports a sentence when P(entailment | unit, sentence)
  ≥ 0.5;
* **lexical overlap** otherwise (none ships offline): a unit supports a sentence when at least
  ``SUPPORT`` (0.7) of the sentence's content terms — the unit's language analyser, stopwords
  out, stems in — occur in the unit's text (masked as the answer is).

Then:

* **groundedness** — the share of the answer's sentences supported by at least one unit they cite;
* **citation precision** — the share of (sentence, cited unit) pairs where that unit alone
  supports the sentence (ALCE's precision, with the judge above);
* **cited relevance** — with BEIR qrels, the share of cited documents judged relevant, and
  whether the answer cites at least one.

Extractive answers quote their units, so they are grounded by construction; the measure earns
its keep on LLM answers, whose paraphrases the lexical judge can only weigh by their words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from trilha.answer.pii import mask_pii
from trilha.answer.types import Answer
from trilha.errors import ConfigurationError, requires_extra
from trilha.index.tokenize import tokenize
from trilha.types import TextUnit

#: The share of a sentence's terms a unit must hold to support it (lexical judge).
SUPPORT = 0.7
METHOD = "lexical overlap (share of the sentence's analysed terms in the cited unit >= 0.7)"
#: The characters of a unit an entailment model reads.
PREMISE_CHARS = 2000


class Judge(Protocol):
    """Decides whether units support sentences."""

    method: str

    def supported(self, pairs: Sequence[tuple[str, TextUnit]]) -> list[bool]:
        """For each (sentence, unit) pair, whether the unit supports the sentence."""
        ...


class LexicalJudge:
    """Support by lexical overlap (see the module docstring)."""

    method = METHOD

    def supported(self, pairs: Sequence[tuple[str, TextUnit]]) -> list[bool]:
        """Whether each unit holds ``SUPPORT`` of its sentence's terms."""
        return [support(sentence, unit) >= SUPPORT for sentence, unit in pairs]


class EntailmentJudge:
    """Support by a local NLI cross-encoder: P(entailment | unit, sentence) ≥ ``threshold``."""

    def __init__(self, model: str, threshold: float = 0.5) -> None:
        with requires_extra("torch", "the entailment judge (TRILHA_NLI_MODEL)"):
            from sentence_transformers import CrossEncoder

        self.model = CrossEncoder(model, device="cpu")
        labels = {int(i): str(n).lower() for i, n in self.model.config.id2label.items()}
        found = [i for i, name in labels.items() if "entail" in name]
        if not found:
            raise ConfigurationError(
                f"TRILHA_NLI_MODEL {model!r} has no 'entailment' label "
                f"({sorted(labels.values())}); name a natural-language-inference cross-encoder"
            )
        self.index, self.threshold = found[0], threshold
        self.method = f"entailment ({model}, P(entailment) >= {threshold})"

    def supported(self, pairs: Sequence[tuple[str, TextUnit]]) -> list[bool]:
        """One batched prediction over all pairs."""
        if not pairs:
            return []
        inputs = [(mask_pii(u.text).text[:PREMISE_CHARS], s) for s, u in pairs]
        probs: Any = self.model.predict(inputs, apply_softmax=True, show_progress_bar=False)
        return [float(p[self.index]) >= self.threshold for p in probs]


def make_judge(nli_model: str | None) -> Judge:
    """The entailment judge when a model is named, else the lexical one."""
    return EntailmentJudge(nli_model) if nli_model else LexicalJudge()


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
    answer: Answer,
    units: Mapping[str, TextUnit],
    relevant: Mapping[str, int] | None = None,
    judge: Judge | None = None,
) -> AnswerScore:
    """Score ``answer`` against the full text of the units it cites (``units`` by unit id) and,
    when given, the query's qrels (doc id -> grade); ``judge`` defaults to lexical overlap."""
    by_number = {c.number: c for c in answer.citations}
    owners: list[int] = []
    pairs: list[tuple[str, TextUnit]] = []
    for n, sentence in enumerate(answer.sentences):
        for number in sentence.citations:
            unit = units.get(by_number[number].unit_id) if number in by_number else None
            if unit is not None:
                owners.append(n)
                pairs.append((sentence.text, unit))
    verdicts = (judge or LexicalJudge()).supported(pairs)
    supported = {owner for owner, ok in zip(owners, verdicts, strict=True) if ok}
    docs = {c.doc_id for c in answer.citations}
    relevant_cited = None if relevant is None else sum(relevant.get(d, 0) > 0 for d in docs)
    return AnswerScore(
        len(answer.sentences), len(supported), len(pairs), sum(verdicts), len(docs),
        relevant_cited,
    )  # fmt: skip
