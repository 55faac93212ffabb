"""The offline Pre-query classifier: the rule tables of :mod:`~trilha.orchestrate.prequery.rules`
applied to the folded question, in pt-BR and English, deterministic and fast (well under 2 ms).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from trilha.config import Intent
from trilha.orchestrate.prequery import horizon, text
from trilha.orchestrate.prequery.model import (
    AnswerConstraints,
    FocusEntity,
    Length,
    Ownership,
    PreQuery,
    WorkHints,
)
from trilha.orchestrate.prequery.rules import Patterns, Rules, default_rules

#: Answer lengths read from the text, the first that matches winning; otherwise "short".
_LENGTHS: tuple[Length, ...] = ("long", "list")


def any_match(patterns: Iterable[Patterns] | Patterns, folded: str) -> bool:
    """Whether a pattern of ``patterns`` (one tuple, or several) matches ``folded``."""
    groups = [patterns] if isinstance(patterns, tuple) else patterns
    return any(p.search(folded) for group in groups for p in group)


class HeuristicClassifier:
    """Scores each intent by the weights of its patterns that match; reads the focus labels,
    time horizon, work hints, answer length, language and keywords from the same text."""

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = rules or default_rules()

    def scores(self, folded: str) -> dict[Intent, float]:
        """Each intent's score on a folded question (0 when none of its patterns match)."""
        return {
            intent: sum(c.weight for c in cues for p in c.patterns if p.search(folded))
            for intent, cues in self.rules.intents.items()
        }

    def classify(self, question: str, *, now: datetime) -> PreQuery:
        """The Pre-query of ``question``, its time horizon resolved against ``now``."""
        folded = text.fold(question)
        lang = text.language(question, self.rules.stopwords)
        intent, confidence = self._intent(self.scores(folded))
        return PreQuery(
            retrieval_intent=intent,
            focus_entities=self.labels(folded),
            time_horizon=horizon.detect(folded, now, lang, self.rules.horizons),
            answer_constraints=AnswerConstraints(length=self._length(folded), language=lang),
            work=self.work(folded),
            keywords=text.keywords(question, self.rules.all_stopwords),
            classifier="heuristic",
            confidence=confidence,
        )

    def labels(self, folded: str) -> tuple[FocusEntity, ...]:
        """The graph labels the question names, in the rules' order."""
        return tuple(
            FocusEntity(label=label)
            for label, patterns in self.rules.labels.items()
            if any_match(patterns, folded)
        )

    def work(self, folded: str) -> WorkHints:
        """What the question asks of work items."""
        rules = self.rules.work
        ownership: Ownership = (
            "team"
            if any_match(rules.team, folded)
            else "mine"
            if any_match(rules.mine, folded)
            else "any"
        )
        return WorkHints(
            overdue=any_match(rules.overdue, folded),
            statuses=tuple(s for s, ps in rules.statuses.items() if any_match(ps, folded)),
            ownership=ownership,
            priority=any_match(rules.priority, folded),
        )

    def _intent(self, scores: Mapping[Intent, float]) -> tuple[Intent, float]:
        """The best intent (ties by ``tie_order``) and a confidence: its share of the two best
        scores; the default intent with 0.3 when no score reaches ``min_score``."""
        order = self.rules.tie_order
        ranked = sorted(scores, key=lambda i: (-scores[i], order.index(i)))
        best = ranked[0]
        if scores[best] < max(self.rules.min_score, 1e-9):
            return self.rules.default_intent, 0.3
        runner_up = scores[ranked[1]] if len(ranked) > 1 else 0.0
        return best, round(scores[best] / (scores[best] + runner_up), 3)

    def _length(self, folded: str) -> Length:
        for length in _LENGTHS:
            if any_match(self.rules.length.get(length, ()), folded):
                return length
        return "short"
