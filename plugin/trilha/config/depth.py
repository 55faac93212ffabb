"""Depth plans of the Context Depth Controller (seed 004, "Retrieval Plan por Nível CDC").

Each level D0–D4 names the memory sources to read, the Query Profile to use (or none) and the
token budget. A plan's profile must exist: pass the profile names as validation context
(``DepthPlans.model_validate(data, context={"profiles": names})``); the loader does.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

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
    max_tokens: int = Field(gt=0, description="Token budget of the context (REQ-RETR-029).")

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
