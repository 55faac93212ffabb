"""The LLM Pre-query classifier: Groq's chat completions with JSON output.

The model names the intent, the focus labels, the period and the work hints; its answer is
validated (unknown intent, label or period: refused) and merged over the heuristic result of the
same question, which still gives the language, the keywords and every date: a period the model
names is resolved by code against ``now`` (:func:`~trilha.orchestrate.prequery.horizon.resolve`);
dates code read in the question win over any name. Any failure (timeout, HTTP error,
bad JSON) is a :class:`~trilha.errors.BackendUnavailableError` whose message says what happened;
:func:`~trilha.orchestrate.prequery.step.prequery` falls back to the heuristic on it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from trilha.config import INTENTS, Intent
from trilha.errors import BackendUnavailableError, one_line
from trilha.graph.model import NODE_SPECS
from trilha.orchestrate.prequery import horizon
from trilha.orchestrate.prequery.model import (
    AnswerConstraints,
    FocusEntity,
    HorizonName,
    Length,
    Ownership,
    PreQuery,
    TimeHorizon,
    WorkHints,
)

if TYPE_CHECKING:
    import groq

    from trilha.llm.llamaindex import LlamaIndexChatClient

PROMPT = f"""You classify questions that users ask a company's knowledge assistant, in Portuguese
or English. Answer with one JSON object and nothing else:
{{"retrieval_intent": one of {list(INTENTS)},
 "focus_labels": graph labels the question is about, from {sorted(NODE_SPECS)},
 "time_horizon": one of ["today", "last_7d", "next_7d", "this_week", "last_30d", "next_30d",
   "this_month", "all_time", "explicit"] ("explicit" when it names dates, months or quarters),
 "answer_length": "short", "list" or "long",
 "overdue": true when it asks for late or overdue items,
 "statuses": statuses of work items it asks for, e.g. ["open"], ["done"],
 "ownership": "mine" (my items), "team" (our team, my startup, the company) or "any",
 "priority": true when it asks about priorities or urgency,
 "confidence": a number from 0 to 1}}
Intents: factual = a fact written in documents (a deadline, a value, what a policy says);
graph_insight = how things relate (connections, dependencies, impact, what mentions what);
orientation = open personal guidance with no aim named ("what should I do now?");
organizational = people, teams, who is responsible, who reports to whom;
procedural = tasks, their status and deadlines, processes, how-to steps ("how do I ...");
strategic = OKRs, objectives, goals, mission, strategy, what to prioritise or focus on."""


class LLMAnswer(BaseModel):
    """The JSON the model must return; unknown keys are ignored, wrong values refused."""

    model_config = ConfigDict(extra="ignore")

    retrieval_intent: Intent = Field(description="The intent.")
    focus_labels: list[str] | None = Field(None, description="Graph labels.")
    time_horizon: HorizonName | None = Field(None, description="The period's name.")
    answer_length: Length | None = Field(None, description="'short', 'list' or 'long'.")
    overdue: bool | None = Field(None, description="Asks for late items.")
    statuses: list[str] | None = Field(None, description="Statuses asked for.")
    ownership: Ownership | None = Field(None, description="'mine', 'team' or 'any'.")
    priority: bool | None = Field(None, description="Asks about priorities.")
    confidence: float | None = Field(None, ge=0, le=1, description="0–1.")

    @field_validator("focus_labels")
    @classmethod
    def _labels(cls, value: list[str] | None) -> list[str] | None:
        unknown = sorted(set(value or ()) - set(NODE_SPECS))
        if unknown:
            raise ValueError(f"are not graph labels: {', '.join(unknown)}")
        return value


def merged(answer: LLMAnswer, base: PreQuery, now: datetime) -> PreQuery:
    """``answer`` over the heuristic ``base`` of the same question (see the module docstring)."""
    work = base.work
    labels = answer.focus_labels
    return base.model_copy(
        update={
            "retrieval_intent": answer.retrieval_intent,
            "focus_entities": base.focus_entities
            if labels is None
            else tuple(FocusEntity(label=label) for label in dict.fromkeys(labels)),
            "time_horizon": _period(answer.time_horizon, base.time_horizon, now),
            "answer_constraints": AnswerConstraints(
                length=answer.answer_length or base.answer_constraints.length,
                language=base.answer_constraints.language,
            ),
            "work": WorkHints(
                overdue=work.overdue if answer.overdue is None else answer.overdue,
                statuses=work.statuses if answer.statuses is None else tuple(answer.statuses),
                ownership=answer.ownership or work.ownership,
                priority=work.priority if answer.priority is None else answer.priority,
            ),
            "classifier": "llm",
            "confidence": 0.8 if answer.confidence is None else answer.confidence,
        }
    )


def _period(name: HorizonName | None, read: TimeHorizon, now: datetime) -> TimeHorizon:
    """The period the model named, resolved by code; the one code ``read`` in the question
    when that holds dates (code reads them), or the model named none, the same, or 'explicit'."""
    if name is None or name in (read.name, "explicit") or read.name == "explicit":
        return read
    return horizon.resolve(name, now)


class GroqClassifier:
    """Classifies with ``model`` through a ``groq.Groq`` or ``groq.AsyncGroq`` client (or a
    LlamaIndex LLM's :class:`~trilha.llm.llamaindex.LlamaIndexChatClient`), giving each call
    ``timeout_s`` seconds and no retry."""

    def __init__(
        self,
        client: groq.Groq | groq.AsyncGroq | LlamaIndexChatClient,
        model: str,
        timeout_s: float,
    ) -> None:
        self.client = client.with_options(timeout=timeout_s, max_retries=0)
        self.model = model
        self.timeout_s = timeout_s

    def request(self, question: str) -> dict[str, Any]:
        """The chat-completions arguments for ``question``."""
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": question},
            ],
            "response_format": {"type": "json_object"},
            "temperature": 0,
        }

    def classify(self, question: str, *, now: datetime, base: PreQuery) -> PreQuery:
        """The model's Pre-query of ``question`` merged over the heuristic ``base``."""
        create = self.client.chat.completions.create
        if inspect.iscoroutinefunction(create):
            raise BackendUnavailableError("an AsyncGroq client needs aprequery, not prequery")
        try:
            completion = create(**self.request(question))
        except Exception as e:
            raise self.failure(e) from e
        return merged(self.answer(completion), base, now)

    async def aclassify(self, question: str, *, now: datetime, base: PreQuery) -> PreQuery:
        """:meth:`classify` for a running event loop (a sync client runs in a thread)."""
        create: Any = self.client.chat.completions.create
        try:
            if inspect.iscoroutinefunction(create):
                completion = await create(**self.request(question))
            else:
                completion = await asyncio.to_thread(create, **self.request(question))
        except Exception as e:
            raise self.failure(e) from e
        return merged(self.answer(completion), base, now)

    def answer(self, completion: Any) -> LLMAnswer:
        """The validated JSON of a chat completion."""
        try:
            content = completion.choices[0].message.content
            return LLMAnswer.model_validate(json.loads(content or ""))
        except ValidationError as e:
            raise BackendUnavailableError(f"llm answer refused: {one_line(e)}") from e
        except (ValueError, TypeError, AttributeError, IndexError) as e:
            raise BackendUnavailableError(f"llm answer is not a JSON object ({e})") from e

    def failure(self, error: Exception) -> BackendUnavailableError:
        """What went wrong with a call, as one line."""
        groq = sys.modules.get("groq")  # a LlamaIndex LLM's failures need no Groq SDK
        if isinstance(error, TimeoutError) or (groq and isinstance(error, groq.APITimeoutError)):
            return BackendUnavailableError(f"llm timed out after {self.timeout_s:g} s")
        if groq and isinstance(error, groq.APIStatusError):
            return BackendUnavailableError(f"llm returned HTTP {error.status_code}")
        if groq and isinstance(error, groq.APIConnectionError):
            return BackendUnavailableError(f"llm unreachable ({error.__cause__ or error})")
        return BackendUnavailableError(f"llm call failed: {type(error).__name__}: {error}")
