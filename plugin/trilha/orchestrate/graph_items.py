"""Context items from graph reads: work items, aims and organisation nodes, and claims."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trilha.config import MemoryClass
from trilha.graph.read.profile_reads import ClaimHit
from trilha.graph.read.profile_walk import ProfileHit
from trilha.orchestrate.bundle import ClaimItem, ContextItem, ItemCitation, Provenance
from trilha.orchestrate.items import access_of
from trilha.tokens import count_tokens

_FIELDS = (("status", "status"), ("due_date", "due"), ("owner_id", "owner"), ("valid_to", "until"))


def node_text(hit: ProfileHit) -> str:
    """``Task "title" (status late, due 2026-10-15, owner bruno.ti); BELONGS_TO Project …``."""
    props = hit.props
    title = props.get("title") or props.get("name") or props.get("text") or hit.node_id
    facts = [f"{word} {props[key]}" for key, word in _FIELDS if props.get(key) is not None]
    text = f'{hit.label} "{title}"' + (f" ({', '.join(facts)})" if facts else "")
    for link in hit.links:
        arrow = "→" if link.direction == "out" else "←"
        other = f"{link.other_id}" + (f' "{link.other_title}"' if link.other_title else "")
        text += f"; {link.rel_type} {arrow} {other}"
    return text + f". {hit.reason}" if hit.reason else text


def node_class(
    hit: ProfileHit, procedural: Sequence[str], klass: MemoryClass | None
) -> MemoryClass:
    """The class asked for, else procedural for a ``procedural`` label, semantic otherwise."""
    if klass is not None:
        return klass
    return "procedural" if hit.label in procedural else "semantic"


def node_item(
    hit: ProfileHit, procedural: Sequence[str], klass: MemoryClass | None = None
) -> ContextItem:
    """A graph node found by a walk, cited by its id."""
    props = hit.props
    text = node_text(hit)
    title = props.get("title") or props.get("name") or hit.node_id
    confidence = props.get("confidence")
    return ContextItem(
        item_id=hit.node_id,
        item_type=hit.label,
        memory_class=node_class(hit, procedural, klass),
        text=text,
        score=hit.score,
        tokens=count_tokens(text),
        source="graph",
        metadata={
            "props": dict(props),
            "links": [link.model_dump() for link in hit.links],
            "reason": hit.reason,
            "access": access_of(props),
        },
        provenance=Provenance(
            source_type="graph",
            source_ref=str(props.get("source_ref") or hit.node_id),
            created_at=_text(props.get("created_at") or props.get("updated_at")),
            confidence=float(confidence) if isinstance(confidence, int | float) else 1.0,
        ),
        citation=ItemCitation(label=f"{title} ({hit.node_id})", node_id=hit.node_id),
    )


def claim_item(hit: ClaimHit) -> ClaimItem:
    """A claim with its confidence, source and validity (seed 004's ClaimItem)."""
    confidence = hit.confidence if hit.confidence is not None else 0.5
    return ClaimItem(
        item_id=hit.node_id,
        item_type="Claim",
        memory_class="claims",
        text=hit.text,
        score=hit.score,
        tokens=count_tokens(hit.text),
        source="claims",
        metadata={"entities": list(hit.entities), "owner_id": hit.owner_id},
        provenance=Provenance(
            source_type="claim",
            source_ref=hit.source_ref or hit.node_id,
            created_at=hit.created_at,
            confidence=confidence,
        ),
        citation=ItemCitation(
            label=f"claim {hit.node_id}" + (f", from {hit.source_ref}" if hit.source_ref else ""),
            node_id=hit.node_id,
        ),
        statement=hit.text,
        confidence=confidence,
        valid_from=hit.valid_from,
        valid_to=hit.valid_to,
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
