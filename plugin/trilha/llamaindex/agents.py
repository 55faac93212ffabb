"""Seed 004's Knowledge, Task and User agents as LlamaIndex ``FunctionAgent`` s.

Each agent is built from its :class:`~trilha.config.AgentSpec` (``agents/*.yaml``, or the
workspace's ``agents/`` folder) for one user and conversation: its tools are the ones the spec
names, all bound to the principal the orchestrator resolves from ``user_id``. No tool takes a
user, principal, role or project argument, so the LLM cannot widen what it sees. The
``trilha_context`` tool asks the orchestrator (the ContextBundle is the tool's ``raw_output``,
its cited items the text the LLM reads) with the agent's short name as ``agent_type``, so the
orchestrator shapes the bundle's instructions with that agent's answer style.

:func:`build_workflow` puts the agents in one ``AgentWorkflow`` whose root is the agent the
Agent Router picks (:mod:`trilha.llamaindex.agent_router`); every agent may hand off to the
others.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from llama_index.core.agent.workflow import AgentWorkflow, BaseWorkflowAgent, FunctionAgent
from llama_index.core.llms import LLM
from llama_index.core.tools import BaseTool

from trilha.config import AgentSpec
from trilha.errors import ConfigurationError
from trilha.llamaindex.context import context_tool
from trilha.llamaindex.search_tool import SEARCH_TOOL_NAME, search_tool
from trilha.llamaindex.tools import graph_tools
from trilha.orchestrate import Orchestrator

logger = logging.getLogger(__name__)

#: The name of the orchestrator's tool in agent specs.
CONTEXT_TOOL_NAME = "trilha_context"


def agent_tools(
    orchestrator: Orchestrator,
    spec: AgentSpec,
    *,
    user_id: str,
    conversation_id: str,
    project_id: str | None = None,
) -> list[BaseTool]:
    """The tools ``spec`` names, in its order, acting for ``user_id`` (its principal comes from
    the orchestrator's directory; an unknown user is a :class:`BadRequestError`). Graph tools
    are left out, with a warning, when the workspace has no graph."""
    principal = orchestrator.principal_for(user_id)
    workspace = orchestrator.workspace
    made: dict[str, BaseTool] = {}
    if CONTEXT_TOOL_NAME in spec.tools:
        made[CONTEXT_TOOL_NAME] = context_tool(
            orchestrator,
            user_id=user_id,
            conversation_id=conversation_id,
            project_id=project_id,
            agent_type=spec.agent_type,
        )
    if SEARCH_TOOL_NAME in spec.tools:
        made[SEARCH_TOOL_NAME] = search_tool(workspace, principal)
    wanted_graph = [t for t in spec.tools if t.startswith("trilha_graph_")]
    if wanted_graph and workspace.graph is None:
        logger.warning("%s: no graph in this workspace; %s left out", spec.name, wanted_graph)
    elif wanted_graph:
        made.update({t.metadata.get_name(): t for t in graph_tools(workspace, principal)})
    return [made[name] for name in spec.tools if name in made]


def system_prompt(spec: AgentSpec, others: Mapping[str, AgentSpec] | None = None) -> str:
    """The agent's system prompt: its role and style, how to use the tools and cite, the
    language rule, its own ``instructions``, and the agents it may hand off to."""
    lines = [
        f"You are {spec.name}: {spec.description}",
        f"Answer style: {spec.answer_style}.",
    ]
    if CONTEXT_TOOL_NAME in spec.tools:
        lines.append(
            f"First call {CONTEXT_TOOL_NAME} with the user's question; it returns the context "
            "items this user may see, each followed by its source."
        )
    lines += [
        "Answer only from what the tools return; when they do not hold the answer, say so.",
        "Cite every statement with the source of the item it comes from.",
        "Answer in the language of the question.",
    ]
    if spec.instructions:
        lines.append(spec.instructions)
    handoffs = [o for name, o in (others or {}).items() if name != spec.name]
    if handoffs:
        lines.append("Hand the question off when another agent is meant for it:")
        lines += [f"- {o.name}: {o.description}" for o in handoffs]
    return "\n".join(lines)


def build_agent(
    orchestrator: Orchestrator,
    spec: AgentSpec,
    llm: LLM,
    *,
    user_id: str,
    conversation_id: str,
    project_id: str | None = None,
    can_handoff_to: list[str] | None = None,
    streaming: bool = True,
) -> FunctionAgent:
    """A ``FunctionAgent`` named ``spec.name`` with :func:`agent_tools` for ``user_id`` and the
    :func:`system_prompt` of the spec; ``can_handoff_to`` as LlamaIndex takes it (None: every
    other agent of the workflow)."""
    agents = orchestrator.config.agents
    names = list(agents) if can_handoff_to is None else can_handoff_to
    others = {n: agents[n] for n in names if n in agents}
    tools = agent_tools(
        orchestrator, spec, user_id=user_id, conversation_id=conversation_id, project_id=project_id
    )
    return FunctionAgent(
        name=spec.name,
        description=spec.description,
        system_prompt=system_prompt(spec, others),
        tools=tools,
        llm=llm,
        can_handoff_to=can_handoff_to,
        streaming=streaming,
    )


def build_workflow(
    orchestrator: Orchestrator,
    llm: LLM,
    *,
    user_id: str,
    conversation_id: str,
    root: str,
    project_id: str | None = None,
    **workflow: Any,
) -> AgentWorkflow:
    """An ``AgentWorkflow`` over every agent of ``orchestrator.config.agents``, all for
    ``user_id``, starting at agent ``root`` (the Agent Router's choice); each agent may hand
    off to the others. ``workflow`` goes to ``AgentWorkflow`` (``timeout``, ``verbose``...)."""
    agents = orchestrator.config.agents
    if root not in agents:
        known = ", ".join(sorted(agents)) or "none"
        raise ConfigurationError(f"root agent {root!r} is not defined (agents: {known})")
    built: list[BaseWorkflowAgent] = [
        build_agent(
            orchestrator,
            spec,
            llm,
            user_id=user_id,
            conversation_id=conversation_id,
            project_id=project_id,
            can_handoff_to=[n for n in agents if n != spec.name],
        )
        for spec in agents.values()
    ]
    return AgentWorkflow(agents=built, root_agent=root, **workflow)
