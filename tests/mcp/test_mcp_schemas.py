"""Every tool an MCP client lists has the schema and description of its LlamaIndex twin, and a
LlamaIndex ``FunctionAgent`` whose tools come from ``llama-index-tools-mcp`` answers through
trilha over MCP, driven by the schema-driven stand-in LLM."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx2
from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.tools import BaseTool
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.conftest import KEYS, McpService
from trilha.access import Principal
from trilha.llamaindex.ask_tool import ask_tool
from trilha.llamaindex.context import context_tool
from trilha.llamaindex.search_tool import search_tool
from trilha.llamaindex.tools import graph_tools
from trilha.mcp.server import build_server, fixed
from trilha.server.projects import Caller, Resolved
from trilha.testing.schema_args import ToolSpec, arguments, spec_name
from trilha.testing.scripted_llm import (
    ScriptedLLM,
    call_tool,
    called,
    last_question,
    tool_texts,
)

USER = "maria.cfo"
QUESTION = "Qual é o prazo para pedir reembolso de despesas de viagem?"


def twins(service: McpService, who: Principal) -> list[BaseTool]:
    """The LlamaIndex tools of the acme project, made as an agent makes them."""
    acme = next(p for p in service.projects if p.project_id == "acme")
    ws = acme.workspace
    return [
        search_tool(ws, who),
        context_tool(acme.orchestrator, user_id=USER, conversation_id="c-twin"),
        ask_tool(ws, who),
        *graph_tools(ws, who),
    ]


async def test_every_listed_tool_has_its_llamaindex_twins_schema(mcp_http: McpService) -> None:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEYS['maria']}"})
    async with http, Client(streamable_http_client(mcp_http.url, http_client=http)) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    acme = next(p for p in mcp_http.projects if p.project_id == "acme")
    expected = twins(mcp_http, acme.orchestrator.principal_for(USER))
    assert list(listed) == [t.metadata.get_name() for t in expected] and len(listed) == 8
    for twin in expected:
        spec = twin.metadata.to_openai_tool()["function"]
        mine = listed[spec["name"]]
        assert mine.input_schema == spec["parameters"], spec["name"]
        assert mine.description == spec["description"], spec["name"]
        assert all(p["description"] for p in mine.input_schema["properties"].values())


async def test_an_anonymous_caller_is_listed_the_same_schemas(mcp_http: McpService) -> None:
    acme = next(p for p in mcp_http.projects if p.project_id == "acme")
    seat = Resolved(acme, Principal(), Caller("acme", None))
    async with Client(build_server(fixed(seat))) as client:
        anonymous = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        refused = await client.call_tool("trilha_context", {"question": QUESTION})
    named = {t.metadata.get_name(): t.metadata.to_openai_tool()["function"]["parameters"]
             for t in twins(mcp_http, Principal())}  # fmt: skip
    assert anonymous == named
    assert refused.is_error and refused.content[0].text.startswith("trilha_context answers named")


def search_then_cite(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ChatMessage:
    """Call ``trilha_search`` with arguments built from its MCP-advertised schema, then answer
    with what it returned (a model reads an MCP tool's result as its text)."""
    spec = next(s for s in tools if spec_name(s) == "trilha_search")
    if not called(messages, "trilha_search"):
        return call_tool("trilha_search", **arguments(spec, last_question(messages)))
    return ChatMessage(role=MessageRole.ASSISTANT, content="\n".join(tool_texts(messages)))


async def test_a_function_agent_answers_through_mcp_tools(mcp_http: McpService) -> None:
    client = BasicMCPClient(mcp_http.url, headers={"X-API-Key": KEYS["bruno"]})
    tools = await McpToolSpec(client).to_tool_list_async()
    llm = ScriptedLLM(search_then_cite)
    agent = FunctionAgent(tools=tools, llm=llm, system_prompt="Answer from the tools; cite.")
    handler = agent.run(user_msg=QUESTION)
    results: list[Any] = [e async for e in handler.stream_events() if isinstance(e, ToolCallResult)]
    answer = str(await handler)
    [result] = results
    assert result.tool_name == "trilha_search" and not result.tool_output.is_error
    assert result.tool_kwargs == {"query": QUESTION, "top_k": 5, "lang": None, "tags": None}
    assert "financeiro/reembolso-despesas-viagem" in answer  # the travel refund manual, cited
    assert "finance/budget-memo-q3-2025" not in answer  # bruno.ti may not read the memo
    specs = llm.calls[0].specs
    mcp_search = next(s for s in specs if spec_name(s) == "trilha_search")
    assert set(mcp_search["function"]["parameters"]["properties"]) == {
        "query",
        "top_k",
        "lang",
        "tags",
    }
