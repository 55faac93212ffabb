"""What the Pre-query step derives from a question (seed 004, REQ-RETR-002): its intent, the
things it is about, the time it covers, how the answer should look and what it asks of work
items. Every model is frozen and refuses unknown fields; the JSON schema comes with them.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trilha.config import Intent
from trilha.types import StageLog, StepTrace

HorizonName = Literal[
    "today",
    "last_7d",
    "next_7d",
    "this_week",
    "last_30d",
    "next_30d",
    "this_month",
    "all_time",
    "explicit",
]
Length = Literal["short", "list", "long"]
Ownership = Literal["mine", "team", "any"]
ClassifierName = Literal["heuristic", "llm"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TimeHorizon(_Frozen):
    """The period a question covers, resolved against the ``now`` of the request."""

    name: HorizonName = Field(description="Named period; 'explicit' when dates were given.")
    start: date | None = Field(None, description="First day (inclusive); None: unbounded.")
    end: date | None = Field(None, description="Last day (inclusive); None: unbounded.")

    @model_validator(mode="after")
    def _ordered(self) -> TimeHorizon:
        if self.start is not None and self.end is not None and self.start > self.end:
            raise ValueError(f"time_horizon start {self.start} is after its end {self.end}")
        if self.name == "all_time" and (self.start is not None or self.end is not None):
            raise ValueError("time_horizon 'all_time' has no start nor end")
        return self

    def contains(self, d: date) -> bool:
        """Whether day ``d`` falls inside the period."""
        return (self.start is None or self.start <= d) and (self.end is None or d <= self.end)


#: The period with no bounds.
ALL_TIME = TimeHorizon(name="all_time")


class FocusEntity(_Frozen):
    """Something the question is about: a kind of node, and the named node when one was found."""

    label: str = Field(description="A graph label of trilha.graph.model.NODE_SPECS ('Task'...).")
    name: str | None = Field(None, description="The name as the graph spells it, when named.")
    node_id: str | None = Field(None, description="Display id of the graph node ('Entity:lgpd').")


class WorkHints(_Frozen):
    """What the question asks of work items (tasks, projects)."""

    overdue: bool = Field(False, description="Asks for late items (atrasadas, overdue...).")
    statuses: tuple[str, ...] = Field((), description="Statuses asked for ('open', 'done'...).")
    ownership: Ownership = Field(
        "any", description="'mine' (my tasks), 'team' (our team, minha startup) or 'any'."
    )
    priority: bool = Field(False, description="Asks about priorities (priorizar, urgent...).")


class AnswerConstraints(_Frozen):
    """How the answer should look."""

    length: Length = Field("short", description="'short', 'list' or 'long'.")
    language: str = Field("en", description="Language of the question: 'pt' or 'en'.")


class PreQuery(_Frozen):
    """The Pre-query result (REQ-RETR-002), logged with the RetrievalJob (REQ-RETR-003)."""

    retrieval_intent: Intent = Field(description="What kind of question this is.")
    focus_entities: tuple[FocusEntity, ...] = Field(
        (), description="Labels and named graph nodes the question is about."
    )
    time_horizon: TimeHorizon = Field(ALL_TIME, description="The period it covers.")
    answer_constraints: AnswerConstraints = Field(
        default_factory=AnswerConstraints, description="Length and language of the answer."
    )
    work: WorkHints = Field(default_factory=WorkHints, description="What it asks of work items.")
    keywords: tuple[str, ...] = Field((), description="Content words, stopwords removed.")
    classifier: ClassifierName = Field(description="Which classifier decided the intent.")
    confidence: float = Field(ge=0, le=1, description="The classifier's confidence, 0–1.")


class PreQueryOutcome(_Frozen):
    """The Pre-query result and how it was reached."""

    result: PreQuery = Field(description="The Pre-query result.")
    trace: StageLog[StepTrace] = Field(
        default_factory=StageLog[StepTrace],
        description="The steps run ('heuristic', 'llm', 'entities'), each with what happened.",
    )
