"""RetrievalConfig (seed 004, "Key Entities"): limits, default strategies, the orchestrator's
defaults, and its scope merge.

One config is ``global``; an ``org`` and a ``user`` config may override any of its keys
(``(:Org)-[:HAS_RETRIEVAL_CONFIG]->(:RetrievalConfig)``, the same for ``:User``).
:func:`merge_configs` is the one place scopes meet: later scopes win key by key, and nested
blocks (``orchestrator:`` and its mappings) are merged key by key too. An override naming a key
the model lacks is refused; every merged result is validated again.

A ``search:`` block (merge, weights, sizes, cache), which no search ever read, is no longer part
of the config: a file that still has one is loaded without it, with one warning line saying
where those values live (settings and ``profiles/fusion.yaml``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, model_validator

from trilha.config.intents import Intent, Strategy
from trilha.config.messages import describe
from trilha.config.orchestration import OrchestratorDefaults
from trilha.errors import ConfigurationError
from trilha.graph.model import MAX_PROFILE_HOPS

log = logging.getLogger(__name__)

Scope = Literal["global", "org", "user"]
Override = Mapping[str, Any]

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
            source = (info.context or {}).get("source", "RetrievalConfig")
            log.warning("%s: %s", source, SEARCH_RETIRED)
            data = {k: v for k, v in data.items() if k != "search"}
        return data

    def strategy_for(self, intent: Intent) -> Strategy:
        """The default strategy configured for ``intent``."""
        strategy: Strategy = getattr(self, f"default_strategy_{intent}")
        return strategy


def merge_configs(
    global_: RetrievalConfig, org: Override | None = None, user: Override | None = None
) -> RetrievalConfig:
    """The effective config: ``global_``, then ``org``'s keys, then ``user``'s keys.

    ``org`` and ``user`` are partial configs (any subset of the keys, nested ones included); a
    key they leave out keeps the earlier scope's value. An override with an unknown key, a bad
    value or another scope raises :class:`ConfigurationError`.
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
        return RetrievalConfig.model_validate(merged, context={"source": source})
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
