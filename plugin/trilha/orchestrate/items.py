"""Context items from what each source returns: document hits, conversation turns, past jobs.

Each converter sets the memory class, the provenance and the citation of an item, and counts its
tokens. A document unit is ``procedural`` when its tags or title hold one of the configured
procedural markers (a runbook, a manual, a how-to), ``semantic`` otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trilha.access import ACCESS_KEYS
from trilha.config import MemoryClass
from trilha.memory import RetrievalJob, Turn
from trilha.orchestrate.bundle import ContextItem, ItemCitation, Provenance
from trilha.tokens import count_tokens
from trilha.types import Hit, TextUnit


def unit_class(unit: TextUnit, markers: Sequence[str]) -> MemoryClass:
    """``procedural`` for a how-to document (a marker in its tags or title), else ``semantic``."""
    words = " ".join([*unit.tags, unit.title or ""]).casefold()
    return "procedural" if any(m.casefold() in words for m in markers) else "semantic"


def unit_label(unit: TextUnit) -> str:
    """A human citation of a unit: its title (or doc id), then section, heading and page."""
    parts = [unit.title or unit.doc_id]
    if unit.section:
        parts.append(f"§ {unit.section}")
    if unit.heading and unit.heading != unit.title:
        parts.append(unit.heading)
    if unit.page is not None:
        parts.append(f"p. {unit.page}")
    return ", ".join(parts)


def hit_item(hit: Hit, *, top_score: float, markers: Sequence[str], source: str) -> ContextItem:
    """A document unit found by a search; its confidence is its score over the best one's."""
    u = hit.unit
    return ContextItem(
        item_id=f"Chunk:{u.unit_id}",
        item_type="chunk",
        memory_class=unit_class(u, markers),
        text=u.text,
        score=hit.score,
        tokens=count_tokens(u.text),
        source=source,
        metadata={
            "doc_id": u.doc_id,
            "title": u.title,
            "tags": list(u.tags),
            "date": u.date,
            "scores": hit.scores.model_dump(exclude_none=True),
            "access": access_of(u.model_dump()),
        },
        provenance=Provenance(
            source_type="document",
            source_ref=u.source_ref or u.doc_id,
            created_at=u.created_at or u.date,
            confidence=_share(hit.score, top_score),
        ),
        citation=ItemCitation.of_unit(u, label=unit_label(u)),
    )


def turn_item(turn: Turn, memory_class: MemoryClass, score: float) -> ContextItem:
    """A conversation turn: this conversation's are the working set, earlier ones episodic."""
    text = f"{turn.role}: {turn.text}"
    when = turn.created_at.isoformat(timespec="seconds")
    return ContextItem(
        item_id=f"Turn:{turn.turn_id}",
        item_type="turn",
        memory_class=memory_class,
        text=text,
        score=score,
        tokens=count_tokens(text),
        source="memory",
        metadata={
            "user_id": turn.user_id,
            "conversation_id": turn.conversation_id,
            "project_id": turn.project_id,
        },
        provenance=Provenance(
            source_type="conversation",
            source_ref=f"conversation:{turn.conversation_id}",
            created_at=when,
            confidence=1.0,
        ),
        citation=ItemCitation(
            label=f"conversation {turn.conversation_id}, {when}", node_id=f"Turn:{turn.turn_id}"
        ),
    )


def job_item(job: RetrievalJob, score: float) -> ContextItem:
    """A past retrieval of the same user (episodic memory): what was asked and what it found."""
    when = job.created_at.isoformat(timespec="seconds")
    text = (
        f"Earlier question ({when[:10]}): {job.raw_query} "
        f"[{job.retrieval_intent}, {job.nodes_returned} items]"
    )
    return ContextItem(
        item_id=f"RetrievalJob:{job.id}",
        item_type="job",
        memory_class="episodic",
        text=text,
        score=score,
        tokens=count_tokens(text),
        source="jobs",
        metadata={"returned": list(job.returned[:10]), "strategy_used": job.strategy_used},
        provenance=Provenance(
            source_type="retrieval_job",
            source_ref=f"RetrievalJob:{job.id}",
            created_at=when,
            confidence=1.0,
        ),
        citation=ItemCitation(
            label=f"earlier retrieval {job.id}", node_id=f"RetrievalJob:{job.id}"
        ),
    )


def access_of(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The access fields of an item (:data:`~trilha.access.ACCESS_KEYS`) that it has."""
    return {key: fields[key] for key in ACCESS_KEYS if fields.get(key) is not None}


def _share(score: float, top: float) -> float:
    if top <= 0:
        return 0.0
    return max(0.0, min(1.0, score / top))
