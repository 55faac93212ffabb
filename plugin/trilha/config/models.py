"""The models of seed 004's configuration, as the YAML shipped in ``trilha.profiles`` and
``trilha.agents`` holds it: frozen pydantic models, unknown keys refused, each checked once when
it is built (:mod:`trilha.config.loader` reads the files into them).

* **Vocabularies** (closed sets; a YAML naming anything else is refused). An intent is what the
  Pre-Query step decides a question is about (REQ-RETR-002: ``factual``, ``graph_insight``,
  ``orientation``) or the intent a Query Profile serves (``organizational``, ``procedural``,
  ``strategic``). A strategy is how retrieval runs (REQ-RETR-004): ``semantic_only`` (dense),
  ``keyword_only`` (BM25), ``graph_only`` (the profile's graph walk), ``hybrid_semantic_graph``
  (BM25 ∪ dense with the KG boost, and the walk) and ``vector_rag`` (BM25 ∪ dense, reranked).
  Depth levels D0–D4, memory sources and classes, agent tools.
* **Depth plans** of the Context Depth Controller ("Retrieval Plan por Nível CDC"): each level
  names the memory sources to read, the Query Profile to use (or none) and the token budget. A
  plan's profile must exist: pass the profile names as validation context
  (``DepthPlans.model_validate(data, context={"profiles": names})``); the loader does.
* **Query Profiles** ("Integração com Query Profiles") and the intent → profile map. A profile
  says where a graph walk starts (``anchors``, node labels), which relationship types it may
  follow (``allowed_rels``), how far (``max_hops``) and whether the temporal filter applies.
  Labels and relationship types are checked against the one graph model
  (:mod:`trilha.graph.model`) and used as they are, with no aliases: they go verbatim into the
  Cypher the graph runs and match the ids ``trilha graph`` prints (``Doc:…``). Seed 004's
  "Document" and "Organization" are refused with a hint naming the model's label.
  :meth:`ProfileSet.profile_for` is the one choice of the profile a walk uses.
* **RetrievalConfig** ("Key Entities"): limits, default strategies per intent, and its
  ``orchestrator:`` block, how the Retrieval Orchestrator fills a ContextBundle (depth per
  intent, how much each source brings, which memory classes win when the token budget is tight,
  what marks a document as procedural, the instructions handed to the caller's LLM; nothing of
  this is written in the orchestrator's code). One config is ``global``; ``org`` and ``user``
  configs override it key by key (:func:`trilha.config.loader.merge_configs`).
* **Agents** (the Knowledge, Task and User agents): the intents each answers (``default_intent``
  and any further ``intents``; the Agent Router, :mod:`trilha.llamaindex.agent_router`, hands a
  question to the agent whose intents hold its Pre-query intent), tools, style, instructions.

Retired keys load without them, with one warning line each saying what to do: a profile's
``require_rbac`` (the caller's visibility filter applies to every walk whatever a profile says,
so ``false`` could only be a lie), the profile set's ``default_profile`` (an intent the map does
not name walks its depth plan's profile) and RetrievalConfig's ``search:`` block (no search read
it; those values are settings and ``profiles/fusion.yaml``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from trilha.graph.model import EDGE_SPECS, MAX_PROFILE_HOPS, NODE_SPECS

log = logging.getLogger(__name__)

# Vocabularies

Intent = Literal[
    "factual", "graph_insight", "orientation", "organizational", "procedural", "strategic"
]
Strategy = Literal[
    "semantic_only", "keyword_only", "graph_only", "hybrid_semantic_graph", "vector_rag"
]

#: Every intent, in declaration order.
INTENTS: tuple[Intent, ...] = get_args(Intent)
#: Every strategy, in declaration order.
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)

# Depth plans

DepthLevel = Literal["D0", "D1", "D2", "D3", "D4"]
MemorySource = Literal[
    "working_set", "episodic", "semantic", "procedural", "claims", "reset", "new_anchor"
]

#: Every depth level, shallowest first.
DEPTH_LEVELS: tuple[DepthLevel, ...] = get_args(DepthLevel)


class DepthPlan(BaseModel):
    """What one depth level reads, with which profile, within how many tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sources: tuple[MemorySource, ...] = Field(min_length=1, description="Memory sources read.")
    profile: str | None = Field(description="Query Profile used, or null for none.")
    max_tokens: int = Field(gt=0, description="Token budget of the context.")  # REQ-RETR-029

    @field_validator("profile")
    @classmethod
    def _profile_exists(cls, name: str | None, info: ValidationInfo) -> str | None:
        known = (info.context or {}).get("profiles")
        if name is not None and known is not None and name not in known:
            raise ValueError(f"no profile named {name!r} (known: {', '.join(known)})")
        return name


class DepthPlans(BaseModel):
    """The contents of ``depth_plans.yaml``: one plan for every level D0–D4."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    levels: dict[DepthLevel, DepthPlan] = Field(description="The plan of each depth level.")

    @model_validator(mode="after")
    def _every_level(self) -> DepthPlans:
        missing = [level for level in DEPTH_LEVELS if level not in self.levels]
        if missing:
            raise ValueError(f"levels: no plan for {', '.join(missing)}")
        return self

    def plan(self, level: DepthLevel) -> DepthPlan:
        """The plan of ``level``."""
        return self.levels[level]


# Query Profiles

#: Seed 004's words for labels the model names differently (used for hints, never accepted).
SEED_LABELS: dict[str, str] = {"Document": "Doc", "Organization": "Org"}

_NAME = r"^[a-z][a-z0-9_]*$"

#: What a file still setting a retired key is told.
RBAC_RETIRED = (
    "require_rbac is ignored: the caller's visibility filter applies to every walk whatever a "
    "profile says (REQ-RETR-024; no principal reads as anonymous, never as everyone); remove it"
)
DEFAULT_PROFILE_RETIRED = (
    "default_profile is ignored: an intent the intent_map does not name walks its depth plan's "
    "profile (depth_plans.yaml); name the intent in intent_map to choose its profile, and "
    "remove the key"
)


_RBAC = "require_rbac"


def _without(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != key}


def _source(info: ValidationInfo, default: str) -> str:
    return str((info.context or {}).get("source", default))


def _known_label(label: str) -> str:
    if label in NODE_SPECS:
        return label
    if label in SEED_LABELS:
        raise ValueError(f"unknown node label {label!r}; the model calls it {SEED_LABELS[label]!r}")
    raise ValueError(f"unknown node label {label!r} (labels: {', '.join(NODE_SPECS)})")


def _known_rel(rel_type: str) -> str:
    if rel_type in EDGE_SPECS:
        return rel_type
    raise ValueError(f"unknown relationship type {rel_type!r} (types: {', '.join(EDGE_SPECS)})")


NodeLabel = Annotated[str, AfterValidator(_known_label)]
RelType = Annotated[str, AfterValidator(_known_rel)]


class QueryProfile(BaseModel):
    """One Query Profile: anchors, allowed relationships, hop limit and required filters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=_NAME, description="Profile name (its key in the YAML).")
    intent: Intent = Field(description="The intent this profile serves.")
    anchors: tuple[NodeLabel, ...] = Field(
        min_length=1, description="Node labels a walk may start from."
    )
    allowed_rels: tuple[RelType, ...] = Field(
        min_length=1, description="Relationship types a walk may follow."
    )
    max_hops: int = Field(ge=1, le=MAX_PROFILE_HOPS, description="Deepest walk, in hops.")
    require_validity: bool = Field(description="Apply the temporal filter.")  # REQ-RETR-025

    @model_validator(mode="before")
    @classmethod
    def _retired_rbac(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, Mapping) and _RBAC in data:
            log.warning("%s: %s", _source(info, "QueryProfile"), RBAC_RETIRED)
            data = _without(data, _RBAC)
        return data


class ProfileSet(BaseModel):
    """The contents of ``query_profiles.yaml``: the profiles and the intent map."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    profiles: dict[str, QueryProfile] = Field(
        min_length=1, description="Profiles by name; each body's name is its key."
    )
    intent_map: dict[Intent, str] = Field(
        default_factory=dict, description="Profile name chosen for each intent."
    )

    @model_validator(mode="before")
    @classmethod
    def _retired_keys(cls, data: Any, info: ValidationInfo) -> Any:
        """Drop the retired keys, one warning line each (not one per profile)."""
        if not isinstance(data, Mapping):
            return data
        source = _source(info, "ProfileSet")
        if "default_profile" in data:
            log.warning("%s: %s", source, DEFAULT_PROFILE_RETIRED)
            data = _without(data, "default_profile")
        bodies = data.get("profiles")
        if isinstance(bodies, Mapping):
            setting = [n for n, b in bodies.items() if isinstance(b, Mapping) and _RBAC in b]
            if setting:
                named = ", ".join(map(str, setting))
                log.warning("%s: profiles %s: %s", source, named, RBAC_RETIRED)
                profiles = {n: _without(b, _RBAC) if n in setting else b for n, b in bodies.items()}
                data = {**data, "profiles": profiles}
        return data

    @field_validator("profiles", mode="before")
    @classmethod
    def _name_from_key(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        return {
            key: {"name": key, **body} if isinstance(body, Mapping) else body
            for key, body in value.items()
        }

    @model_validator(mode="after")
    def _names_exist(self) -> ProfileSet:
        known = ", ".join(self.profiles)
        for name, profile in self.profiles.items():
            if profile.name != name:
                raise ValueError(f"profiles.{name}.name: is {profile.name!r}; it must be {name!r}")
        for intent, name in self.intent_map.items():
            if name not in self.profiles:
                raise ValueError(f"intent_map.{intent}: no profile named {name!r} (known: {known})")
        return self

    def profile_for(self, intent: Intent, depth: DepthPlan) -> QueryProfile | None:
        """The profile walked for ``intent`` at ``depth`` (REQ-RETR-022): none when the depth
        plan names none (D0); the depth plan's own when it reads a new anchor (D4); else the one
        the intent map names for ``intent``, else the depth plan's."""
        if depth.profile is None:
            return None
        named = depth.profile if "new_anchor" in depth.sources else self.intent_map.get(intent)
        return self.profiles[named or depth.profile]


# RetrievalConfig and its orchestrator: block

MemoryClass = Literal["working_set", "episodic", "semantic", "procedural", "claims"]
AnswerLength = Literal["short", "list", "long"]


class Instructions(BaseModel):
    """Instructions for the caller's LLM (``llm_instructions``): always, then by answer length
    and by language. ``{budget}`` and ``{style}`` are filled in."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    always: tuple[str, ...] = Field(description="Given with every bundle.")
    length: dict[AnswerLength, str] = Field(description="By the answer length asked for.")
    language: dict[str, str] = Field(description="By the question's language code.")


class OrchestratorDefaults(BaseModel):
    """How the orchestrator builds a bundle, per scope (merged like the rest of the config)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    depth_by_intent: dict[Intent, DepthLevel] = Field(
        description="Depth used for an intent when the request names none."
    )
    class_priority: tuple[MemoryClass, ...] = Field(
        min_length=5, max_length=5, description="Memory classes, kept first when tokens run out."
    )
    min_item_tokens: int = Field(gt=0, description="An item is cut, not dropped, above this.")
    semantic_top_k: int = Field(gt=0, description="Document units asked of the searcher.")
    graph_limit: int = Field(gt=0, description="Graph nodes asked of the profile walk.")
    claims_limit: int = Field(gt=0, description="Claims asked for at D3.")
    recent_jobs: int = Field(ge=0, description="Past retrieval jobs read as episodic memory.")
    memory_share: float = Field(
        gt=0, le=1, description="Share of the token budget conversation memory may take."
    )
    work_strategy: Strategy | None = Field(
        description="Strategy for a question about the state of work (overdue or a status asked"
        " for), unless the request names one; null: the intent's default."
    )
    priority_intents: tuple[Intent, ...] = Field(  # REQ-RETR-019
        description="Intents whose questions also read priority items."
    )
    procedural_labels: tuple[str, ...] = Field(
        description="Graph labels whose nodes are procedural memory (tasks, processes...)."
    )
    working_set_profile: str = Field(
        description="Profile walked for the caller's active items (the working set)."
    )
    procedural_markers: tuple[str, ...] = Field(
        description="A document whose tags or title hold one of these is procedural."
    )
    active_statuses: tuple[str, ...] = Field(
        description="Statuses of the caller's work items that belong to the working set."
    )
    instructions: Instructions = Field(description="Instructions for the caller's LLM.")

    @model_validator(mode="after")
    def _complete(self) -> OrchestratorDefaults:
        missing = [i for i in INTENTS if i not in self.depth_by_intent]
        if missing:
            raise ValueError(f"depth_by_intent: no depth for {', '.join(missing)}")
        if len(set(self.class_priority)) != len(self.class_priority):
            raise ValueError("class_priority: name each memory class once")
        return self


Scope = Literal["global", "org", "user"]

#: What a retired ``search:`` block is told.
SEARCH_RETIRED = (
    "search: is ignored (no search read it): results and pools are settings (TRILHA_TOP_K, "
    "TRILHA_CANDIDATE_CAP, TRILHA_RERANK_TOP_N, TRILHA_RESULT_CACHE_TTL_S) and the fusion is "
    "profiles/fusion.yaml or TRILHA_MERGE, TRILHA_WEIGHT_*, TRILHA_RRF_K; remove the block"
)


class RetrievalConfig(BaseModel):
    """Limits and per-intent default strategies of one scope (REQ-RETR-005, REQ-RETR-015)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, description="Config id.")
    scope: Scope = Field(description="'global', 'org' or 'user'.")
    max_depth: int = Field(ge=1, le=MAX_PROFILE_HOPS, description="Deepest graph walk.")
    max_nodes_scanned: int = Field(gt=0, description="Nodes a retrieval may scan.")
    max_results: int = Field(gt=0, description="Items a retrieval may return.")
    max_tokens_context: int = Field(gt=0, description="Token budget of the context.")
    default_strategy_factual: Strategy = Field(description="Strategy for 'factual'.")
    default_strategy_graph_insight: Strategy = Field(description="Strategy for 'graph_insight'.")
    default_strategy_orientation: Strategy = Field(description="Strategy for 'orientation'.")
    default_strategy_organizational: Strategy = Field(description="Strategy for 'organizational'.")
    default_strategy_procedural: Strategy = Field(description="Strategy for 'procedural'.")
    default_strategy_strategic: Strategy = Field(description="Strategy for 'strategic'.")
    orchestrator: OrchestratorDefaults = Field(description="How bundles are filled.")

    @model_validator(mode="before")
    @classmethod
    def _retired_search(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, Mapping) and "search" in data:
            log.warning("%s: %s", _source(info, "RetrievalConfig"), SEARCH_RETIRED)
            data = _without(data, "search")
        return data

    def strategy_for(self, intent: Intent) -> Strategy:
        """The default strategy configured for ``intent``."""
        strategy: Strategy = getattr(self, f"default_strategy_{intent}")
        return strategy


# Agents

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
