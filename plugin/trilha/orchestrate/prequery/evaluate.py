"""Accuracy of a Pre-query classifier on a labelled JSONL file (``trilha prequery --eval``).

One question per line::

    {"text": "Quais tarefas estão atrasadas?", "intent": "procedural", "horizon": "all_time"}

``text`` and ``intent`` are required; ``horizon`` (a period name; with ``start``/``end`` ISO
days for ``explicit``), ``lang``, ``split`` (e.g. ``holdout``), ``focus`` (labels), ``overdue``
and ``now`` (ISO datetime) are optional. A line holding only ``now`` (and notes) sets the
``now`` of the lines after it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import date, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trilha.config import INTENTS, Intent
from trilha.errors import BadRequestError, one_line
from trilha.orchestrate.prequery.model import HorizonName, PreQuery


class Labelled(BaseModel):
    """One labelled question."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    text: str = Field(min_length=1, description="The question.")
    intent: Intent = Field(description="Its intent.")
    horizon: HorizonName | None = Field(None, description="Its period name, when labelled.")
    start: date | None = Field(None, description="First day of an explicit period.")
    end: date | None = Field(None, description="Last day of an explicit period.")
    lang: str | None = Field(None, description="'pt' or 'en', when labelled.")
    split: str = Field("all", description="Part of the file ('tune', 'holdout'...).")
    focus: tuple[str, ...] | None = Field(None, description="Focus labels, when labelled.")
    overdue: bool | None = Field(None, description="Asks for late items, when labelled.")
    now: datetime = Field(description="The time the question is asked at.")


def load_labelled(path: Path, now: datetime) -> list[Labelled]:
    """The questions of ``path``; ``now`` for lines before any ``now`` line. A bad line is
    one :class:`BadRequestError` naming it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise BadRequestError(f"{path}: cannot read the labelled file ({e.strerror})") from e
    out: list[Labelled] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if isinstance(row, dict) and "text" not in row and "now" in row:
                now = datetime.fromisoformat(row["now"])
                continue
            out.append(Labelled.model_validate({"now": now, **row}))
        except (json.JSONDecodeError, TypeError, ValueError) as e:
            why = one_line(e) if isinstance(e, ValidationError) else str(e)
            raise BadRequestError(f"{path} line {number}: {why}") from None
    if not out:
        raise BadRequestError(f"{path}: no labelled questions (one JSON object per line)")
    return out


class Accuracy(BaseModel):
    """How many of ``total`` were right, and the share."""

    correct: int = Field(description="Right answers.")
    total: int = Field(description="Questions.")

    @property
    def value(self) -> float:
        """``correct / total`` (0 when there are none)."""
        return self.correct / self.total if self.total else 0.0


class Report(BaseModel):
    """Accuracy per intent, of the horizon, overall, and the questions got wrong."""

    per_intent: dict[str, Accuracy] = Field(description="Intent accuracy per gold intent.")
    overall: Accuracy = Field(description="Intent accuracy over every question.")
    horizon: Accuracy = Field(description="Horizon accuracy over the questions labelled with one.")
    misses: list[dict[str, str]] = Field(description="Wrong intents: text, gold, predicted.")


def _horizon_right(item: Labelled, got: PreQuery) -> bool:
    h = got.time_horizon
    if h.name != item.horizon:
        return False
    return item.horizon != "explicit" or (h.start, h.end) == (item.start, item.end)


def evaluate(items: Sequence[Labelled], classify: Callable[[str, datetime], PreQuery]) -> Report:
    """Run ``classify`` on every question and compare with the labels."""
    per = {i: [0, 0] for i in INTENTS}
    horizon, misses = [0, 0], []
    for item in items:
        got = classify(item.text, item.now)
        right = got.retrieval_intent == item.intent
        per[item.intent][0] += right
        per[item.intent][1] += 1
        if not right:
            misses.append({"text": item.text, "gold": item.intent, "got": got.retrieval_intent})
        if item.horizon is not None:
            horizon[0] += _horizon_right(item, got)
            horizon[1] += 1
    overall = Accuracy(correct=sum(c for c, _ in per.values()), total=len(items))
    return Report(
        per_intent={i: Accuracy(correct=c, total=t) for i, (c, t) in per.items() if t},
        overall=overall,
        horizon=Accuracy(correct=horizon[0], total=horizon[1]),
        misses=misses,
    )
