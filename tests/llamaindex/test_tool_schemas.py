"""Every trilha tool as a real model sees it (issue 31, item 3): its advertised JSON schema is
the arguments its function takes, each with a description, and every tool and every shipped
agent works when driven only through that schema, by :func:`call_each_tool`'s stand-in LLM."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.tools import BaseTool, FunctionTool, ToolMetadata
from pydantic import BaseModel, Field

from trilha.errors import BadRequestError
from trilha.llamaindex.agent_router import AgentRouter
from trilha.llamaindex.agent_run import ask_agents
from trilha.llamaindex.context import context_tool
from trilha.llamaindex.search_tool import search_tool
from trilha.llamaindex.tools import graph_tools
from trilha.orchestrate import Orchestrator
from trilha.testing.schema_args import arguments
from trilha.testing.scripted_llm import ScriptedLLM, call_each_tool

USER = "maria.cfo"
QUESTION = "Qual é o prazo para pedir reembolso de despesas de viagem?"
#: What a model would have read in the conversation, by argument name.
KNOWN = {
    "doc_id": "policy/protecao-dados-lgpd",
    "entity_names": ["LGPD"],
    "source_entity": "LGPD",
    "target_entity": "ANPD",
}


def all_tools(orch: Orchestrator) -> list[BaseTool]:
    """Every tool trilha makes, for one user."""
    who = orch.principal_for(USER)
    return [
        context_tool(orch, user_id=USER, conversation_id="c-schema"),
        search_tool(orch.workspace, who),
        *graph_tools(orch.workspace, who),
    ]


def checked_call(tool: BaseTool, values: dict[str, Any] | None = None) -> str:
    """Call ``tool`` sync and async with arguments made from its advertised schema alone;
    the sync call's text."""
    spec = tool.metadata.to_openai_tool()
    params = spec["function"]["parameters"]
    assert params["properties"], spec
    for name, prop in params["properties"].items():
        assert prop.get("description"), f"{spec['function']['name']}.{name} has no description"
    kwargs = arguments(spec, QUESTION, values)
    out = tool.call(**kwargs)
    later = asyncio.run(tool.acall(**kwargs))
    assert not out.is_error and not later.is_error and later.content
    return out.content


def test_every_tool_takes_what_its_schema_advertises(agent_orch: Orchestrator) -> None:
    tools = all_tools(agent_orch)
    assert len(tools) == 7
    for tool in tools:
        assert checked_call(tool, KNOWN), tool.metadata.name
    search = next(t for t in tools if t.metadata.name == "trilha_search")
    params = search.metadata.get_parameters_dict()
    assert set(params["properties"]) == {"query", "top_k", "lang", "tags"}
    assert params["required"] == ["query"]


def test_a_tool_whose_schema_disagrees_fails_the_check() -> None:
    def lookup(query: str) -> str:
        return query

    class Advertised(BaseModel):
        text: str = Field(description="What to look up.")

    wrong = FunctionTool.from_defaults(
        fn=lookup, name="lookup", description="Looks up.", fn_schema=Advertised
    )
    with pytest.raises(TypeError, match="'text'"):
        checked_call(wrong)
    fallback = FunctionTool.from_defaults(  # LlamaIndex's {"input": string}, undescribed
        fn=lookup, tool_metadata=ToolMetadata(name="lookup", description="Looks up.")
    )
    with pytest.raises(AssertionError, match=r"lookup\.input has no description"):
        checked_call(fallback)


def test_arguments_outside_the_schema_are_refused_in_one_line(agent_orch: Orchestrator) -> None:
    for tool in all_tools(agent_orch):
        kwargs = arguments(tool.metadata.to_openai_tool(), QUESTION, KNOWN)
        with pytest.raises(BadRequestError, match=f"^{tool.metadata.name}: user_id: extra"):
            tool.call(**kwargs, user_id="bruno.ti")


async def test_every_tool_through_a_function_agent(agent_orch: Orchestrator) -> None:
    tools = all_tools(agent_orch)
    llm = ScriptedLLM(call_each_tool(KNOWN))
    agent = FunctionAgent(tools=tools, llm=llm, system_prompt="Answer from the tools.")
    handler = agent.run(user_msg=QUESTION)
    results = [e async for e in handler.stream_events() if isinstance(e, ToolCallResult)]
    answer = str(await handler)
    assert [r.tool_name for r in results] == [t.metadata.name for t in tools]
    assert not [r.tool_name for r in results if r.tool_output.is_error]
    assert all(isinstance(spec, dict) for call in llm.calls for spec in call.specs)
    for tool in tools:
        assert f"{tool.metadata.name}:\n" in answer
    assert "(source: " in answer  # trilha_context's cited items
    assert "graph LR" in answer  # the mermaid tool's text


@pytest.mark.parametrize("agent", ["knowledge_agent", "task_agent", "user_agent"])
def test_each_shipped_agent_answers_through_its_schemas(
    agent_orch: Orchestrator, agent: str
) -> None:
    spec = agent_orch.config.agents[agent]
    llm = ScriptedLLM(call_each_tool(KNOWN))
    answer = ask_agents(
        agent_orch,
        llm,
        QUESTION,
        user_id=USER,
        conversation_id="c-schema",
        router=AgentRouter({agent: spec}),
    )
    assert answer.agent == agent
    assert [r.tool_name for r in answer.tool_results] == list(spec.tools)
    assert not [r.tool_name for r in answer.tool_results if r.output.is_error]
    assert llm.calls[0].tools[: len(spec.tools)] == list(spec.tools)
    assert all(f"{name}:\n" in answer.text for name in spec.tools)
    [bundle] = answer.bundles
    assert any(item.citation.label in answer.text for item in bundle.context_items)
