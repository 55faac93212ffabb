"""The retrieval plan: which depth, sources, profile, strategy and budget one request gets.

* **Depth**: the request's, else the one the config maps the intent to.
* **Sources**: the depth plan's (``profiles/depth_plans.yaml``). ``reset`` (D4) leaves the
  conversation out; ``new_anchor`` walks the depth plan's own profile.
* **Profile** (REQ-RETR-022, :meth:`~trilha.config.ProfileSet.profile_for`): the one the
  profile map names for the intent; for an intent it does not name, the depth plan's suggested
  profile; none when the depth plan has none (D0). Its ``max_hops`` is capped by the config's
  ``max_depth``.
* **Strategy** (REQ-RETR-005): the request's; else, for a question about the state of work
  (pre-query found "overdue" or a status), the config's ``work_strategy``; else the config's
  default for the intent.
  ``graph_only`` and ``hybrid_semantic_graph`` walk the profile; every strategy but
  ``graph_only`` searches the documents when the depth reads semantic memory.
* **Budget**: the request's ``max_tokens``, else the depth plan's, never above the config's
  ``max_tokens_context``.
"""

from __future__ import annotations

from dataclasses import dataclass

from trilha.config import (
    DEPTH_LEVELS,
    DepthLevel,
    DepthPlans,
    MemorySource,
    ProfileSet,
    QueryProfile,
    RetrievalConfig,
    Strategy,
)
from trilha.orchestrate.prequery.model import PreQuery
from trilha.orchestrate.request import RetrievalRequest

_WALKS: frozenset[Strategy] = frozenset({"graph_only", "hybrid_semantic_graph"})


@dataclass(frozen=True)
class RetrievalPlan:
    """Everything the orchestrator runs for one request."""

    depth: DepthLevel
    sources: frozenset[MemorySource]
    profile: QueryProfile | None
    strategy: Strategy
    max_tokens: int

    @property
    def depth_number(self) -> int:
        """D0 → 0 … D4 → 4."""
        return DEPTH_LEVELS.index(self.depth)

    @property
    def reads_conversation(self) -> bool:
        """Whether this conversation's turns and the caller's active items are read."""
        return "working_set" in self.sources and "reset" not in self.sources

    @property
    def reads_episodic(self) -> bool:
        """Whether earlier turns and past retrievals are read."""
        return "episodic" in self.sources

    @property
    def searches_documents(self) -> bool:
        """Whether document units are searched."""
        return "semantic" in self.sources and self.strategy != "graph_only"

    @property
    def walks_graph(self) -> bool:
        """Whether the profile is walked."""
        return self.profile is not None and (
            self.strategy in _WALKS or "new_anchor" in self.sources
        )

    @property
    def reads_claims(self) -> bool:
        """Whether claims are searched (REQ-RETR-030)."""
        return "claims" in self.sources


def plan_retrieval(
    request: RetrievalRequest,
    pre: PreQuery,
    *,
    config: RetrievalConfig,
    profiles: ProfileSet,
    depths: DepthPlans,
) -> RetrievalPlan:
    """The plan of ``request`` given what pre-query made of it (see the module docstring)."""
    intent = pre.retrieval_intent
    depth = request.depth or config.orchestrator.depth_by_intent[intent]
    level = depths.plan(depth)
    sources = frozenset(level.sources)
    profile = profiles.profile_for(intent, level)
    if profile is not None and profile.max_hops > config.max_depth:
        profile = profile.model_copy(update={"max_hops": config.max_depth})
    budget = min(request.max_tokens or level.max_tokens, config.max_tokens_context)
    return RetrievalPlan(
        depth=depth,
        sources=sources,
        profile=profile,
        strategy=request.strategy or _strategy(pre, config),
        max_tokens=budget,
    )


def _strategy(pre: PreQuery, config: RetrievalConfig) -> Strategy:
    work = config.orchestrator.work_strategy
    if work is not None and (pre.work.overdue or pre.work.statuses):
        return work
    return config.strategy_for(pre.retrieval_intent)
