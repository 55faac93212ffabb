"""Configuration as data: Query Profiles, depth plans, RetrievalConfig and agents (seed 004).

The YAML shipped in ``trilha.profiles`` and ``trilha.agents`` (or a file you pass, or a
workspace's own copies) is loaded into frozen pydantic models (:mod:`trilha.config.models`) and
checked once, against the graph model and against each other (:mod:`trilha.config.loader`).
"""

from trilha.config.loader import (
    OrchestratorConfig,
    apply_override,
    load_agents,
    load_depth_plans,
    load_profiles,
    load_retrieval_config,
    merge_configs,
)
from trilha.config.models import (
    DEPTH_LEVELS,
    INTENTS,
    STRATEGIES,
    TOOL_NAMES,
    AgentSpec,
    AnswerLength,
    DepthLevel,
    DepthPlan,
    DepthPlans,
    Instructions,
    Intent,
    MemoryClass,
    MemorySource,
    OrchestratorDefaults,
    ProfileSet,
    QueryProfile,
    RetrievalConfig,
    Scope,
    Strategy,
    ToolName,
)
from trilha.settings import Weights

__all__ = [
    "DEPTH_LEVELS",
    "INTENTS",
    "STRATEGIES",
    "TOOL_NAMES",
    "AgentSpec",
    "AnswerLength",
    "DepthLevel",
    "DepthPlan",
    "DepthPlans",
    "Instructions",
    "Intent",
    "MemoryClass",
    "MemorySource",
    "OrchestratorConfig",
    "OrchestratorDefaults",
    "ProfileSet",
    "QueryProfile",
    "RetrievalConfig",
    "Scope",
    "Strategy",
    "ToolName",
    "Weights",
    "apply_override",
    "load_agents",
    "load_depth_plans",
    "load_profiles",
    "load_retrieval_config",
    "merge_configs",
]
