"""Agent definitions (seed 004's Knowledge, Task and User agents) shipped as data."""

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
]

#: Every tool an agent may name.
TOOL_NAMES: tuple[ToolName, ...] = get_args(ToolName)


class AgentSpec(BaseModel):
    """One agent: what it answers, its default intent, the tools it may call, its style."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="Agent name, unique.")
    description: str = Field(min_length=1, description="What the agent answers.")
    default_intent: Intent = Field(description="Intent assumed when Pre-Query finds none.")
    tools: tuple[ToolName, ...] = Field(min_length=1, description="Tools the agent may call.")
    answer_style: str = Field(min_length=1, description="How the agent shapes its answer.")
