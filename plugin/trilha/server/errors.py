"""Every error as one clear line over HTTP: ``{"detail": "..."}`` with a 4xx, or a 503 with
``Retry-After`` when an index itself cannot answer. Nothing reaches a caller as a traceback."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from trilha.errors import (
    BackendUnavailableError,
    BadRequestError,
    ConfigurationError,
    MissingDependencyError,
    ModelLoadError,
    TrilhaError,
    WorkspaceError,
    one_line,
)

log = logging.getLogger(__name__)

#: Body fields that would name the caller; refused with their own message.
CALLER_FIELDS = ("principal", "user_id", "tenant", "tenant_id")

#: Seconds a caller is told to wait when an index is down.
RETRY_AFTER_S = 30


class Problem(BaseModel):
    """Every refusal and failure the service sends (4xx, 5xx): one line saying what to do."""

    detail: str = Field(description="What went wrong and what to do about it, in one line.")


#: What each error status means, as /openapi.json documents it.
_MEANING = {
    400: "A request this service cannot serve as asked (a filter, or no project_id named).",
    401: "No API key, or one this service does not know.",
    403: "The key may not make this call (its user is unknown, or it is no operator key).",
    404: "No such project for this key (another tenant's project reads the same).",
    409: "This project is not set up for the request (no graph, no reranker...).",
    413: "The body is over the limit.",
    422: "The body or a parameter does not validate; the line names the first field.",
    500: "An internal error; the line carries the reference the service log has.",
    503: "A backend of this project cannot answer now; retry after Retry-After seconds.",
}
_HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}},
    503: {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "string"}}},
}


def responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of a route that may send ``statuses``, each as a :class:`Problem`."""
    return {
        s: {"model": Problem, "description": _MEANING[s], "headers": _HEADERS.get(s, {})}
        for s in statuses
    }


#: What every route may send whatever it is (the body limit, an internal error).
ANY_ROUTE = (413, 500)
#: What a route that reads a project as the key's caller may send besides.
KEYED = (400, 401, 403, 404, 409, 422, 503, *ANY_ROUTE)


class ApiError(Exception):
    """A refusal with its HTTP status (401, 403, 404...) and one line saying what to do."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


#: What cannot answer now (an index, a store, a model): 503 with ``Retry-After``.
_UNAVAILABLE = (
    WorkspaceError,
    BackendUnavailableError,
    ModelLoadError,
    MissingDependencyError,
)


#: What a caller is told of an error about the service's own state (a backend down, a part it
#: was not set up with), whose message may name server paths, hosts or files.
_NEUTRAL = {
    503: f"this project cannot answer now (a backend is unavailable); retry in {RETRY_AFTER_S} s",
    409: "this project is not set up for this request; ask the service's operator",
}


def status_of(error: TrilhaError) -> int:
    """The HTTP status of an error trilha raised on purpose."""
    if isinstance(error, BadRequestError):
        return 400
    if isinstance(error, _UNAVAILABLE):
        return 503
    if isinstance(error, ConfigurationError):
        return 409  # this service is not set up to do it (no graph, no model...)
    return 400


def problem(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The response for one error."""
    extra = dict(headers or {})
    if status == 503:
        extra.setdefault("Retry-After", str(RETRY_AFTER_S))
    return JSONResponse({"detail": message}, status_code=status, headers=extra)


#: The strict type refusals, said in JSON's terms (pydantic's own lines say "valid integer").
_TYPES = {
    "int_type": 'must be a JSON integer such as 5 (not true, "5" or 5.0)',
    "bool_type": 'must be true or false (not "yes", "true" or 1)',
    "string_type": "must be a JSON string",
}


def validation_line(error: RequestValidationError) -> str:
    """The first problem of a body that does not validate, as ``field: message``."""
    problems: list[Any] = list(error.errors())
    if not problems:
        return "the request does not validate; check it against /openapi.json"
    first = problems[0]
    loc = [str(p) for p in first.get("loc", ()) if p != "body"]
    where = ".".join(loc) or "body"
    text = _TYPES.get(first.get("type", ""), str(first.get("msg", "invalid")))
    text = text.removeprefix("Value error, ")
    if first.get("type") == "extra_forbidden":
        text = (
            "the caller comes from the API key, never from the body; remove it"
            if loc and loc[-1] in CALLER_FIELDS
            else "not a field of this request; see /openapi.json for the fields"
        )
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}: {text}{more}"


def install(app: FastAPI) -> None:
    """Register the handlers that turn exceptions into one-line responses."""

    @app.exception_handler(ApiError)
    async def _api(_: Request, e: ApiError) -> JSONResponse:
        return problem(e.status, e.message, e.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, e: RequestValidationError) -> JSONResponse:
        return problem(422, validation_line(e))

    @app.exception_handler(ValidationError)
    async def _model(_: Request, e: ValidationError) -> JSONResponse:
        return problem(422, one_line(e))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, e: StarletteHTTPException) -> JSONResponse:
        return problem(e.status_code, str(e.detail), dict(e.headers or {}))

    @app.exception_handler(TrilhaError)
    async def _trilha(request: Request, e: TrilhaError) -> JSONResponse:
        status = status_of(e)
        if status in _NEUTRAL:  # the service's own state: its paths and hosts stay in the log
            ref = uuid.uuid4().hex[:12]
            log.warning("%s %s on %s %s: %s", type(e).__name__, ref, request.method,
                        request.url.path, e)  # fmt: skip
            return problem(status, f"{_NEUTRAL[status]} (ref {ref})")
        return problem(status, str(e).splitlines()[0] if str(e) else type(e).__name__)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, e: Exception) -> JSONResponse:
        ref = uuid.uuid4().hex[:12]
        log.exception("unexpected error %s on %s %s", ref, request.method, request.url.path)
        return problem(500, f"internal error {ref}; the service log has its details")
