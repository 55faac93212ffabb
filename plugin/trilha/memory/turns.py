"""Conversation turns: the :class:`Turn` value, its checks, and reading turns from JSONL.

A turns file holds one JSON object per line::

    {"user_id": "ana", "conversation_id": "c1", "role": "user", "text": "Quais tarefas...",
     "project_id": "p-startup", "created_at": "2025-06-02T09:15:00Z", "turn_id": "t1"}

``project_id``, ``created_at`` (default: the import's clock) and ``turn_id`` (default: a new
random id) may be left out. Times must carry a time zone; they are stored in UTC. The whole file
is checked before anything is written, and the first problem is reported as one line naming the
file and the line.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from trilha.errors import BadRequestError, one_line

Clock = Callable[[], datetime]
_NAME = re.compile(r"^[^\x00-\x1f\x7f]+$")


def utc_now() -> datetime:
    """The current time, aware, in UTC (the default clock)."""
    return datetime.now(UTC)


def name_problem(value: str) -> str | None:
    """What is wrong with ``value`` as an id (None: nothing), worded to follow its name."""
    if not value.strip() or not _NAME.match(value):
        return f"{value!r} is empty or has control characters; give a real id"
    return None


def check_name(value: str, what: str) -> str:
    """``value`` when it is a usable id; else :class:`BadRequestError` naming ``what``."""
    problem = name_problem(value)
    if problem:
        raise BadRequestError(f"{what} {problem}")
    return value


def aware_utc(value: datetime) -> datetime:
    """``value`` in UTC; a naive time is a ``ValueError`` (its zone would be a guess). The
    ``created_at`` check of turns and jobs."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{value.isoformat()} has no time zone; write it as 2025-06-02T09:15:00Z")
    return value.astimezone(UTC)


def as_utc(value: datetime, what: str = "created_at") -> datetime:
    """:func:`aware_utc`, refusing with a :class:`BadRequestError` naming ``what``."""
    try:
        return aware_utc(value)
    except ValueError as e:
        raise BadRequestError(f"{what} {e}") from None


def stamp(value: datetime) -> str:
    """The stored form of a time: fixed-width ISO 8601 in UTC, so text order is time order."""
    return as_utc(value).isoformat(timespec="microseconds")


def new_id() -> str:
    """A fresh random id for a turn or a job."""
    return uuid.uuid4().hex


class Turn(BaseModel):
    """One message of a conversation, personal to ``user_id``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn_id: str = Field(description="Unique id of the turn.")
    user_id: str = Field(description="Whose conversation it is; only they ever read it back.")
    conversation_id: str = Field(description="The conversation the turn belongs to.")
    project_id: str | None = Field(None, description="The project the conversation is about.")
    role: Literal["user", "assistant"] = Field(description="Who said it.")
    text: str = Field(description="What was said.")
    created_at: datetime = Field(description="When it was said (aware, UTC).")

    @field_validator("turn_id", "user_id", "conversation_id", "project_id")
    @classmethod
    def _named(cls, v: str | None) -> str | None:
        problem = None if v is None else name_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("text")
    @classmethod
    def _has_text(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("is empty; record what was said")
        if "\x00" in v:
            raise ValueError("holds a NUL character; remove it")
        return v

    _utc = field_validator("created_at")(aware_utc)


def make_turn(data: dict[str, Any], clock: Clock) -> Turn:
    """A :class:`Turn` from a dict of its fields (``turn_id`` and ``created_at`` optional);
    :class:`BadRequestError` in one line when a field is wrong."""
    fields = {"turn_id": new_id(), "created_at": clock(), **data}
    try:
        return Turn.model_validate(fields)
    except ValidationError as e:
        raise BadRequestError(one_line(e)) from None


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise BadRequestError(f"{path}: not UTF-8 text (byte {e.start}); save it as UTF-8") from e
    except OSError as e:
        raise BadRequestError(f"{path}: cannot read the turns file ({e.strerror})") from e
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, line


def read_turns(path: Path, clock: Clock) -> list[Turn]:
    """Every turn of the JSONL file at ``path``, all checked before any is returned; the first
    bad line is one :class:`BadRequestError` naming ``file:line``."""
    path = Path(path)
    turns: list[Turn] = []
    for number, line in _lines(path):
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise BadRequestError(f"{where}: not valid JSON ({e.msg}, column {e.colno})") from e
        if not isinstance(row, dict):
            raise BadRequestError(f"{where}: each line must be a JSON object (a turn)")
        try:
            turns.append(make_turn(row, clock))
        except BadRequestError as e:
            raise BadRequestError(f"{where}: {e}") from e
    return turns
