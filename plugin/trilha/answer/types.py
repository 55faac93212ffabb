"""The request and the result of a cited answer (seed 002's ``/v1/query``, UC09 of seed 000).

:class:`AskRequest` is seed 002's request: ``{project_id, question, mode, filters, params {k,
rerank, max_tokens_ctx}}`` plus who asks. :class:`Answer` is its response: ``{answer, citations,
trace_id, metrics}``, plus the sentences with the citations each one makes, the trace of the
workflow's nodes, and — when an edge condition stopped the workflow — a typed
:class:`NoAnswer` that names the edge.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trilha.access.principal import Principal
from trilha.types import MAX_QUESTION_CHARS, Citation, StageLog, StageTrace, Trace

#: The workflow's nodes, in order (seed 000, UC09).
NODES = ("ParseQuery", "HybridRetrieve", "RerankResults", "BuildAnswer")


class AskParams(BaseModel):
    """Seed 002's ``params`` (strict: ``"40"`` or ``true`` is no integer, ``"yes"`` no boolean)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    k: int = Field(40, gt=0, le=200, description="Candidates retrieved before rerank.")
    rerank: bool = Field(False, description="Rerank the candidates with the cross-encoder.")
    top_n: int = Field(12, gt=0, le=200, description="Candidates kept after rerank.")
    max_tokens_ctx: int = Field(
        2000, ge=50, le=100_000, description="Token budget of the context the answer is made of."
    )


class AskRequest(BaseModel):
    """A question to answer with citations, for a principal (anonymous when none)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question: str = Field(
        max_length=MAX_QUESTION_CHARS, description="The question, in any language."
    )
    project_id: str | None = Field(None, description="The project (kept in trace and cache).")
    mode: Literal["vector"] = Field("vector", description="The retrieval mode; only 'vector'.")
    filters: Any = Field(
        None, description="Filter fields (SearchFilters, a dict of them, MetadataFilters)."
    )
    params: AskParams = Field(default_factory=AskParams, description="k, rerank, budget.")
    principal: Principal = Field(default_factory=Principal.anonymous, description="Who asks.")

    @field_validator("principal", mode="before")
    @classmethod
    def _anonymous_when_none(cls, v: Any) -> Any:
        return Principal.anonymous() if v is None else v


class AnswerCitation(Citation):
    """A unit an answer cites: its citation, its number in the answer (``[n]``) and a
    snippet of the unit with personal data masked."""

    number: int = Field(description="The [n] the answer's sentences use for it.")
    snippet: str = Field("", description="The cited text (masked), at most ~300 characters.")


class AnswerSentence(BaseModel):
    """One sentence of the answer and the numbers of the citations that support it."""

    text: str = Field(description="The sentence, personal data masked.")
    citations: list[int] = Field(description="Numbers of the citations it rests on (≥ 1).")


class NoAnswer(BaseModel):
    """Why the workflow ended without an answer: the edge whose condition failed."""

    edge: str = Field(description="e.g. 'HybridRetrieve → RerankResults'.")
    condition: str = Field(description="The seed's condition, e.g. 'candidates.count > 0'.")
    reason: str = Field(description="What the caller can do about it.")


class AnswerTrace(StageLog[StageTrace]):
    """What happened while answering: the workflow's nodes (``nodes`` in its JSON: ParseQuery,
    HybridRetrieve, RerankResults, BuildAnswer, each timed with its schema checks), the
    degradations, the search's own trace, the composer."""

    model_config = ConfigDict(
        alias_generator=lambda field: "nodes" if field == "stages" else field,
        serialize_by_alias=True,
        validate_by_name=True,
        validate_by_alias=True,
    )

    trace_id: str = Field(description="Id of this answer (also in the retrieval job log).")
    search: Trace | None = Field(None, description="The hybrid search's trace.")
    provider: str = Field("trilha", description="'trilha' (extractive) or 'groq'.")
    model: str = Field("extractive", description="The composing model, or 'extractive'.")
    principal: str | None = Field(None, description="Whose visibility the answer respects.")
    project_id: str | None = Field(None, description="The request's project.")
    query_filters: dict[str, Any] = Field(
        default_factory=dict, description="Filters read from the question itself."
    )
    context_tokens: int = Field(0, description="Tokens of the context the answer drew on.")
    pii_masked: dict[str, int] = Field(default_factory=dict, description="Masked, by kind.")
    cache_hit: bool = Field(False, description="The whole answer came from the result cache.")


class Cost(BaseModel):
    """LLM tokens spent (0 offline)."""

    tokens_in: int = 0
    tokens_out: int = 0


class RetrievalCounts(BaseModel):
    """Seed 002's ``metrics.retrieval``."""

    bm25_hits: int = 0
    ann_hits: int = 0
    rerank_kept: int = 0


class AnswerMetrics(BaseModel):
    """Seed 002's ``metrics``."""

    latency_ms: float = 0.0
    cost: Cost = Field(default_factory=Cost)
    retrieval: RetrievalCounts = Field(default_factory=RetrievalCounts)


class Answer(BaseModel):
    """A cited answer, with the sentences, the trace and any :class:`NoAnswer`."""

    answer: str = Field(description="At most 8 lines; every sentence ends with its [n].")
    citations: list[AnswerCitation] = Field(default_factory=list, description="Cited units.")
    trace_id: str = Field(description="Id of this answer.")
    metrics: AnswerMetrics = Field(default_factory=AnswerMetrics, description="Latency, cost.")
    sentences: list[AnswerSentence] = Field(default_factory=list, description="With citations.")
    lang: str | None = Field(None, description="The question's language.")
    no_answer: NoAnswer | None = Field(None, description="Set when an edge stopped the run.")
    trace: AnswerTrace = Field(description="Nodes, search trace, composer, warnings.")

    @property
    def answered(self) -> bool:
        """True when the workflow reached BuildAnswer and it found something to say."""
        return self.no_answer is None
