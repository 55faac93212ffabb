"""One question through the agents: route it, run the workflow, keep what the tools returned.

>>> answer = ask_agents(orchestrator, llm, "Quais tarefas da minha startup estão atrasadas?",
...                     user_id="bruno.ti", conversation_id="c1")
>>> answer.route.agent.name, answer.text, [b.depth_used for b in answer.bundles]

:func:`aask_agents` is the async form; :func:`ask_agents` works inside a running event loop too
(a notebook cell), on a worker thread's loop, but ``await aask_agents(...)`` keeps the loop free.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llama_index.core.agent.workflow import (
    AgentInput,
    AgentOutput,
    AgentWorkflow,
    ToolCallResult,
)
from llama_index.core.llms import LLM
from llama_index.core.tools import ToolOutput

from trilha.llamaindex.agent_router import AgentRouter, Route
from trilha.llamaindex.agents import build_workflow
from trilha.orchestrate import ContextBundle, Orchestrator
from trilha.sync_run import run_sync


@dataclass(frozen=True)
class ToolResult:
    """One tool call an agent made and what it returned."""

    agent: str
    tool_name: str
    tool_kwargs: dict[str, Any]
    output: ToolOutput


@dataclass(frozen=True)
class AgentAnswer:
    """The workflow's answer to one question, with its route and every tool result."""

    question: str
    route: Route
    agent: str
    text: str
    tool_results: list[ToolResult] = field(default_factory=list)

    @property
    def bundles(self) -> list[ContextBundle]:
        """The ContextBundles the ``trilha_context`` calls returned, in call order."""
        return [
            r.output.raw_output
            for r in self.tool_results
            if isinstance(r.output.raw_output, ContextBundle)
        ]


async def aask_agents(
    orchestrator: Orchestrator,
    llm: LLM,
    question: str,
    *,
    user_id: str,
    conversation_id: str,
    project_id: str | None = None,
    router: AgentRouter | None = None,
    remember: bool = False,
    **workflow: Any,
) -> AgentAnswer:
    """Route ``question`` (``router``, default :meth:`AgentRouter.of` the orchestrator), run the
    agents' workflow for ``user_id`` from that agent and return the :class:`AgentAnswer`.
    ``remember`` stores the question and the answer as turns of the conversation in the
    orchestrator's memory. ``workflow`` goes to ``AgentWorkflow`` (``timeout``...)."""
    route = await (router or AgentRouter.of(orchestrator)).adecide(question)
    flow = build_workflow(
        orchestrator,
        llm,
        user_id=user_id,
        conversation_id=conversation_id,
        project_id=project_id,
        root=route.agent.name,
        **workflow,
    )
    output, results = await _run(flow, question, route.agent.name)
    answer = AgentAnswer(
        question, route, output.current_agent_name, output.response.content or "", results
    )
    if remember:
        _remember(orchestrator, answer, user_id, conversation_id, project_id)
    return answer


async def _run(
    flow: AgentWorkflow, question: str, root: str
) -> tuple[AgentOutput, list[ToolResult]]:
    """Run ``flow`` on ``question``; its final output and every tool result, with the agent
    that called it."""
    handler = flow.run(user_msg=question)
    current, results = root, []
    async for event in handler.stream_events():
        if isinstance(event, AgentInput):
            current = event.current_agent_name
        elif isinstance(event, ToolCallResult):
            results.append(
                ToolResult(current, event.tool_name, event.tool_kwargs, event.tool_output)
            )
    output: AgentOutput = await handler
    return output, results


def ask_agents(orchestrator: Orchestrator, llm: LLM, question: str, **options: Any) -> AgentAnswer:
    """:func:`aask_agents` from synchronous code, with or without a running event loop
    (:func:`~trilha.sync_run.run_sync`)."""
    return run_sync(aask_agents(orchestrator, llm, question, **options))


def _remember(
    orchestrator: Orchestrator,
    answer: AgentAnswer,
    user_id: str,
    conversation_id: str,
    project_id: str | None,
) -> None:
    memory = orchestrator.memory
    memory.record_turn(user_id, conversation_id, "user", answer.question, project_id=project_id)
    if answer.text:
        memory.record_turn(
            user_id, conversation_id, "assistant", answer.text, project_id=project_id
        )
