"""Hits <-> LlamaIndex nodes: provenance and stage scores in metadata, hidden from prompts."""

from __future__ import annotations

from typing import Any

from llama_index.core.schema import NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode

from trilha.types import OPEN_ACL, Hit, StageScores, TextUnit

#: Per-stage scores and ranks, kept on every node; excluded from LLM prompts and embedding.
SCORE_KEYS = tuple(f"trilha_{name}" for name in StageScores.model_fields)
#: Bookkeeping metadata that is not content either.
HIDDEN_KEYS = (
    "unit_id",
    "ordinal",
    "sensitivity",
    "owner_id",
    "visibility",
    "org_id",
    "project_id",
    "acl",
    "hierarchy_level",
    "source_type",
    "source_ref",
    "created_at",
    "date_num",
    *SCORE_KEYS,
)
#: Metadata shown to the LLM next to the text (the citation fields).
CITATION_KEYS = ("doc_id", "title", "page", "section", "heading", "lang")


def _flat(value: Any) -> Any:
    return (
        value
        if value is None or isinstance(value, str | int | float | bool)
        else (list(value) if isinstance(value, list | tuple) else str(value))
    )


def hit_to_node(hit: Hit) -> NodeWithScore:
    """A NodeWithScore whose id is the unit_id and whose metadata carries every stage score."""
    unit = hit.unit
    metadata = {k: _flat(v) for k, v in unit.payload().items() if v is not None}
    metadata.update({f"trilha_{k}": v for k, v in hit.scores.model_dump().items()})
    excluded = [k for k in metadata if k not in CITATION_KEYS]
    node = TextNode(
        id_=unit.unit_id,
        text=unit.text,
        metadata=metadata,
        excluded_llm_metadata_keys=excluded,
        excluded_embed_metadata_keys=list(metadata),
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=unit.doc_id)},
    )
    return NodeWithScore(node=node, score=hit.score)


def node_to_hit(nws: NodeWithScore) -> Hit:
    """Back from a node made by :func:`hit_to_node` (or any TextNode: it becomes a unit)."""
    node = nws.node
    meta = dict(node.metadata)
    scores = StageScores.model_validate(
        {k.removeprefix("trilha_"): meta.pop(k) for k in SCORE_KEYS if k in meta}
    )
    if nws.score is not None and scores.fused == 0.0 and scores.fused_rank is None:
        scores = scores.model_copy(update={"fused": float(nws.score)})
    fields = set(TextUnit.model_fields)
    known = {k: v for k, v in meta.items() if k in fields}
    extra = {k: v for k, v in meta.items() if k not in fields and k != "date_num"}
    known.setdefault("doc_id", node.ref_doc_id or node.node_id)
    if isinstance(known.get("acl"), list):  # the payload's "no ACL" marker is not a role
        known["acl"] = [a for a in known["acl"] if a != OPEN_ACL]
    unit = TextUnit(
        unit_id=str(meta.get("unit_id", node.node_id)),
        text=node.get_content(),
        extra=extra,
        **{k: v for k, v in known.items() if k != "unit_id"},
    )
    return Hit(unit=unit, scores=scores)
