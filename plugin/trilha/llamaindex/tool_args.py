"""Agent tools whose advertised arguments are the arguments they take.

A tool's arguments are declared once, as a :class:`ToolArgs` model with a description per
field. :func:`schema_tool` makes the ``FunctionTool``: its ``metadata.to_openai_tool()`` is that
model's JSON schema (what a model sees), and every call, sync or async, is validated by the
same model before it runs, so the schema and the function cannot disagree. An argument the
schema does not hold (``user_id``, ``principal``…) or a value it refuses is one
:class:`~trilha.errors.BadRequestError` line, which the agent hands back to the model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from llama_index.core.tools import FunctionTool, ToolMetadata
from pydantic import BaseModel, ConfigDict, ValidationError

from trilha.errors import BadRequestError, one_line

A = TypeVar("A", bound="ToolArgs")


class ToolArgs(BaseModel):
    """Base of a tool's arguments: unknown arguments are refused, not dropped."""

    model_config = ConfigDict(extra="forbid")


def schema_tool(
    name: str,
    description: str,
    args: type[A],
    run: Callable[[A], Any],
    arun: Callable[[A], Awaitable[Any]] | None = None,
    *,
    text: Callable[[Any], str] | None = None,
) -> FunctionTool:
    """A tool ``name`` advertising ``args``'s schema; ``run`` (``arun`` on the async path, else
    ``run`` in a worker thread) gets the validated arguments; ``text``, when given, is what the
    model reads of the result (the result stays the tool's ``raw_output``)."""

    def parse(kwargs: dict[str, Any]) -> A:
        try:
            return args.model_validate(kwargs)
        except ValidationError as e:
            raise BadRequestError(f"{name}: {one_line(e)}") from None

    def call(**kwargs: Any) -> Any:
        return run(parse(kwargs))

    async def acall(**kwargs: Any) -> Any:
        parsed = parse(kwargs)
        if arun is not None:
            return await arun(parsed)
        return await asyncio.to_thread(run, parsed)

    async def atext(result: Any) -> str:
        assert text is not None
        return text(result)

    return FunctionTool(
        fn=call,
        async_fn=acall,
        metadata=ToolMetadata(name=name, description=description, fn_schema=args),
        callback=text,
        async_callback=atext if text is not None else None,
    )
