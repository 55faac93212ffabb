"""Keeping the graph whole when chunks go: co-occurrence recomputed, orphans dropped, curated
edges of a removed chunk moved to its document.

RELATED co-occurrence (with its access summary) is recomputed from the graph for the entity pairs
a change touches, never incremented; an Entity, Category or Tag that nothing links to any more is
deleted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from trilha.graph import support
from trilha.graph.build import statements as cypher
from trilha.graph.model import EDGE_SPECS
from trilha.graph.stores.base import GraphStore, batched, write_rows


class DeleteStats(BaseModel):
    """What ``delete_doc`` removed."""

    doc_id: str = Field(description="The document.")
    found: bool = Field(description="False when the graph had no such document.")
    chunks: int = Field(0, description="Chunks removed (with their MENTIONS).")
    entities: int = Field(0, description="Entities removed because no chunk mentions them.")
    tags: int = Field(0, description="Tags and categories removed because no doc uses them.")


def refresh_pairs(
    store: GraphStore,
    pairs: set[tuple[str, str]],
    batch_size: int,
    *,
    existing: set[tuple[str, str]] | None = None,
) -> set[tuple[str, str]]:
    """Recompute RELATED of ``pairs`` (merged where a chunk mentions both ends) and of the
    edges of ``existing`` (deleted where none does any more, unless curated) from the chunks
    mentioning both ends, with their access summaries, one walk per pair; returns the pairs
    recomputed."""
    rows = [{"a": a, "b": b} for a, b in sorted(pairs)]
    write_rows(store, cypher.upsert_cooccurrence(), rows, batch_size=batch_size)
    rest = [{"a": a, "b": b} for a, b in sorted((existing or set()) - pairs)]
    write_rows(store, cypher.refresh_cooccurrence(), rest, batch_size=batch_size)
    write_rows(store, cypher.delete_unsupported(), rest, batch_size=batch_size)
    return pairs | (existing or set())


def drop_orphans(store: GraphStore, label: str, rel: str, ids: Iterable[str]) -> int:
    """Delete the ``label`` nodes among ``ids`` that no ``rel`` reaches any more; how many."""
    ids = sorted(set(ids))
    if not ids:
        return 0
    dead = [r["id"] for r in store.run(cypher.orphans(label, rel), {"ids": ids})]
    if dead:
        store.write(cypher.delete_nodes(label), {"ids": dead})
    return len(dead)


def remove_chunk_nodes(store: GraphStore, chunk_ids: Sequence[str], batch_size: int) -> int:
    """Delete chunks with their mentions; recompute the co-occurrence and access summaries
    (:mod:`trilha.graph.support`) of the RELATED edges they supported (both ends mentioned) and
    the salience of the entities they mentioned, and drop the orphans.
    Returns the entities removed."""
    if not chunk_ids:
        return 0
    entity_ids = [r["id"] for r in store.run(cypher.mentioned_by(), {"ids": chunk_ids})]
    supported = support.supported_pairs(store, chunk_ids)
    for part in batched(chunk_ids, batch_size):
        store.write(cypher.delete_nodes("Chunk"), {"ids": list(part)})
    refresh_pairs(store, set(), batch_size, existing=supported)
    removed = drop_orphans(store, "Entity", "MENTIONS", entity_ids)
    write_rows(store, cypher.refresh_entity_salience(), sorted(entity_ids), batch_size=batch_size)
    return removed


def doc_chunk_ids(store: GraphStore, doc_id: str) -> list[str]:
    """Ids of the chunks of Doc ``doc_id``, sorted."""
    rows = store.run(cypher.doc_chunk_ids(), {"doc_id": doc_id})
    return sorted({r["id"] for r in rows if r["id"] is not None})


def reattach_to_doc(store: GraphStore, doc_id: str, chunk_ids: Sequence[str]) -> int:
    """Copy the record-origin edges of ``chunk_ids`` onto Doc ``doc_id``; how many."""
    if not chunk_ids:
        return 0
    moved = 0
    for outgoing in (True, False):
        rows = store.run(cypher.record_edges_of_chunks(outgoing), {"ids": chunk_ids})
        groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            spec = EDGE_SPECS.get(r["type"])
            if spec is not None and "Doc" in (spec.sources if outgoing else spec.targets):
                groups[(r["type"], r["label"])].append({"id": r["id"], "props": r["props"]})
        for (rel, label), group in groups.items():
            statement = cypher.attach_to_doc(rel, label, outgoing)
            moved += write_rows(store, statement, group, extra={"doc": doc_id})
    return moved
