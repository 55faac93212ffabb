"""The request bodies of the service, as the seeds write them, and the one response shape that
has no Python model of its own (``/v1/retrieve``'s).

No body names a principal or a user: those come from the API key. A body field that is not in
the contract is refused (422) rather than ignored, and values are read as their JSON types, never
coerced (strict): ``true`` or ``"5"`` is no integer, ``"yes"`` no boolean.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trilha.answer.types import AskParams
from trilha.config import DepthLevel, Strategy
from trilha.types import MAX_QUESTION_CHARS, Hit, Trace

_ID = r"^[A-Za-z0-9][A-Za-z0-9._:@/-]*$"


class Body(BaseModel):
    """Strict: unknown fields and loose values are refused; ``project_id`` picks one of the
    key's projects."""

    model_config = ConfigDict(extra="forbid", strict=True)

    project_id: str | None = Field(
        None, min_length=1, max_length=200, pattern=_ID, description="One of your projects."
    )


class RetrieveBody(Body):
    """Seed 001's ``POST /v1/retrieve``."""

    query: str = Field(
        min_length=1, max_length=MAX_QUESTION_CHARS, description="The question or keywords."
    )
    top_k: int = Field(10, ge=1, le=200, description="Results returned.")
    strategy: Literal["weighted", "rrf"] | None = Field(None, description="Merge strategy.")
    include_kg: bool | None = Field(None, description="Knowledge-graph boost (default: on).")
    expand_query: bool = Field(False, description="Also search up to 3 variants.")
    rerank: bool = Field(False, description="Rerank with the cross-encoder.")
    filters: dict[str, Any] | None = Field(None, description="SearchFilters fields.")


class RetrieveResponse(BaseModel):
    """Hits with each stage's scores, the trace, and seed 001's two flags on top."""

    hits: list[Hit] = Field(description="Ranked hits, best first, with per-stage scores.")
    cache_hit: bool = Field(description="Answered from the result cache.")
    expansion_queries: list[str] = Field(description="The variants searched besides the query.")
    trace: Trace = Field(description="What each stage did, warnings included.")


class QueryBody(Body):
    """Seed 002's ``POST /v1/query``."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="The question.")
    mode: Literal["vector"] = Field("vector", description="The retrieval mode; only 'vector'.")
    filters: dict[str, Any] | None = Field(None, description="tags, setor, tema, lang, …")
    params: AskParams = Field(default_factory=AskParams, description="k, rerank, budget.")


class ContextBody(Body):
    """The orchestrator's RetrievalRequest, less ``user_id`` (the key's user asks)."""

    conversation_id: str = Field(
        "http", min_length=1, max_length=200, pattern=_ID, description="The conversation."
    )
    raw_query: str = Field(
        min_length=1, max_length=MAX_QUESTION_CHARS, description="The question as typed."
    )
    agent_type: str = Field(
        "knowledge",
        pattern=r"^[a-z][a-z0-9_]*$",
        examples=["knowledge", "task", "user"],
        description="One of the project's agents (shipped: knowledge, task, user); others: 422.",
    )
    preferred_answer_style: str | None = Field(None, max_length=200, description="Style.")
    depth: DepthLevel | None = Field(None, description="D0–D4; default: by the intent.")
    max_tokens: int | None = Field(None, gt=0, le=200_000, description="Token budget.")
    strategy: Strategy | None = Field(None, description="Default: by the intent.")


class DualBody(Body):
    """Seed 001's ``POST /v1/factual/dual-search``."""

    facts: str = Field(min_length=1, max_length=8000, description="The case's facts.")
    thesis: str = Field(min_length=1, max_length=8000, description="The legal thesis.")
    top_k: int = Field(10, ge=1, le=100, description="Units per list.")
    filters: dict[str, Any] | None = Field(None, description="SearchFilters fields.")


class FeaturesBody(Body):
    """Seed 001's ``POST /v1/search/features``: the nine filters, AND-combined."""

    categorias: list[str] | None = Field(None, max_length=50, description="Any of them.")
    dispositivo_norma: str | None = Field(None, max_length=500, description="Exact.")
    resultado: str | None = Field(None, max_length=500, description="Exact, case-sensitive.")
    unanimidade: bool | None = Field(None, description="Unanimous or not.")
    tipo_decisao: str | None = Field(None, max_length=500, description="Exact.")
    tipo_recurso: str | None = Field(None, max_length=500, description="Exact.")
    ministro_relator: str | None = Field(None, max_length=500, description="Exact.")
    argumento_vencedor: str | None = Field(None, max_length=500, description="Partial.")
    argumento_perdedor: str | None = Field(None, max_length=500, description="Partial.")
    limit: int = Field(50, ge=1, le=1000, description="Documents returned.")

    def filters(self) -> dict[str, Any]:
        """The filters given (None fields left out)."""
        return self.model_dump(exclude_none=True, exclude={"project_id", "limit"})


class SubgraphBody(Body):
    """Seed 003's ``POST /graphrag/subgraph``."""

    doc_id: str = Field(min_length=1, max_length=500, description="The document.")
    entity_names: list[str] | None = Field(None, max_length=100, description="Kept entities.")
    max_hops: int = Field(2, description="1 or 2 (larger is capped, noted).")
    limit: int = Field(30, description="Nodes and edges at most (capped, noted).")


class PathBody(Body):
    """Seed 003's ``POST /graphrag/path``."""

    source_entity: str = Field(min_length=1, max_length=500, description="From.")
    target_entity: str = Field(min_length=1, max_length=500, description="To.")
    max_length: int = Field(4, description="Edges at most (capped at 6, noted).")


class TopNBody(Body):
    """Seed 003's ``POST /graphrag/topn``."""

    entity_names: list[str] | None = Field(None, max_length=100, description="Entities.")
    category: str | None = Field(None, max_length=200, description="Category bonus.")
    language: str | None = Field(None, max_length=20, description="Documents' language.")
    limit: int = Field(5, description="Documents (capped, noted).")
