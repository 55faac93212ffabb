"""The Pre-query step (REQ-RETR-002): the heuristic always, the LLM when given (falling back to
the heuristic on any failure, recorded in the trace and logged once as a warning), then the
named graph nodes the question mentions.

The sync and async forms share every step but the LLM call.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import datetime

from trilha.errors import TrilhaError
from trilha.orchestrate.prequery.entities import EntityFinder
from trilha.orchestrate.prequery.heuristic import HeuristicClassifier
from trilha.orchestrate.prequery.llm import GroqClassifier
from trilha.orchestrate.prequery.model import FocusEntity, PreQuery, PreQueryOutcome
from trilha.types import StageLog, StepTrace, checked_text

logger = logging.getLogger(__name__)


def prequery(
    text: str,
    *,
    now: datetime,
    classifier: GroqClassifier | None = None,
    entities: EntityFinder | None = None,
    heuristic: HeuristicClassifier | None = None,
) -> PreQueryOutcome:
    """The Pre-query of ``text`` at ``now`` (see the module docstring)."""
    question, base, trace = _heuristic(text, now, heuristic)
    result = base
    if classifier is not None:
        started = time.perf_counter()
        try:
            result = classifier.classify(question, now=now, base=base)
            trace.append(_llm_done(classifier, started))
        except TrilhaError as e:
            trace.append(_llm_failed(e, started))
    return _finish(result, question, entities, trace)


async def aprequery(
    text: str,
    *,
    now: datetime,
    classifier: GroqClassifier | None = None,
    entities: EntityFinder | None = None,
    heuristic: HeuristicClassifier | None = None,
) -> PreQueryOutcome:
    """:func:`prequery` for a running event loop (the LLM call is awaited)."""
    question, base, trace = _heuristic(text, now, heuristic)
    result = base
    if classifier is not None:
        started = time.perf_counter()
        try:
            result = await classifier.aclassify(question, now=now, base=base)
            trace.append(_llm_done(classifier, started))
        except TrilhaError as e:
            trace.append(_llm_failed(e, started))
    return _finish(result, question, entities, trace)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _heuristic(
    text: str, now: datetime, heuristic: HeuristicClassifier | None
) -> tuple[str, PreQuery, list[StepTrace]]:
    question = checked_text(text)
    started = time.perf_counter()
    base = (heuristic or HeuristicClassifier()).classify(question, now=now)
    detail = f"intent {base.retrieval_intent} ({base.confidence:.2f})"
    return question, base, [StepTrace(name="heuristic", latency_ms=_ms(started), note=detail)]


def _llm_done(classifier: GroqClassifier, started: float) -> StepTrace:
    return StepTrace(name="llm", latency_ms=_ms(started), note=f"model {classifier.model}")


def _llm_failed(error: TrilhaError, started: float) -> StepTrace:
    logger.warning("pre-query LLM failed, heuristic used: %s", error)
    return StepTrace(name="llm", latency_ms=_ms(started), note=f"{error}; heuristic used")


def _finish(
    result: PreQuery, question: str, finder: EntityFinder | None, trace: list[StepTrace]
) -> PreQueryOutcome:
    """``result`` with the named nodes ``finder`` found (a failing finder adds none, and says
    so in the trace)."""
    if finder is None:
        return PreQueryOutcome(result=result, trace=StageLog(stages=trace))
    started = time.perf_counter()
    try:
        found = finder.find(question)
        detail = f"{len(found)} named node(s)"
    except TrilhaError as e:
        logger.warning("pre-query entity finder failed: %s", e)
        found, detail = [], f"{e}; no named nodes"
    trace.append(StepTrace(name="entities", latency_ms=_ms(started), note=detail))
    merged = with_named(result.focus_entities, found)
    return PreQueryOutcome(
        result=result.model_copy(update={"focus_entities": merged}), trace=StageLog(stages=trace)
    )


def with_named(
    labels: Sequence[FocusEntity], named: Sequence[FocusEntity]
) -> tuple[FocusEntity, ...]:
    """The named nodes, then the bare labels that no named node already stands for."""
    covered = {e.label for e in named}
    return (*named, *(e for e in labels if e.name is not None or e.label not in covered))
