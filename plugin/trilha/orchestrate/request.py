"""RetrievalRequest (seed 004 REQ-RETR-001): what an agent sends the orchestrator.

The caller is named by ``user_id`` only. Whom that user is allowed to see is looked up in the
workspace's principals (``principals.yaml``) by the orchestrator, never taken from the request:
a request cannot carry roles, clearance or organisations.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from trilha.config import DepthLevel, Strategy
from trilha.errors import BadRequestError, one_line

_ID = r"^[^\x00-\x1f\x7f]+$"


class RetrievalRequest(BaseModel):
    """One question from an agent, with the overrides it may ask for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str = Field(min_length=1, pattern=_ID, description="Who asks (principals.yaml).")
    conversation_id: str = Field(
        min_length=1, pattern=_ID, description="The conversation the question belongs to."
    )
    raw_query: str = Field(min_length=1, max_length=4000, description="The question as typed.")
    agent_type: str = Field(
        "knowledge", min_length=1, pattern=r"^[a-z][a-z0-9_]*$", description="Calling agent."
    )
    project_id: str | None = Field(
        None, min_length=1, pattern=_ID, description="Project the question is about."
    )
    preferred_answer_style: str | None = Field(
        None, max_length=200, description="How the caller wants the answer shaped."
    )
    depth: DepthLevel | None = Field(None, description="D0–D4; default: by the intent.")
    max_tokens: int | None = Field(
        None, gt=0, le=200_000, description="Token budget; capped by the config's ceiling."
    )
    strategy: Strategy | None = Field(None, description="Strategy; default: by the intent.")

    @field_validator("raw_query")
    @classmethod
    def _has_text(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("is empty; pass the question to retrieve context for")
        return v

    @classmethod
    def make(cls, **fields: Any) -> RetrievalRequest:
        """A validated request; a bad field is one :class:`BadRequestError` line naming it."""
        try:
            return cls.model_validate(fields)
        except ValidationError as e:
            raise BadRequestError(f"invalid retrieval request: {one_line(e)}") from None
