"""The ``orchestrator:`` block of RetrievalConfig: how the Retrieval Orchestrator (seed 004) fills
a ContextBundle. Depth per intent, how much each source brings, which memory classes win when the
token budget is tight, what marks a document as procedural, and the instructions handed to the
caller's LLM. Nothing of this is written in the orchestrator's code (seed 004: zero hard-code).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trilha.config.depth import DepthLevel
from trilha.config.intents import INTENTS, Intent, Strategy

MemoryClass = Literal["working_set", "episodic", "semantic", "procedural", "claims"]
AnswerLength = Literal["short", "list", "long"]


class Instructions(BaseModel):
    """Instructions for the caller's LLM (``llm_instructions``): always, then by answer length
    and by language. ``{budget}`` and ``{style}`` are filled in."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    always: tuple[str, ...] = Field(description="Given with every bundle.")
    length: dict[AnswerLength, str] = Field(description="By the answer length asked for.")
    language: dict[str, str] = Field(description="By the question's language code.")


class OrchestratorDefaults(BaseModel):
    """How the orchestrator builds a bundle, per scope (merged like the rest of the config)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    depth_by_intent: dict[Intent, DepthLevel] = Field(
        description="Depth used for an intent when the request names none."
    )
    class_priority: tuple[MemoryClass, ...] = Field(
        min_length=5, max_length=5, description="Memory classes, kept first when tokens run out."
    )
    min_item_tokens: int = Field(gt=0, description="An item is cut, not dropped, above this.")
    semantic_top_k: int = Field(gt=0, description="Document units asked of the searcher.")
    graph_limit: int = Field(gt=0, description="Graph nodes asked of the profile walk.")
    claims_limit: int = Field(gt=0, description="Claims asked for at D3.")
    recent_jobs: int = Field(ge=0, description="Past retrieval jobs read as episodic memory.")
    memory_share: float = Field(
        gt=0, le=1, description="Share of the token budget conversation memory may take."
    )
    work_strategy: Strategy | None = Field(
        description="Strategy for a question about the state of work (overdue or a status asked"
        " for), unless the request names one; null: the intent's default."
    )
    priority_intents: tuple[Intent, ...] = Field(
        description="Intents whose questions also read priority items (REQ-RETR-019)."
    )
    procedural_labels: tuple[str, ...] = Field(
        description="Graph labels whose nodes are procedural memory (tasks, processes...)."
    )
    working_set_profile: str = Field(
        description="Profile walked for the caller's active items (the working set)."
    )
    procedural_markers: tuple[str, ...] = Field(
        description="A document whose tags or title hold one of these is procedural."
    )
    active_statuses: tuple[str, ...] = Field(
        description="Statuses of the caller's work items that belong to the working set."
    )
    instructions: Instructions = Field(description="Instructions for the caller's LLM.")

    @model_validator(mode="after")
    def _complete(self) -> OrchestratorDefaults:
        missing = [i for i in INTENTS if i not in self.depth_by_intent]
        if missing:
            raise ValueError(f"depth_by_intent: no depth for {', '.join(missing)}")
        if len(set(self.class_priority)) != len(self.class_priority):
            raise ValueError("class_priority: name each memory class once")
        return self
