"""RetrievalConfig (seed 004, "Key Entities") with the search defaults, and its scope merge.

One config is ``global``; an ``org`` and a ``user`` config may override any of its keys
(``(:Org)-[:HAS_RETRIEVAL_CONFIG]->(:RetrievalConfig)``, the same for ``:User``).
:func:`merge_configs` is the one place scopes meet: later scopes win key by key, and the nested
``search:`` block (with its ``weights``) is merged key by key too, so a user who sets only
``search.top_k`` keeps the org's ``search.weights``. An override naming a key the model lacks is
refused; every merged result is validated again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from trilha.config.intents import Intent, Strategy
from trilha.config.messages import describe
from trilha.config.orchestration import OrchestratorDefaults
from trilha.errors import ConfigurationError
from trilha.graph.model import MAX_PROFILE_HOPS
from trilha.settings import MergeMode

Scope = Literal["global", "org", "user"]
Override = Mapping[str, Any]


class Weights(BaseModel):
    """Shares of the weighted merge (seed 001): BM25, semantic and knowledge graph."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bm25: float = Field(ge=0, description="Share of the normalised BM25 score.")
    semantic: float = Field(ge=0, description="Share of the normalised cosine.")
    kg: float = Field(ge=0, description="Share of the knowledge-graph boost.")

    @model_validator(mode="after")
    def _not_all_zero(self) -> Weights:
        if self.bm25 + self.semantic + self.kg <= 0:
            raise ValueError("at least one weight must be above 0")
        return self


class SearchDefaults(BaseModel):
    """The ``search:`` block: merge, weights, pool sizes, rerank cut and cache lifetime."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    merge: MergeMode = Field(description="'weighted' (min-max) or 'rrf'.")
    weights: Weights = Field(description="Shares of the weighted merge.")
    rrf_k: int = Field(gt=0, description="RRF constant, applied to 1-based ranks.")
    top_k: int = Field(gt=0, description="Results returned.")
    candidates: int = Field(gt=0, description="Pool before rerank (seed 002 k).")
    candidate_cap: int = Field(gt=0, description="Per-side fetch cap (seed 001: 100).")
    rerank_top_n: int = Field(gt=0, description="Results kept after reranking.")
    cache_ttl_s: float = Field(ge=0, description="Lifetime of a cached result, seconds.")

    @model_validator(mode="after")
    def _pool_holds_results(self) -> SearchDefaults:
        if self.candidates < self.top_k:
            raise ValueError(f"candidates ({self.candidates}) must be ≥ top_k ({self.top_k})")
        return self


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
    search: SearchDefaults = Field(description="Search defaults.")
    orchestrator: OrchestratorDefaults = Field(description="How bundles are filled.")

    def strategy_for(self, intent: Intent) -> Strategy:
        """The default strategy configured for ``intent``."""
        strategy: Strategy = getattr(self, f"default_strategy_{intent}")
        return strategy


def merge_configs(
    global_: RetrievalConfig, org: Override | None = None, user: Override | None = None
) -> RetrievalConfig:
    """The effective config: ``global_``, then ``org``'s keys, then ``user``'s keys.

    ``org`` and ``user`` are partial configs (any subset of the keys, ``search:`` and its
    ``weights`` included); a key they leave out keeps the earlier scope's value. An override
    with an unknown key, a bad value or another scope raises :class:`ConfigurationError`.
    """
    if global_.scope != "global":
        raise ConfigurationError(
            f"merge_configs: global_ has scope {global_.scope!r}, not 'global'"
        )
    merged = global_
    scopes: tuple[tuple[Scope, Override | None], ...] = (("org", org), ("user", user))
    for scope, changes in scopes:
        if changes is not None:
            merged = apply_override(merged, changes, scope, source=f"{scope} override")
    return merged


def apply_override(
    base: RetrievalConfig, changes: Override, scope: Scope, *, source: str
) -> RetrievalConfig:
    """``base`` with ``changes`` laid over it key by key, as a config of ``scope``.

    ``source`` names the override in error messages (a file name, or ``'user override'``).
    """
    if changes.get("scope", scope) != scope:
        raise ConfigurationError(f"{source}: scope: is {changes['scope']!r}; expected {scope!r}")
    merged = _deep_merge(base.model_dump(), {**changes, "scope": scope})
    try:
        return RetrievalConfig.model_validate(merged)
    except ValidationError as e:
        raise ConfigurationError(f"{source}: {describe(e)}") from e


def _deep_merge(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in changes.items():
        old = merged.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            merged[key] = _deep_merge(old, value)
        else:
            merged[key] = value
    return merged
