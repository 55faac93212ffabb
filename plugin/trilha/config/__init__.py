"""Configuration as data: Query Profiles, depth plans, RetrievalConfig and agents (seed 004).

The YAML shipped in ``trilha.profiles`` and ``trilha.agents`` (or a file you pass) is loaded into
frozen pydantic models and checked once, against the graph model and against each other.
"""

from trilha.config.agents import TOOL_NAMES, AgentSpec, ToolName
from trilha.config.depth import DEPTH_LEVELS, DepthLevel, DepthPlan, DepthPlans, MemorySource
from trilha.config.intents import INTENTS, STRATEGIES, Intent, Strategy
from trilha.config.loader import (
    load_agents,
    load_depth_plans,
    load_profiles,
    load_retrieval_config,
)
from trilha.config.profiles import ProfileSet, QueryProfile
from trilha.config.retrieval import RetrievalConfig, Scope, apply_override, merge_configs
from trilha.settings import Weights

__all__ = [
    "DEPTH_LEVELS",
    "INTENTS",
    "STRATEGIES",
    "TOOL_NAMES",
    "AgentSpec",
    "DepthLevel",
    "DepthPlan",
    "DepthPlans",
    "Intent",
    "MemorySource",
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
