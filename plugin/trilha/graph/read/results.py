"""The result types of the graph queries: seed 003's JSON, field for field.

``model_dump()`` gives the seed's JSON. Nodes and edges leave out properties that are None, as
the seed does (a MENTIONS edge has no ``weight``; a Doc has no ``salience``). Limits and
adjustments are reported: ``constraints`` / ``meta`` carry ``truncated`` and ``notes``.
``updated_at`` is shown as the seed shows it, an ISO timestamp in UTC (``2024-05-20T12:00:00Z``),
whatever form the document gave (:func:`iso_utc`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from trilha.graph.model import NODE_SPECS, display_id


def iso_utc(value: str | None) -> str | None:
    """``'2024-05-20'`` → ``'2024-05-20T00:00:00Z'``; an offset is converted to UTC, a naive
    time is taken as UTC; a value that is not an ISO date or datetime is returned unchanged."""
    if not value:
        return value
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return value
    utc = parsed.astimezone(UTC) if parsed.tzinfo else parsed
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")


class _Sparse(BaseModel):
    """Serialises without the fields (and extra properties) that are None."""

    @model_serializer(mode="wrap")
    def _drop_none(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}


class GraphNode(_Sparse):
    """A node as shown to callers: ``id`` is ``'<Label>:<name or id>'``."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str = Field(description="Display id, e.g. 'Doc:zh/guide/a' or 'Entity:GraphRAG'.")
    label: str = Field(description="Node label (Doc, Chunk, Entity, ...).")
    title: str | None = Field(None, description="Doc/Task/Project title.")
    name: str | None = Field(None, description="Display name of named nodes.")
    type: str | None = Field(None, description="Entity type.")
    salience: float | None = Field(None, description="Entity salience, 0–1.")
    updated_at: str | None = Field(None, description="Doc last update, ISO timestamp (UTC).")

    _iso = field_validator("updated_at")(iso_utc)


class GraphEdge(_Sparse):
    """A relationship between two displayed nodes."""

    model_config = ConfigDict(frozen=True)

    source: str = Field(description="Display id of the start node.")
    target: str = Field(description="Display id of the end node.")
    type: str = Field(description="Relationship type.")
    weight: float | None = Field(None, description="RELATED weight, 0–1.")
    salience: float | None = Field(None, description="MENTIONS salience, 0–1.")
    peso: float | None = Field(None, description="HAS_CRITERIO weight override.")


class SubgraphConstraints(BaseModel):
    """The limits a subgraph was computed under, and whether they cut anything."""

    max_hops: int = Field(description="Hops actually walked (0–2).")
    limit: int = Field(description="Maximum nodes (and edges) returned.")
    truncated: bool = Field(description="True when nodes, edges or paths were cut by a limit.")
    notes: list[str] = Field(default_factory=list, description="Clamped arguments, in words.")


class SubgraphQuery(BaseModel):
    """The subgraph request, echoed."""

    doc_id: str = Field(description="The document the subgraph is centred on.")
    entity_names: list[str] | None = Field(description="Entities the paths must end at.")


class SubgraphResult(BaseModel):
    """Seed 003 §1: nodes and edges within ``max_hops`` of a document."""

    nodes: list[GraphNode] = Field(description="Distinct nodes, nearest first; Doc first.")
    edges: list[GraphEdge] = Field(description="Distinct edges among the returned nodes.")
    constraints: SubgraphConstraints = Field(description="Limits applied.")
    query: SubgraphQuery = Field(description="The request.")


class PathMeta(BaseModel):
    """What a path search found and under which bound."""

    length: int | None = Field(description="Edges on the path; None when no path was found.")
    max_length: int = Field(description="Longest path searched for.")
    found: bool = Field(description="False when either entity is unknown or no path exists.")
    reason: str | None = Field(None, description="Why nothing was found, in words.")
    notes: list[str] = Field(default_factory=list, description="Clamped arguments, in words.")


class PathResult(BaseModel):
    """Seed 003 §2: one shortest path between two entities (empty when there is none)."""

    path: list[GraphNode] = Field(description="Nodes from source to target.")
    edges: list[GraphEdge] = Field(description="Edges in path order.")
    meta: PathMeta = Field(description="Length and bound.")


class TopNItem(BaseModel):
    """One ranked document with the reasons for its rank."""

    doc_id: str = Field(description="Document id.")
    title: str | None = Field(description="Document title.")
    updated_at: str | None = Field(description="Last update, ISO timestamp (UTC).")
    score: float = Field(description="Combined score in [0, 1], 4 decimals.")
    reasons: list[str] = Field(
        description="Readable reasons (at most 3), in the template language."
    )

    _iso = field_validator("updated_at")(iso_utc)


class TopNQuery(BaseModel):
    """The top-N request, echoed."""

    entity_names: list[str] | None = Field(description="Entities the documents should mention.")
    category: str | None = Field(description="Category earning a bonus.")
    language: str | None = Field(description="Language documents must have.")


class TopNMeta(BaseModel):
    """Limits of a top-N search."""

    limit: int = Field(description="Maximum items returned.")
    candidates: int = Field(description="Documents scored before the cut.")
    truncated: bool = Field(description="True when candidates were cut by a limit.")
    notes: list[str] = Field(default_factory=list, description="Clamped arguments, in words.")


class TopNResult(BaseModel):
    """Seed 003 §3: related documents ranked by relevance, recency and category."""

    items: list[TopNItem] = Field(description="Best first.")
    query: TopNQuery = Field(description="The request.")
    meta: TopNMeta = Field(description="Limits applied.")


def to_node(label: str, props: dict[str, Any]) -> GraphNode:
    """A result node from a label and the stored properties (only the shown ones)."""
    spec = NODE_SPECS.get(label)
    shown = {k: props[k] for k in (spec.shown if spec else ()) if props.get(k) is not None}
    return GraphNode(id=display_id(label, props), label=label, **shown)


def to_edge(rel_type: str, source: str, target: str, props: dict[str, Any]) -> GraphEdge:
    """A result edge between two display ids."""
    return GraphEdge(
        source=source,
        target=target,
        type=rel_type,
        weight=props.get("weight"),
        salience=props.get("salience"),
        peso=props.get("peso"),
    )
