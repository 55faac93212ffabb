"""A function-calling LLM that follows a script, to test agents offline.

It stands in for the external model only: the agents, their tools and what the tools call are
real. Like a real model it sees each tool only as its ``metadata.to_openai_tool()`` JSON (name,
description, parameters' schema), never the Python function. A script is a function of the
messages the agent sends and those tool specs, returning the assistant's message (text, or
:class:`ToolCallBlock` s). Every call is kept in :attr:`ScriptedLLM.calls`. The default script,
:func:`ask_then_cite`, calls ``trilha_context`` with arguments built from its schema (the
user's question), then answers with the first five items (the start of each item's first line)
and their sources, as the tool's text gave them. :mod:`trilha.testing.schema_args` builds the
arguments from the schema; :func:`call_each_tool` calls every tool offered, then answers.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
    ToolCallBlock,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.tools import BaseTool
from pydantic import PrivateAttr

from trilha.testing.schema_args import ToolSpec, arguments, spec_name

Script = Callable[[Sequence[ChatMessage], Sequence[ToolSpec]], ChatMessage]


@dataclass(frozen=True)
class Call:
    """One chat request the LLM got: the messages and the tools offered (their specs)."""

    messages: list[ChatMessage]
    specs: list[ToolSpec]

    @property
    def tools(self) -> list[str]:
        """The names of the tools offered."""
        return [spec_name(s) for s in self.specs]

    @property
    def system(self) -> str:
        """The system prompt ('' when none)."""
        return next((m.content or "" for m in self.messages if m.role == MessageRole.SYSTEM), "")

    def text(self) -> str:
        """Every message's text, joined: what the model was shown."""
        return "\n".join(m.content or "" for m in self.messages)


def call_tool(name: str, **kwargs: Any) -> ChatMessage:
    """An assistant message calling tool ``name`` with ``kwargs``."""
    block = ToolCallBlock(tool_call_id=f"call-{name}", tool_name=name, tool_kwargs=kwargs)
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=[block])


def last_question(messages: Sequence[ChatMessage]) -> str:
    """The text of the last user message."""
    return next((m.content or "" for m in reversed(messages) if m.role == MessageRole.USER), "")


def since_question(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages after the last user message."""
    users = [i for i, m in enumerate(messages) if m.role == MessageRole.USER]
    return list(messages[users[-1] + 1 :] if users else messages)


def tool_texts(messages: Sequence[ChatMessage]) -> list[str]:
    """The tool results after the last user message, oldest first."""
    return [m.content or "" for m in since_question(messages) if m.role == MessageRole.TOOL]


def called(messages: Sequence[ChatMessage], tool: str) -> bool:
    """Whether the assistant called ``tool`` after the last user message."""
    return any(
        isinstance(b, ToolCallBlock) and b.tool_name == tool
        for m in since_question(messages)
        for b in m.blocks
    )


_ITEM = re.compile(r"^\[\d+\] \([a-z_]+\) (?P<text>.*)\n\s+source: (?P<source>.+)$", re.M)


def cited_answer(context: str, limit: int = 5) -> str:
    """Each item of a ``trilha_context`` text (first line, then its source), at most ``limit``."""
    items = [(m["text"], m["source"]) for m in _ITEM.finditer(context)][:limit]
    if not items:
        return "The context holds no answer to this question."
    return "\n".join(f"- {text[:120]} (source: {source})" for text, source in items)


def ask_then_cite(tool: str = "trilha_context") -> Script:
    """The script: call ``tool`` with arguments its schema asks for (the question for its
    required text), then answer citing what it returned."""

    def script(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ChatMessage:
        spec = next((s for s in tools if spec_name(s) == tool), None)
        if spec is not None and not called(messages, tool):
            return call_tool(tool, **arguments(spec, last_question(messages)))
        context = "\n".join(tool_texts(messages))
        return ChatMessage(role=MessageRole.ASSISTANT, content=cited_answer(context))

    return script


def tool_results(messages: Sequence[ChatMessage]) -> list[tuple[str, str]]:
    """``(tool name, text)`` of each tool result after the last user message, oldest first."""
    since = since_question(messages)
    names = {
        b.tool_call_id: b.tool_name for m in since for b in m.blocks if isinstance(b, ToolCallBlock)
    }
    return [
        (names.get(m.additional_kwargs.get("tool_call_id"), "?"), m.content or "")
        for m in since
        if m.role == MessageRole.TOOL
    ]


def answer_from(results: Sequence[tuple[str, str]]) -> str:
    """An answer from each tool's text: the cited items of a ``trilha_context`` text, else
    the text's first three lines (200 characters each), under the tool's name."""
    parts = []
    for name, text in results:
        if _ITEM.search(text):
            body = cited_answer(text)
        else:
            body = "\n".join(line[:200] for line in text.strip().splitlines()[:3])
        parts.append(f"{name}:\n{body}")
    return "\n".join(parts) or "No tool was called."


def call_each_tool(
    values: Mapping[str, Any] | None = None, skip: Sequence[str] = ("handoff",)
) -> Script:
    """The script: call each tool offered (except ``skip``), one a turn and in the order
    offered, with :func:`~trilha.testing.schema_args.arguments` built from its schema alone
    (``values`` by argument name), then answer from what they returned."""

    def script(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ChatMessage:
        question = last_question(messages)
        for spec in tools:
            name = spec_name(spec)
            if name not in skip and not called(messages, name):
                return call_tool(name, **arguments(spec, question, values))
        return ChatMessage(role=MessageRole.ASSISTANT, content=answer_from(tool_results(messages)))

    return script


class ScriptedLLM(FunctionCallingLLM):
    """A chat, function-calling LLM answering from ``script`` (default :func:`ask_then_cite`)."""

    _script: Script = PrivateAttr()
    _calls: list[Call] = PrivateAttr(default_factory=list)

    def __init__(self, script: Script | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._script = script or ask_then_cite()

    @classmethod
    def class_name(cls) -> str:
        return "ScriptedLLM"

    @property
    def calls(self) -> list[Call]:
        """Every chat request so far, in order."""
        return self._calls

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(is_chat_model=True, is_function_calling_model=True)

    def _answer(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        specs: list[ToolSpec] = list(kwargs.get("tools") or ())
        self._calls.append(Call(list(messages), specs))
        message = self._script(messages, specs)
        return ChatResponse(message=message, delta=message.content or "")

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._answer(messages, **kwargs)

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._answer(messages, **kwargs)

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        response = self._answer(messages, **kwargs)

        def one() -> Generator[ChatResponse, None, None]:
            yield response

        return one()

    @llm_chat_callback()
    async def astream_chat(
        self, messages: Sequence[ChatMessage], **kwargs: Any
    ) -> ChatResponseAsyncGen:
        response = self._answer(messages, **kwargs)

        async def one() -> AsyncGenerator[ChatResponse, None]:
            yield response

        return one()

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._answer([ChatMessage(content=prompt)]).delta or "")

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        done: CompletionResponse = self.complete(prompt)

        def one() -> Generator[CompletionResponse, None, None]:
            yield done

        return one()

    @llm_completion_callback()
    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        done: CompletionResponse = self.complete(prompt)
        return done

    @llm_completion_callback()
    async def astream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseAsyncGen:
        done: CompletionResponse = self.complete(prompt)

        async def one() -> AsyncGenerator[CompletionResponse, None]:
            yield done

        return one()

    def _prepare_chat_with_tools(
        self,
        tools: Sequence[BaseTool],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        messages = list(chat_history or [])
        if isinstance(user_msg, str):
            messages.append(ChatMessage(role=MessageRole.USER, content=user_msg))
        elif user_msg is not None:
            messages.append(user_msg)
        specs = [tool.metadata.to_openai_tool() for tool in tools]  # all a model is shown
        return {"messages": messages, "tools": specs, **kwargs}

    def get_tool_calls_from_response(
        self, response: ChatResponse, error_on_no_tool_call: bool = True, **kwargs: Any
    ) -> list[ToolSelection]:
        """The response's tool calls (none is fine: the agent then answers)."""
        blocks = [b for b in response.message.blocks if isinstance(b, ToolCallBlock)]
        return [
            ToolSelection(
                tool_id=b.tool_call_id or b.tool_name,
                tool_name=b.tool_name,
                tool_kwargs=b.tool_kwargs if isinstance(b.tool_kwargs, dict) else {},
            )
            for b in blocks
        ]
