"""Query Profiles (seed 004, "Integração com Query Profiles") and the intent → profile map.

A profile says where a graph walk starts (``anchors``, node labels), which relationship types it
may follow (``allowed_rels``), how far (``max_hops``) and which filters it requires. Labels and
relationship types are checked against the one graph model (:mod:`trilha.graph.model`) when the
profile is built, so a profile can only name what the graph can hold.

The model's names are used as they are, with no aliases: a profile's labels go verbatim into the
Cypher the graph runs and match the ids ``trilha graph`` prints (``Doc:…``). Seed 004 writes
"Document" and "Organization"; those words are refused with a hint naming the model's label.

Two keys of seed 004 are retired, and a file that still sets them loads without them, with one
warning line for each saying what to do: a profile's ``require_rbac`` (the caller's visibility
filter applies to every walk whatever a profile says, so ``false`` could only be a lie) and the
set's ``default_profile`` (an intent the map does not name walks its depth plan's profile,
:meth:`ProfileSet.profile_for`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from trilha.config.depth import DepthPlan
from trilha.config.intents import Intent
from trilha.graph.model import EDGE_SPECS, MAX_PROFILE_HOPS, NODE_SPECS

#: Seed 004's words for labels the model names differently (used for hints, never accepted).
SEED_LABELS: dict[str, str] = {"Document": "Doc", "Organization": "Org"}

_NAME = r"^[a-z][a-z0-9_]*$"

log = logging.getLogger(__name__)

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
    require_validity: bool = Field(description="Apply the temporal filter (REQ-RETR-025).")

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
