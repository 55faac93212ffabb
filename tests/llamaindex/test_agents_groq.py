"""The agents through the real Groq client of LlamaIndex (``llama-index-llms-groq``, over the
``openai`` SDK), against a local server speaking Groq's chat completions protocol."""

from __future__ import annotations

from typing import Any

import pytest

from trilha.llamaindex.agent_run import ask_agents
from trilha.orchestrate import Orchestrator
from trilha.testing.groq_server import GroqTestServer, Reply, ToolCall

groq_llms = pytest.importorskip("llama_index.llms.groq")

US2 = "Quais tarefas da minha startup estão atrasadas?"
ROPA = "source: Atualizar o registro de operações de tratamento (ROPA) (Task:t-ropa)"


def responder(request: dict[str, Any]) -> Reply:
    """Ask trilha_context for the user's question, then answer citing the first source."""
    messages = request["messages"]
    results = [m["content"] for m in messages if m["role"] == "tool"]
    if not results:
        question = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        return Reply(tool_calls=[ToolCall("trilha_context", {"question": question}, id="c1")])
    first = next(line.strip() for line in results[-1].splitlines() if "source:" in line)
    return Reply(content=f"A tarefa do ROPA está atrasada ({first}).")


def test_groq_client_runs_the_tool_and_answers(agent_orch: Orchestrator) -> None:
    with GroqTestServer(responder) as server:
        llm = groq_llms.Groq(
            model="llama-3.3-70b-versatile",
            api_key="test",
            api_base=server.openai_base_url,
            max_retries=0,
            timeout=20,
        )
        answer = ask_agents(agent_orch, llm, US2, user_id="bruno.ti", conversation_id="c-groq")
    first, second = server.requests
    assert first["model"] == "llama-3.3-70b-versatile" and first["stream"] is True
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in first["tools"]}
    assert set(offered) == {"trilha_context", "trilha_graph_subgraph", "trilha_graph_path",
                            "trilha_search", "handoff"}  # fmt: skip
    assert set(offered["trilha_context"]["properties"]) == {"question"}
    assert first["messages"][0]["content"].startswith("You are task_agent")
    [tool_message] = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool_message["tool_call_id"] == "c1" and ROPA in tool_message["content"]
    assert "Style: list of tasks with status and due date." in tool_message["content"]
    assert answer.text == f"A tarefa do ROPA está atrasada ({ROPA})."
    [bundle] = answer.bundles
    assert "Task:t-ropa" in {i.item_id for i in bundle.context_items}
