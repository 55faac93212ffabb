"""The result types of the profile walks and the claim search.

Ids are display ids (``'Task:t-ropa'``, :func:`~trilha.graph.model.display_id`); ``props``
holds only the properties a node has (never its access summary). Limits are reported:
``nodes_scanned`` counts the nodes read (anchors and neighbours), ``truncated`` says the
``max_nodes_scanned`` budget cut the reading, ``warnings`` say what else was cut or skipped.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from trilha.graph.model import PropValue


class ProfileLink(BaseModel):
    """A node reached from a hit by the walk, and the last relationship on the way."""

    model_config = ConfigDict(frozen=True)

    rel_type: str = Field(description="Type of the relationship that reached the node.")
    direction: Literal["out", "in"] = Field(
        description="'out': the relationship leaves ``via`` (or the hit); 'in': it enters it."
    )
    other_id: str = Field(description="Display id of the node reached, e.g. 'Project:p-lgpd'.")
    other_label: str = Field(description="Its label.")
    other_title: str | None = Field(None, description="Its title, name or text.")
    other_status: str | None = Field(None, description="Its status, when it has one.")
    hops: int = Field(ge=1, description="Relationships from the hit to it.")
    via: str | None = Field(None, description="Display id of the node before it (hops > 1).")


class ProfileHit(BaseModel):
    """An anchor that passed the filters, its score and what the walk reached from it."""

    model_config = ConfigDict(frozen=True)

    node_id: str = Field(description="Display id, e.g. 'Task:t-ropa'.")
    label: str = Field(description="Node label.")
    props: dict[str, PropValue] = Field(
        description="Its id, title/name/text, status, dates, owner, validity and provenance."
    )
    score: float = Field(description="Ranking score (trilha.graph.read.profile_score).")
    links: tuple[ProfileLink, ...] = Field((), description="Nodes reached, nearest first.")
    reason: str = Field(description="Why it is here, e.g. 'late Task of Project:p-lgpd'.")


class ProfileWalkResult(BaseModel):
    """What a profile walk returned and what it cost."""

    model_config = ConfigDict(frozen=True)

    profile: str = Field(description="Name of the Query Profile walked.")
    hits: tuple[ProfileHit, ...] = Field(description="Best first, at most ``limit``.")
    candidates: int = Field(description="Anchors that passed the filters (before ``limit``).")
    nodes_scanned: int = Field(description="Nodes read: anchors plus neighbours.")
    truncated: bool = Field(description="The max_nodes_scanned budget cut the reading.")
    filters_applied: tuple[str, ...] = Field(
        description="Filters run: visibility, validity, scope, status, overdue, due_from, "
        "due_to, priority, terms."
    )
    warnings: tuple[str, ...] = Field((), description="What was cut or skipped, one line each.")


class ClaimHit(BaseModel):
    """A Claim node (REQ-RETR-030) matching the terms, with its provenance."""

    model_config = ConfigDict(frozen=True)

    node_id: str = Field(description="Display id, 'Claim:<id>'.")
    text: str = Field(description="What the claim states.")
    confidence: float | None = Field(None, description="Its confidence, 0–1.")
    source_ref: str | None = Field(None, description="Where it came from.")
    created_at: str | None = Field(None, description="ISO timestamp of creation.")
    valid_from: str | None = Field(None, description="ISO date it starts to hold.")
    valid_to: str | None = Field(None, description="ISO date it stops holding.")
    expires_at: str | None = Field(None, description="ISO timestamp it goes stale.")
    owner_id: str | None = Field(None, description="Its owner, when it has one.")
    score: float = Field(description="Share of the terms it contains × confidence.")
    entities: tuple[str, ...] = Field((), description="Names of the entities it MENTIONS.")


class ClaimSearchResult(BaseModel):
    """The claims found and what the search cost."""

    model_config = ConfigDict(frozen=True)

    hits: tuple[ClaimHit, ...] = Field(description="Best first, at most ``limit``.")
    candidates: int = Field(description="Claims that matched (before ``limit``).")
    nodes_scanned: int = Field(description="Claim nodes read.")
    truncated: bool = Field(description="The max_nodes_scanned budget cut the reading.")
