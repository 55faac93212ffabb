"""Hostile RetrievalRequests: every bad field is one BadRequestError line naming it, before any
store, graph or terminal sees it."""

from __future__ import annotations

from typing import Any

import pytest

from trilha.errors import BadRequestError
from trilha.orchestrate.request import MAX_ID, RetrievalRequest

BASE: dict[str, Any] = {"user_id": "bruno.ti", "conversation_id": "c1", "raw_query": "Quais?"}


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("raw_query", "a\x00b", "raw_query holds the control character '\\x00'"),
        ("raw_query", "abc\x1b[31mred", "raw_query holds the control character '\\x1b'"),
        ("raw_query", "ab\x7f", "raw_query holds the control character '\\x7f'"),
        ("preferred_answer_style", "short\x00", "preferred_answer_style holds"),
        ("user_id", "   ", "user_id is blank"),
        ("conversation_id", "\t", "conversation_id: string should match pattern"),
        ("conversation_id", "x" * (MAX_ID + 1), "conversation_id: string should have at most"),
        ("project_id", "p" * (MAX_ID + 1), "project_id: string should have at most"),
        ("max_tokens", "100", "max_tokens: input should be a valid integer"),
        ("max_tokens", True, "max_tokens: input should be a valid integer"),
        ("max_tokens", 12.0, "max_tokens: input should be a valid integer"),
    ],
)
def test_a_bad_field_is_one_line_naming_it(field: str, value: object, said: str) -> None:
    with pytest.raises(BadRequestError) as caught:
        RetrievalRequest.make(**{**BASE, field: value})
    message = str(caught.value)
    assert said in message and "\n" not in message


def test_tabs_and_newlines_are_part_of_a_question() -> None:
    request = RetrievalRequest.make(**{**BASE, "raw_query": "Quais\ttarefas?\r\nE prazos?"})
    assert request.raw_query == "Quais\ttarefas?\r\nE prazos?"


@pytest.mark.parametrize("value", ["not a dict", 42, None, ["user_id", "x"]])
def test_a_request_that_is_not_a_mapping_is_refused(value: object) -> None:
    with pytest.raises(BadRequestError, match="a mapping of its fields, not"):
        RetrievalRequest.of(value)  # type: ignore[arg-type]


def test_of_passes_a_request_through_and_validates_a_mapping() -> None:
    request = RetrievalRequest.make(**BASE)
    assert RetrievalRequest.of(request) is request
    assert RetrievalRequest.of(BASE) == request
    with pytest.raises(BadRequestError, match="roles: extra inputs are not permitted"):
        RetrievalRequest.of({**BASE, "roles": ["board"]})
