"""The sync entry points called from inside a running event loop, as a notebook cell calls them
(issue 31, item 4): they answer as they do from plain synchronous code."""

from __future__ import annotations

import asyncio
import contextvars
import threading

from llama_index.core.base.response.schema import Response

from tests.conftest import READER
from trilha.answer import ask
from trilha.llamaindex import TrilhaQueryEngine, TrilhaRetriever
from trilha.llamaindex.agent_router import AgentRouter
from trilha.llamaindex.agent_run import ask_agents
from trilha.orchestrate import Orchestrator
from trilha.sync_run import run_sync
from trilha.testing.scripted_llm import ScriptedLLM

US2 = "Quais tarefas da minha startup estão atrasadas?"
TRAVEL = "Qual é o prazo para pedir reembolso de despesas de viagem?"


async def test_sync_calls_work_inside_a_running_loop(agent_orch: Orchestrator) -> None:
    ws = agent_orch.workspace
    asyncio.get_running_loop()  # this test body runs on the loop, as a notebook cell does
    response = TrilhaQueryEngine(ws, principal=READER).query(TRAVEL)
    assert isinstance(response, Response) and response.metadata is not None
    assert response.metadata["no_answer"] is None and response.source_nodes
    answer = ask(ws, TRAVEL, principal=READER)
    assert answer.answered and answer.citations
    agents = ask_agents(
        agent_orch, ScriptedLLM(), US2, user_id="bruno.ti", conversation_id="c-loop"
    )
    assert agents.agent == "task_agent" and agents.bundles
    assert AgentRouter.of(agent_orch).decide(US2).agent.name == "task_agent"
    bundle = agent_orch.retrieve({"raw_query": US2, "user_id": "bruno.ti", "conversation_id": "c"})
    assert "Task:t-ropa" in {item.item_id for item in bundle.context_items}
    assert TrilhaRetriever(ws, principal=READER, top_k=2).retrieve(TRAVEL)
    await asyncio.sleep(0)  # the loop is still alive and usable


CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="none")


async def _where() -> tuple[str, str]:
    await asyncio.sleep(0)
    return CALLER.get(), threading.current_thread().name


async def _nested() -> tuple[str, str]:
    return run_sync(_where())  # sync code inside a coroutine run_sync is already running


def test_run_sync_without_a_loop_runs_here() -> None:
    CALLER.set("plain")
    assert run_sync(_where()) == ("plain", threading.current_thread().name)


async def test_run_sync_in_a_loop_keeps_the_context_and_nests() -> None:
    CALLER.set("cell")
    value, thread = run_sync(_where())
    assert value == "cell" and thread.startswith("trilha-sync")
    value, thread = run_sync(_nested())
    assert value == "cell" and thread.startswith("trilha-sync-nested")
