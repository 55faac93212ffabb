"""The per-label property models of the graph's nodes (:data:`trilha.graph.model.NODE_SPECS`
names which label uses which). Each checks the properties an explicit record may set; unknown
extra properties are allowed. Criterio's and the relationships' models live in
:mod:`trilha.graph.model`, next to the name rules they use.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Props(BaseModel):
    """Base of the per-label property models: unknown extra properties are allowed."""

    model_config = ConfigDict(extra="allow")


class DocProps(Props):
    """A document (a decision, a policy, an article)."""

    title: str | None = Field(None, description="Document title.")
    updated_at: str | None = Field(None, description="ISO timestamp of the last update.")
    lang: str | None = Field(None, description="Language code: 'en', 'pt', ...")
    owner_id: str | None = Field(None, description="User or org that owns the document.")
    visibility: str | None = Field(None, description="'public', 'org', 'private', ...")
    hierarchy_level: int | None = Field(None, ge=0, description="Minimum level to see it.")
    source_ref: str | None = Field(None, description="Where the document came from.")


class ChunkProps(Props):
    """A retrievable unit; its ``id`` is the ``unit_id`` shared with the other indices."""

    doc_id: str | None = Field(None, description="Id of the Doc the chunk is PART_OF.")
    ordinal: int | None = Field(None, ge=0, description="Position inside its document.")
    lang: str | None = Field(None, description="Language code of the chunk.")


class EntityProps(Props):
    """Something the text talks about (a concept, organisation, product, law...)."""

    name: str | None = Field(None, description="Display name; the id is its normalised form.")
    type: str | None = Field(None, description="Entity type: 'Concept', 'Acronym', 'Org', ...")
    salience: float | None = Field(None, ge=0, le=1, description="Max mention salience, 0–1.")
    origin: str | None = Field(None, description="'text' (extracted) or 'record' (explicit).")


class NamedProps(Props):
    """A Category or a Tag."""

    name: str | None = Field(None, description="Display name; the id is its normalised form.")


class FactProps(Props):
    """A Fato (fact) or Prova (piece of evidence) tied to a decision or a chunk."""

    text: str | None = Field(None, description="What the fact or evidence says.")
    tipo: str | None = Field(None, description="Kind of fact/evidence (free text).")


class WorkProps(Props):
    """A Task or Project (seed 004): owned, dated, with status and visibility."""

    title: str | None = Field(None, description="Title of the task or project.")
    status: str | None = Field(None, description="'todo', 'doing', 'done', 'late', ...")
    owner_id: str | None = Field(None, description="Id of the owning User or Org.")
    due_date: str | None = Field(None, description="ISO due date.")
    visibility: str | None = Field(None, description="'public', 'org', 'private', ...")
    hierarchy_level: int | None = Field(None, ge=0, description="Minimum level to see it.")
    updated_at: str | None = Field(None, description="ISO timestamp of the last update.")


class ActorProps(Props):
    """A User or an Org."""

    name: str | None = Field(None, description="Display name.")
    hierarchy_level: int | None = Field(None, ge=0, description="Level in the hierarchy.")
    visibility: str | None = Field(None, description="'public', 'org', 'private', ...")


class AimProps(WorkProps):
    """A Purpose, StrategicObjective or OKR (seed 004's strategy_alignment), valid for a time."""

    valid_from: str | None = Field(None, description="ISO date the aim starts to hold.")
    valid_to: str | None = Field(None, description="ISO date the aim stops holding.")


class NoteProps(Props):
    """A DocSummary, Claim or Memory: a short text with its provenance (seed 004)."""

    text: str | None = Field(None, description="What the summary, claim or memory says.")
    source_ref: str | None = Field(None, description="Where it came from.")
    created_at: str | None = Field(None, description="ISO timestamp of creation.")
    expires_at: str | None = Field(None, description="ISO timestamp after which it is stale.")
    confidence: float | None = Field(None, ge=0, le=1, description="Confidence, 0–1.")
    owner_id: str | None = Field(None, description="Owning User (a Memory is personal).")
    visibility: str | None = Field(None, description="'public', 'org', 'private', ...")
    memory_class: str | None = Field(None, description="Memory: 'episodic', 'semantic', ...")


class JobProps(Props):
    """A RetrievalJob (seed 004): one logged retrieval, private to the user who asked."""

    user_id: str | None = Field(None, description="Who asked; also the node's owner_id.")
    raw_query: str | None = Field(None, description="The question as asked.")
    retrieval_intent: str | None = Field(None, description="'factual', 'graph_insight', ...")
    strategy_used: str | None = Field(None, description="'semantic_only', 'graph_only', ...")
    depth_level: str | None = Field(None, description="'D0' … 'D4'.")
    created_at: str | None = Field(None, description="ISO timestamp of the request.")
    owner_id: str | None = Field(None, description="The user who asked (private to them).")
    visibility: str | None = Field(None, description="Always 'private'.")
