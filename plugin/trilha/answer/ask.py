"""``ask``: a cited answer to a question over a workspace, through UC09, cached.

The whole answer is kept in the workspace's result cache (stage 1) under a key of the
normalised question, the request's filters, params and project, the caller's whole principal,
the composer, and the workspace's scope (path, encoder, lexical and graph generations,
reranker): an ingest, a deletion or a graph write invalidates it, and one caller's answer is
never served to another principal. A hit is marked ``trace.cache_hit`` and timed.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from trilha.answer.compose import LLMComposer, make_composer
from trilha.answer.run import Run
from trilha.answer.types import Answer, AskRequest
from trilha.answer.workflow import UC09Workflow, arun
from trilha.errors import BadRequestError, one_line
from trilha.index.filter_input import coerce_filters
from trilha.retrieve.cache import normalise_query
from trilha.sync_run import run_sync
from trilha.types import StageTrace

if TYPE_CHECKING:
    from trilha.workspace.facade import Workspace

PREFIX = "trilha:answer:"


def ask_request(question: str | AskRequest, **fields: Any) -> AskRequest:
    """A validated :class:`AskRequest` from a question and its fields (``filters``,
    ``project_id``, ``principal``, ``params`` or its own fields ``k``, ``rerank``, ``top_n``,
    ``max_tokens_ctx``); a bad field is one :class:`BadRequestError` line."""
    if isinstance(question, AskRequest) and not fields:
        return question
    data: dict[str, Any] = (
        question.model_dump() if isinstance(question, AskRequest) else {"question": question}
    )
    params: dict[str, Any] = dict(data.pop("params", None) or {})
    for name in ("k", "rerank", "top_n", "max_tokens_ctx"):
        if name in fields:
            params[name] = fields.pop(name)
    params.update(fields.pop("params", None) or {})
    try:
        return AskRequest.model_validate({**data, **fields, "params": params})
    except ValidationError as e:
        raise BadRequestError(f"invalid question request: {one_line(e)}") from None


def ask(ws: Workspace, question: str | AskRequest, /, **fields: Any) -> Answer:
    """The cited answer to ``question`` (see :func:`aask`), from synchronous code; inside a
    running event loop (a notebook cell) it runs on a worker thread's loop
    (:func:`~trilha.sync_run.run_sync`), though ``await aask(...)`` there keeps the loop free."""
    return run_sync(aask(ws, question, **fields))


async def aask(
    ws: Workspace, question: str | AskRequest, /, *, llm: LLMComposer | None = None, **fields: Any
) -> Answer:
    """The cited answer to ``question`` for the request's principal (anonymous when none):
    from the cache when it holds it, else by running the answer workflow. ``llm`` overrides the
    configured composer (``TRILHA_ANSWER_BACKEND``)."""
    request = ask_request(question, **fields)
    composer = llm if llm is not None else make_composer(ws.settings)
    key = _key(ws, request, composer)
    cached, warning = _fetch(ws, key)
    if cached is not None:
        return cached
    answer = await arun(UC09Workflow(ws, composer), Run(request))
    if warning:
        answer.trace.warnings.append(warning)
    elif ws.cache is not None and answer.answered:
        trouble = ws.cache.write(key, answer.model_dump_json())
        if trouble:
            answer.trace.warnings.append(f"{trouble}; answer not kept")
    return answer


def _key(ws: Workspace, request: AskRequest, composer: LLMComposer | None) -> str:
    filters = coerce_filters(request.filters)
    body = {
        "question": normalise_query(request.question),
        "filters": filters.model_dump(mode="json") if filters is not None else None,
        "params": request.params.model_dump(mode="json"),
        "project": request.project_id,
        "principal": request.principal.model_dump(mode="json"),
        "composer": composer.model if composer is not None else "extractive",
        "scope": ws.cache_scope(True, request.params.rerank),
    }
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
    return PREFIX + digest


def _fetch(ws: Workspace, key: str) -> tuple[Answer | None, str | None]:
    """The cached answer of ``key`` (None on a miss), or a warning when the store is down."""
    if ws.cache is None:
        return None, None
    value, ms, trouble = ws.cache.read(key)
    if value is None:
        return None, trouble and f"{trouble}; answered without it"
    answer = Answer.model_validate_json(value)
    answer.trace.cache_hit = True
    answer.trace.stages = [StageTrace(name="cache", latency_ms=ms, count=len(answer.sentences))]
    answer.metrics.latency_ms = ms
    return answer, None
