"""The one graph model: node labels, relationship types, their properties and the allow-lists.

Every node has a string ``id`` that is unique within its label. For *named* labels (Entity,
Category, Tag, Criterio) the ``id`` is the normalised name (:func:`normalise_name`) and the
display form lives in ``name``, so ``GraphRAG`` and ``graphrag`` are one entity. Chunk ids are
the ``unit_id`` of the lexical and dense indices; Doc ids are ``doc_id``.

Labels and relationship types are the only words ever placed into a Cypher string; they are
checked against :data:`NODE_SPECS` / :data:`EDGE_SPECS` first (:func:`check_label`,
:func:`check_rel_type`). Every value travels as a parameter. Seed 004's Query Profiles name
these labels too (its "Document" and "Organization" are ``Doc`` and ``Org``; see trilha.config).
The property models of most labels are in :mod:`trilha.graph.props`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from pydantic import Field, field_validator

from trilha.errors import BadRequestError
from trilha.graph.props import (
    ActorProps,
    AimProps,
    ChunkProps,
    DocProps,
    EntityProps,
    FactProps,
    JobProps,
    NamedProps,
    NoteProps,
    Props,
    WorkProps,
)

Scalar = str | int | float | bool
PropValue = Scalar | list[str] | list[int] | list[float] | list[bool] | None

_SPACE = re.compile(r"\s+")
_PROP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

#: Qualitative ``peso`` words accepted for a Criterio, and the multiplier each stands for.
PESO_WORDS: dict[str, float] = {
    "alto": 3.0,
    "high": 3.0,
    "medio": 2.0,
    "médio": 2.0,
    "medium": 2.0,
    "baixo": 1.0,
    "low": 1.0,
}


def normalise_name(name: str) -> str:
    """The identity of a name: NFC, case-folded, inner whitespace collapsed, trimmed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", name)).strip().casefold()


class CriterioProps(Props):
    """A legal criterion applied by decisions (seed 001); ``peso`` weighs the KG boost."""

    name: str | None = Field(None, description="Display name; the id is its normalised form.")
    peso: float | None = Field(
        None, ge=0, description="Multiplier, a number or alto/medio/baixo (3/2/1)."
    )

    @field_validator("peso", mode="before")
    @classmethod
    def _qualitative(cls, v: Any) -> Any:
        if isinstance(v, str) and normalise_name(v) in PESO_WORDS:
            return PESO_WORDS[normalise_name(v)]
        return v


class EdgeProps(Props):
    """Relationship properties: weight (RELATED), salience (MENTIONS), peso (HAS_CRITERIO)."""

    weight: float | None = Field(None, ge=0, le=1, description="RELATED strength, 0–1.")
    salience: float | None = Field(None, ge=0, le=1, description="MENTIONS salience, 0–1.")
    peso: float | None = Field(None, ge=0, description="Per-decision override of Criterio.peso.")


@dataclass(frozen=True)
class NodeSpec:
    """What a label is: whether its id is a normalised name, its props, what to display."""

    label: str
    named: bool
    props: type[Props]
    caption: str
    shown: tuple[str, ...]


@dataclass(frozen=True)
class EdgeSpec:
    """What a relationship type connects and whether its direction means anything."""

    type: str
    sources: frozenset[str]
    targets: frozenset[str]
    directed: bool = True


_WORK = ("title", "status", "owner_id", "due_date", "visibility", "hierarchy_level")

#: Every label of the model. ``shown`` are the properties put into query results.
NODE_SPECS: dict[str, NodeSpec] = {
    s.label: s
    for s in (
        NodeSpec("Doc", False, DocProps, "title", ("title", "updated_at", "lang")),
        NodeSpec("Chunk", False, ChunkProps, "ordinal", ("doc_id", "ordinal")),
        NodeSpec("Entity", True, EntityProps, "name", ("name", "type", "salience")),
        NodeSpec("Category", True, NamedProps, "name", ("name",)),
        NodeSpec("Tag", True, NamedProps, "name", ("name",)),
        NodeSpec("Criterio", True, CriterioProps, "name", ("name", "peso")),
        NodeSpec("Fato", False, FactProps, "text", ("text", "tipo")),
        NodeSpec("Prova", False, FactProps, "text", ("text", "tipo")),
        NodeSpec("Task", False, WorkProps, "title", _WORK),
        NodeSpec("Project", False, WorkProps, "title", _WORK),
        NodeSpec("User", False, ActorProps, "name", ("name", "hierarchy_level")),
        NodeSpec("Org", False, ActorProps, "name", ("name",)),
        NodeSpec("Department", False, ActorProps, "name", ("name", "hierarchy_level")),
        NodeSpec("Process", False, WorkProps, "title", _WORK),
        NodeSpec("DecisionPoint", False, WorkProps, "title", _WORK),
        NodeSpec("Purpose", False, AimProps, "title", (*_WORK, "valid_to")),
        NodeSpec("StrategicObjective", False, AimProps, "title", (*_WORK, "valid_to")),
        NodeSpec("OKR", False, AimProps, "title", (*_WORK, "valid_to")),
        NodeSpec("DocSummary", False, NoteProps, "text", ("text", "source_ref")),
        NodeSpec("Claim", False, NoteProps, "text", ("text", "confidence", "source_ref")),
        NodeSpec("Memory", False, NoteProps, "text", ("text", "memory_class", "created_at")),
        NodeSpec(
            "RetrievalJob",
            False,
            JobProps,
            "raw_query",
            ("raw_query", "retrieval_intent", "strategy_used", "created_at"),
        ),
    )
}

_DECISION = frozenset({"Doc", "Chunk"})
_WORK_ITEMS = frozenset({"Task", "Project"})
_ORG_UNITS = frozenset({"Org", "Department"})
_PROCESS = frozenset({"Process", "DecisionPoint"})
_AIMS = frozenset({"Purpose", "StrategicObjective", "OKR"})
_OWNED = _WORK_ITEMS | _PROCESS | _AIMS | {"Doc", "Memory"}
_STEPS = _PROCESS | {"Task"}
_PARTS = _WORK_ITEMS | _PROCESS | _AIMS | {"Doc", "Department"}
#: What a RetrievalJob may have RETURNED (seed 004's audit link).
RETURNABLE = _DECISION | _WORK_ITEMS | _AIMS | {"Claim", "Memory", "Process", "Entity"}

#: Every relationship type of the model, with the labels it may connect.
EDGE_SPECS: dict[str, EdgeSpec] = {
    s.type: s
    for s in (
        EdgeSpec("PART_OF", frozenset({"Chunk"}), frozenset({"Doc"})),
        EdgeSpec("MENTIONS", frozenset({"Chunk", "Claim", "Memory"}), frozenset({"Entity"})),
        EdgeSpec("RELATED", frozenset({"Entity"}), frozenset({"Entity"}), directed=False),
        EdgeSpec("IN_CATEGORY", frozenset({"Doc"}), frozenset({"Category"})),
        EdgeSpec("HAS_TAG", frozenset({"Doc"}), frozenset({"Tag"})),
        EdgeSpec("HAS_CRITERIO", _DECISION, frozenset({"Criterio"})),
        EdgeSpec("HAS_FATO", _DECISION, frozenset({"Fato"})),
        EdgeSpec("HAS_PROVA", _DECISION, frozenset({"Prova"})),
        EdgeSpec("BELONGS_TO", _PARTS, _ORG_UNITS | {"Project", "Process"}),
        EdgeSpec("OWNS", _ORG_UNITS | {"User"}, _OWNED),
        EdgeSpec("MEMBER_OF", frozenset({"User"}), _ORG_UNITS | {"Project"}),
        EdgeSpec("ASSIGNED_TO", frozenset({"Task", "DecisionPoint"}), frozenset({"User"})),
        EdgeSpec("DEPENDS_ON", _STEPS, _STEPS),
        EdgeSpec("REFERENCES", _WORK_ITEMS, frozenset({"Doc", "Chunk", "Entity"})),
        EdgeSpec("ALIGNS_WITH", _WORK_ITEMS | _AIMS | {"Process"}, _AIMS),
        EdgeSpec("HAS_SUMMARY", frozenset({"Doc"}), frozenset({"DocSummary"})),
        EdgeSpec("RETURNED", frozenset({"RetrievalJob"}), RETURNABLE),
    )
}

#: The deepest walk a Query Profile may declare (seed 004's process_state walks 4 hops).
MAX_PROFILE_HOPS = 4

#: Relationship types a subgraph walks by default: the knowledge part of the model.
KNOWLEDGE_RELS: tuple[str, ...] = (
    "PART_OF",
    "MENTIONS",
    "RELATED",
    "IN_CATEGORY",
    "HAS_TAG",
    "HAS_CRITERIO",
    "HAS_FATO",
    "HAS_PROVA",
)


def check_label(label: str) -> str:
    """Return ``label`` if it is in the allow-list, else raise :class:`BadRequestError`."""
    if label not in NODE_SPECS:
        raise BadRequestError(f"unknown node label {label!r}; allowed: {', '.join(NODE_SPECS)}")
    return label


def check_rel_type(rel_type: str) -> str:
    """Return ``rel_type`` if it is in the allow-list, else raise :class:`BadRequestError`."""
    if rel_type not in EDGE_SPECS:
        allowed = ", ".join(EDGE_SPECS)
        raise BadRequestError(f"unknown relationship type {rel_type!r}; allowed: {allowed}")
    return rel_type


def check_prop_name(name: str) -> str:
    """Property names become map keys: plain identifiers only (no backticks, no spaces)."""
    if not _PROP_NAME.match(name):
        raise BadRequestError(f"property name {name!r} must match [A-Za-z_][A-Za-z0-9_]*")
    return name


def node_key(label: str, raw_id: str) -> str:
    """The stored ``id`` of a node: the normalised name for named labels, else ``raw_id``."""
    return normalise_name(raw_id) if NODE_SPECS[check_label(label)].named else raw_id


def display_id(label: str, props: dict[str, Any]) -> str:
    """The id shown in results: ``'<Label>:<name or id>'`` (seed 003, e.g. ``Entity:Neo4j``)."""
    spec = NODE_SPECS.get(label)
    shown = props.get("name") if spec is not None and spec.named else None
    return f"{label}:{shown if isinstance(shown, str) and shown else props.get('id', '')}"


def cooccurrence_weight(chunks: int) -> float:
    """RELATED weight from the number of chunks mentioning both entities: ``n / (n + 1)``."""
    return chunks / (chunks + 1) if chunks > 0 else 0.0


#: The same formula as :func:`cooccurrence_weight`, for Cypher (``n`` is the chunk count).
COOCCURRENCE_WEIGHT_CYPHER = "toFloat(n) / (n + 1)"
