"""How one hybrid search runs: its resolved parameters and each side's candidate count.

Candidate counts reconcile seeds 001 and 002: seed 002's ``k`` is the pool wanted before
rerank, split ``k_bm25 = k_vec = ceil(k/2)``; seed 001 has each side fetch ``top_k·3``, at most
100. Each side fetches ``max(top_k, min(cap, max(depth·top_k, ceil(k/2))))`` (depth 3 and
cap 100 unless tuned): the larger of the two seeds' asks, capped, but never fewer than ``top_k``
so that ``top_k`` results come back whenever ``top_k`` units match the filters.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, Field

from trilha.access.principal import Principal
from trilha.index.filters import FilterExpr
from trilha.retrieve.fusion import Weights
from trilha.types import Side


class SearchParams(BaseModel):
    """How one search runs, every value resolved (:func:`trilha.retrieve.plan.plan` makes it
    from a :class:`~trilha.request.SearchRequest`); defaults follow seeds 001 and 002."""

    top_k: int = Field(10, gt=0, le=10_000, description="Results returned.")
    candidates: int | None = Field(None, gt=0, description="Seed 002's k: pool before rerank.")
    merge: Literal["weighted", "rrf"] = Field("weighted", description="Merge strategy.")
    weights: Weights = Field(default_factory=Weights, description="Shares per signal.")
    rrf_k: int = Field(60, gt=0, description="RRF constant (1-based ranks).")
    candidate_cap: int = Field(100, gt=0, description="Per-side fetch cap.")
    depth_bm25: int = Field(3, ge=1, description="BM25 fetches depth·top_k (capped).")
    depth_semantic: int = Field(3, ge=1, description="Dense fetches depth·top_k (capped).")
    doc_penalty: float = Field(0.0, ge=0, lt=1, description="Per-doc duplicate decay.")
    signal: Literal["none", "peak"] = Field(
        "none", description="Query-time signal of the weighted merge (fusion.shaped)."
    )
    lang: str | None = Field(
        None, description="The query's language, when a per-language fusion entry picked it."
    )
    sides: tuple[Side, ...] = Field(("bm25", "semantic"), description="Sides that run.")
    kg: bool = Field(False, description="Add the knowledge-graph boost (needs a graph).")
    filters: FilterExpr | None = Field(None, description="Applied inside both indices.")
    principal: Principal = Field(
        default_factory=Principal.anonymous,
        description="Whose visibility applies, inside both indices (anonymous: public only).",
    )


def per_side_candidates(top_k: int, candidates: int | None, cap: int, depth: int = 3) -> int:
    """How many candidates a side fetches (module docstring explains the rule)."""
    want = max(depth * top_k, math.ceil(candidates / 2) if candidates else 0)
    return max(top_k, min(cap, want))
