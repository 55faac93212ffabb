"""Query Profiles (seed 004, "Integração com Query Profiles") and the intent → profile map.

A profile says where a graph walk starts (``anchors``, node labels), which relationship types it
may follow (``allowed_rels``), how far (``max_hops``) and which filters it requires. Labels and
relationship types are checked against the one graph model (:mod:`trilha.graph.model`) when the
profile is built, so a profile can only name what the graph can hold.

The model's names are used as they are, with no aliases: a profile's labels go verbatim into the
Cypher the graph runs and match the ids ``trilha graph`` prints (``Doc:…``). Seed 004 writes
"Document" and "Organization"; those words are refused with a hint naming the model's label.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from trilha.config.intents import Intent
from trilha.graph.model import EDGE_SPECS, MAX_PROFILE_HOPS, NODE_SPECS

#: Seed 004's words for labels the model names differently (used for hints, never accepted).
SEED_LABELS: dict[str, str] = {"Document": "Doc", "Organization": "Org"}

_NAME = r"^[a-z][a-z0-9_]*$"


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
    require_rbac: bool = Field(description="Apply the caller's access filter (REQ-RETR-024).")
    require_validity: bool = Field(description="Apply the temporal filter (REQ-RETR-025).")


class ProfileSet(BaseModel):
    """The contents of ``query_profiles.yaml``: the profiles, the intent map, the default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    profiles: dict[str, QueryProfile] = Field(
        min_length=1, description="Profiles by name; each body's name is its key."
    )
    intent_map: dict[Intent, str] = Field(
        default_factory=dict, description="Profile name chosen for each intent."
    )
    default_profile: str = Field(description="Profile for an intent the map does not name.")

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
        if self.default_profile not in self.profiles:
            raise ValueError(
                f"default_profile: no profile named {self.default_profile!r} (known: {known})"
            )
        return self

    def profile_for(self, intent: Intent) -> QueryProfile:
        """The profile the intent map names for ``intent``, else the default profile."""
        return self.profiles[self.intent_map.get(intent, self.default_profile)]
