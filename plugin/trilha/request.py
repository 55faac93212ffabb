"""The one typed search request every entry point accepts.

``Workspace.search/asearch``, :class:`~trilha.llamaindex.retriever.TrilhaRetriever`, the CLI,
the LlamaIndex tools, ``trilha eval`` and ``trilha bench`` all build a :class:`SearchRequest`;
:func:`trilha.retrieve.plan.plan` turns it, with the settings' defaults, into the
:class:`~trilha.retrieve.plan.SearchPlan` the pipeline runs. Filters are converted here, in
one place, whichever form they come in (``SearchFilters``, a dict of its fields, LlamaIndex
``MetadataFilters``, or a :class:`~trilha.index.filters.FilterExpr`).
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from trilha.access.principal import Principal
from trilha.errors import BadRequestError, TrilhaError, one_line
from trilha.index.filter_input import coerce_filters
from trilha.index.filters import FilterExpr
from trilha.settings import Merge, Weights
from trilha.types import MAX_QUERY_CHARS, Side, checked_text


class SearchRequest(BaseModel):
    """What to search for, how, and for whom. ``None`` means the workspace's setting."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str = Field(description="The question or keywords.")
    top_k: int | None = Field(None, gt=0, le=10_000, description="Results returned.")
    filters: FilterExpr | None = Field(
        None, description="SearchFilters, a dict of its fields, MetadataFilters or a FilterExpr."
    )
    merge: Merge | None = Field(None, description="Merge strategy; None: the fusion in force.")
    weights: Weights | None = Field(
        None, description="Shares of bm25, semantic and kg; None: the fusion in force."
    )
    kg: bool | None = Field(None, description="Knowledge-graph boost; None: on with a graph.")
    rerank: bool = Field(False, description="Rerank the pool with the cross-encoder.")
    expand: bool = Field(
        False,
        validation_alias=AliasChoices("expand", "expand_query"),
        description="Also search up to 3 variants of the query.",  # seed 001's expand_query
    )
    candidates: int | None = Field(
        None, gt=0, description="Pool size before rerank; default 40 with rerank."
    )  # seed 002's k
    sides: tuple[Side, ...] = Field(("bm25", "semantic"), description="Retrieval sides to run.")
    principal: Principal = Field(
        default_factory=Principal.anonymous,
        description="Who asks; results are limited to what they may see (anonymous: public).",
    )

    @field_validator("query")
    @classmethod
    def _has_text(cls, v: str) -> str:
        checked_text(v, noun="query", limit=MAX_QUERY_CHARS)
        return v

    @field_validator("filters", mode="before")
    @classmethod
    def _coerced(cls, v: Any) -> FilterExpr | None:
        return coerce_filters(v)

    @field_validator("principal", mode="before")
    @classmethod
    def _anonymous_when_none(cls, v: Any) -> Any:
        return Principal.anonymous() if v is None else v

    @field_validator("sides")
    @classmethod
    def _some_side(cls, v: tuple[Side, ...]) -> tuple[Side, ...]:
        if not v:
            raise BadRequestError("no retrieval side selected; use bm25, semantic or both")
        return tuple(dict.fromkeys(v))

    @classmethod
    def make(cls, base: str | SearchRequest, /, **fields: Any) -> SearchRequest:
        """A validated request from a query (or a request whose fields ``fields`` override);
        a bad field is a :class:`BadRequestError` of one line."""
        if isinstance(base, SearchRequest):
            if not fields:
                return base  # validated when it was made, and frozen
            data = {k: getattr(base, k) for k in base.model_fields_set}
        else:
            data = {"query": base}
        try:
            return cls.model_validate({**data, **fields})
        except ValidationError as e:
            raise _bad_request(e) from None


def _bad_request(error: ValidationError) -> TrilhaError:
    """The error a validator raised itself (already one line), else pydantic's as one line."""
    for problem in error.errors():
        inner = (problem.get("ctx") or {}).get("error")
        if isinstance(inner, TrilhaError):
            return inner
    return BadRequestError(f"invalid search request: {one_line(error)}")
