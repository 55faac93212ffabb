"""The ContextBundle (seed 004, "Context Pack Estruturado") and the items it carries.

Every :class:`ContextItem` has one memory class, provenance (REQ-RETR-010: ``source_type``,
``source_ref``, ``created_at``, ``confidence``) and an :class:`ItemCitation` the caller's LLM
can quote. A claim is a :class:`ClaimItem`: a statement with its confidence, source and validity.
The bundle has seed 004's fields exactly, plus the :class:`BundleTrace` of how it was made.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trilha.config import DepthLevel, MemoryClass
from trilha.orchestrate.prequery.model import PreQuery
from trilha.types import Location, StageLog, StepTrace

SourceType = Literal["document", "graph", "conversation", "retrieval_job", "claim"]


class Provenance(BaseModel):
    """Where an item comes from."""

    model_config = ConfigDict(frozen=True)

    source_type: SourceType = Field(description="document, graph, conversation, ...")
    source_ref: str = Field(description="The document path or URL, node id or turn id.")
    created_at: str | None = Field(description="ISO time the source was created, when known.")
    confidence: float = Field(ge=0, le=1, description="How far the item is to be trusted, 0–1.")


class ItemCitation(Location):
    """What the caller quotes: a label, and a document unit's location or a node or turn id."""

    model_config = ConfigDict(frozen=True)

    label: str = Field(description="Human citation, e.g. 'Manual X, seção 3.2'.")
    node_id: str | None = Field(None, description="Graph id ('Task:t-1') of a graph item.")


class ContextItem(BaseModel):
    """One piece of context: text, type, memory class, score, provenance and citation."""

    model_config = ConfigDict(frozen=True)

    item_id: str = Field(description="Stable id: 'Chunk:<unit_id>', 'Task:t-1', 'Turn:<id>'...")
    item_type: str = Field(description="chunk, a graph label (Task, OKR...), turn or job.")
    memory_class: MemoryClass = Field(description="working_set, episodic, semantic, ...")
    text: str = Field(description="What the LLM reads (cut to the budget when truncated).")
    score: float = Field(description="Relevance within its source, higher is better.")
    tokens: int = Field(ge=0, description="Tokens of ``text``.")
    truncated: bool = Field(False, description="The text was cut to fit the budget.")
    source: str = Field(description="The retrieval step that found it (semantic, graph...).")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Label-specific fields.")
    provenance: Provenance = Field(description="Where it comes from.")
    citation: ItemCitation = Field(description="How to cite it.")


class ClaimItem(ContextItem):
    """A claim: a statement with confidence, source and validity."""

    statement: str = Field(description="What the claim states.")
    confidence: float = Field(ge=0, le=1, description="Confidence of the claim, 0–1.")
    valid_from: str | None = Field(None, description="ISO date the claim starts to hold.")
    valid_to: str | None = Field(None, description="ISO date the claim stops holding.")


class ByMemoryClass(BaseModel):
    """The bundle's items grouped by memory class (REQ-RETR-027)."""

    model_config = ConfigDict(frozen=True)

    working_set: list[ContextItem] = Field(default_factory=list)
    episodic: list[ContextItem] = Field(default_factory=list)
    semantic: list[ContextItem] = Field(default_factory=list)
    procedural: list[ContextItem] = Field(default_factory=list)
    claims: list[ClaimItem] = Field(default_factory=list)


class CdcMetadata(BaseModel):
    """What the Context Depth Controller asked for and got."""

    model_config = ConfigDict(frozen=True)

    depth_level: DepthLevel = Field(description="D0–D4.")
    query_profile_used: str | None = Field(description="Query Profile walked, if any.")
    filters_applied: list[str] = Field(description="Every filter the reads applied.")


class Limits(BaseModel):
    """The limits of REQ-RETR-015 and how close this retrieval came to them."""

    model_config = ConfigDict(frozen=True)

    max_nodes_scanned: int
    max_results: int
    max_depth: int
    max_tokens_context: int
    nodes_scanned: int = Field(description="Graph nodes and units the reads examined.")
    results: int = Field(description="Items in the bundle.")
    dropped: int = Field(description="Items left out for the token budget or max_results.")
    truncated: int = Field(description="Items cut to fit the token budget.")


class BundleTrace(StageLog[StepTrace]):
    """How the bundle was made: every step (``steps`` in its JSON: the pre-query's, then each
    source's), the degradations, the job id, the pre-query, the limits."""

    model_config = ConfigDict(
        frozen=True,
        alias_generator=lambda field: "steps" if field == "stages" else field,
        serialize_by_alias=True,
        validate_by_name=True,
        validate_by_alias=True,
    )

    job_id: str = Field(description="Id of the RetrievalJob logged for this request.")
    principal: str = Field(description="Whose visibility the items respect (a scope key).")
    prequery: PreQuery = Field(description="What pre-query made of the question.")
    limits: Limits
    latency_ms: float = Field(description="Wall time of the whole retrieval.")


class ContextBundle(BaseModel):
    """What the orchestrator hands an agent: typed, budgeted, cited and visible to the caller
    only."""

    model_config = ConfigDict(frozen=True)

    context_items: list[ContextItem] = Field(description="Every item, by priority.")
    retrieval_summary: str = Field(description="What was found, in a few sentences.")
    strategies_used: list[str] = Field(description="Named strategies and steps that ran.")
    depth_used: int = Field(ge=0, le=4, description="Depth level as a number, 0–4.")
    tokens_estimated: int = Field(ge=0, description="Tokens of all items' texts.")
    by_memory_class: ByMemoryClass = Field(description="The same items by memory class.")
    cdc_metadata: CdcMetadata
    llm_instructions: list[str] = Field(description="Instructions for the caller's LLM.")
    trace: BundleTrace
