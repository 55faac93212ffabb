"""Agent definitions (seed 004's Knowledge, Task and User agents) shipped as data.

An agent names the intents it answers (``default_intent`` and any further ``intents``): the
Agent Router (:mod:`trilha.llamaindex.agent_router`) hands a question to the agent whose intents
hold the question's Pre-query intent.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from trilha.config.intents import Intent

ToolName = Literal[
    "trilha_search",
    "trilha_graph_subgraph",
    "trilha_graph_path",
    "trilha_graph_topn",
    "trilha_graph_mermaid",
    "trilha_graph_context",
    "trilha_context",
]

#: Every tool an agent may name.
TOOL_NAMES: tuple[ToolName, ...] = get_args(ToolName)


class AgentSpec(BaseModel):
    """One agent: what it answers, the intents routed to it, its tools, style and instructions."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="Agent name, unique.")
    description: str = Field(min_length=1, description="What the agent answers.")
    default_intent: Intent = Field(description="Intent assumed when Pre-Query finds none.")
    intents: tuple[Intent, ...] = Field(
        (), description="Further intents the Agent Router hands to this agent."
    )
    tools: tuple[ToolName, ...] = Field(min_length=1, description="Tools the agent may call.")
    answer_style: str = Field(min_length=1, description="How the agent shapes its answer.")
    instructions: str = Field("", description="Extra lines for the agent's system prompt.")

    @property
    def routed_intents(self) -> tuple[Intent, ...]:
        """``default_intent`` then ``intents``, each once."""
        return tuple(dict.fromkeys((self.default_intent, *self.intents)))

    @property
    def agent_type(self) -> str:
        """The short name a RetrievalRequest carries (``task`` for ``task_agent``)."""
        return self.name.removesuffix("_agent") or self.name
