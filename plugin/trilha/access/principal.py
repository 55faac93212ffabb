"""Who is asking: the :class:`Principal` every read is made for.

A principal carries what the visibility policy (:mod:`trilha.access.policy`) needs and nothing
else: the user, the organisations and projects they belong to, their roles or groups (matched
against an item's ACL), their hierarchy level and their clearance (the highest sensitivity they
may read). No principal means :meth:`Principal.anonymous`, who sees public items of sensitivity 0
at hierarchy level 0 only: a read never defaults to "everything".
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trilha.types import OPEN_ACL

_NAME = re.compile(r"^[^\x00-\x1f\x7f]+$")


def _names(values: list[str], what: str) -> list[str]:
    for v in values:
        if not v.strip() or not _NAME.match(v):
            raise ValueError(f"has an empty or control-character {what}: {v!r}")
        if v == OPEN_ACL:
            raise ValueError(f"{OPEN_ACL!r} is not a valid {what}; name a real one")
    return sorted(set(values))


class Principal(BaseModel):
    """A user (or service) and the attributes visibility is decided on.

    ``hierarchy_level`` grows with seniority: an item of level ``n`` is seen from level ``n``
    up. ``clearance`` is the highest ``sensitivity`` the principal may read.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str | None = Field(None, description="The user; owners always see their own items.")
    org_ids: list[str] = Field(default_factory=list, description="Organisations of the user.")
    project_ids: list[str] = Field(default_factory=list, description="Projects of the user.")
    roles: list[str] = Field(
        default_factory=list, description="Roles or groups, matched against item ACLs."
    )
    hierarchy_level: int = Field(0, ge=0, description="Items up to this level are visible.")
    clearance: int = Field(0, ge=0, description="Items up to this sensitivity are visible.")

    @field_validator("hierarchy_level", "clearance", mode="before")
    @classmethod
    def _not_true_or_false(cls, v: object) -> object:
        if isinstance(v, bool):  # pydantic would read true as 1
            raise ValueError(f"{v!r} is not a level; give a non-negative integer")
        return v

    @field_validator("user_id")
    @classmethod
    def _valid_user(cls, v: str | None) -> str | None:
        if v is not None and (not v.strip() or not _NAME.match(v)):
            raise ValueError(f"{v!r} is empty or has control characters; give a real user id")
        return v

    @field_validator("org_ids")
    @classmethod
    def _valid_orgs(cls, v: list[str]) -> list[str]:
        return _names(v, "org id")

    @field_validator("project_ids")
    @classmethod
    def _valid_projects(cls, v: list[str]) -> list[str]:
        return _names(v, "project id")

    @field_validator("roles")
    @classmethod
    def _valid_roles(cls, v: list[str]) -> list[str]:
        return _names(v, "role")

    @classmethod
    def anonymous(cls) -> Principal:
        """Nobody in particular: public items of sensitivity 0 at level 0 (fail closed)."""
        return cls()

    @property
    def is_anonymous(self) -> bool:
        """True for the principal used when the caller names none."""
        return self == Principal.anonymous()

    def describe(self) -> str:
        """A short label for traces and logs: ``user 'ana' (level 2, clearance 1)``."""
        who = f"user {self.user_id!r}" if self.user_id else "anonymous"
        return f"{who} (level {self.hierarchy_level}, clearance {self.clearance})"
