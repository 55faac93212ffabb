"""RetrievalRequest (seed 004 REQ-RETR-001): what an agent sends the orchestrator.

The caller is named by ``user_id`` only. Whom that user is allowed to see is looked up in the
workspace's principals (``principals.yaml``) by the orchestrator, never taken from the request:
a request cannot carry roles, clearance or organisations.

Text fields refuse NUL and the other control characters (tab, newline and carriage return
excepted): they would reach SQLite, the graph and the terminal. ``max_tokens`` is a true integer
(not ``True``, not ``"100"``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from trilha.config import DepthLevel, Strategy
from trilha.errors import BadRequestError, one_line
from trilha.types import MAX_QUESTION_CHARS

#: An id: no control characters, at most :data:`MAX_ID` characters.
_ID = r"^[^\x00-\x1f\x7f]+$"
#: Longest id accepted (user, conversation, project).
MAX_ID = 256
#: Control characters a text field may not hold (tab, newline, carriage return allowed).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _text_problem(value: str) -> str | None:
    found = _CONTROL.search(value)
    if found is None:
        return None
    return f"holds the control character {found.group()!r}; remove it"


class RetrievalRequest(BaseModel):
    """One question from an agent, with the overrides it may ask for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str = Field(
        min_length=1, max_length=MAX_ID, pattern=_ID, description="Who asks (principals.yaml)."
    )
    conversation_id: str = Field(
        min_length=1,
        max_length=MAX_ID,
        pattern=_ID,
        description="The conversation the question belongs to.",
    )
    raw_query: str = Field(
        min_length=1, max_length=MAX_QUESTION_CHARS, description="The question as typed."
    )
    agent_type: str = Field(
        "knowledge", min_length=1, pattern=r"^[a-z][a-z0-9_]*$", description="Calling agent."
    )
    project_id: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_ID,
        pattern=_ID,
        description="Project the question is about.",
    )
    preferred_answer_style: str | None = Field(
        None, max_length=200, description="How the caller wants the answer shaped."
    )
    depth: DepthLevel | None = Field(None, description="D0–D4; default: by the intent.")
    max_tokens: int | None = Field(
        None,
        gt=0,
        le=200_000,
        strict=True,
        description="Token budget (an integer); capped by the config's ceiling.",
    )
    strategy: Strategy | None = Field(None, description="Strategy; default: by the intent.")

    @field_validator("raw_query")
    @classmethod
    def _has_text(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("is empty; pass the question to retrieve context for")
        problem = _text_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("user_id", "conversation_id", "project_id")
    @classmethod
    def _not_blank(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("is blank; give a real id")
        return v

    @field_validator("preferred_answer_style")
    @classmethod
    def _plain_style(cls, v: str | None) -> str | None:
        problem = None if v is None else _text_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @classmethod
    def make(cls, **fields: Any) -> RetrievalRequest:
        """A validated request; a bad field is one :class:`BadRequestError` line naming it."""
        try:
            return cls.model_validate(fields)
        except ValidationError as e:
            raise BadRequestError(f"invalid retrieval request: {one_line(e)}") from None

    @classmethod
    def of(cls, request: RetrievalRequest | Mapping[str, Any]) -> RetrievalRequest:
        """``request`` itself, or the request a mapping of its fields makes (:meth:`make`);
        anything else is one :class:`BadRequestError` line."""
        if isinstance(request, RetrievalRequest):
            return request
        if not isinstance(request, Mapping):
            raise BadRequestError(
                f"a retrieval request is a RetrievalRequest or a mapping of its fields, not "
                f"{type(request).__name__}; pass e.g. {{'user_id': ..., 'conversation_id': ..., "
                "'raw_query': ...}"
            )
        return cls.make(**{str(k): v for k, v in request.items()})
