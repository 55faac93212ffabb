"""Keeping the access summaries (:mod:`trilha.graph.support`) current after a write: those of
the RELATED edges the written chunks supported before and support now, and those of the
entities they mention."""

from __future__ import annotations

from collections.abc import Sequence

from trilha.graph import support
from trilha.graph.build import statements as cypher
from trilha.graph.stores.base import GraphStore, write_rows


def refresh_summaries(
    store: GraphStore,
    pairs: set[support.Pair],
    chunk_ids: Sequence[str],
    batch_size: int,
    *,
    entities: bool = True,
) -> None:
    """Recompute the summaries of the RELATED edges between ``pairs`` (those the chunks were in
    before a write) and of those the chunks ``chunk_ids`` are in now; with ``entities``, of the
    entities they mention too (with their salience and chunk count)."""
    now = support.supported_pairs(store, chunk_ids)
    support.refresh_pairs(store, pairs | now, batch_size)
    ids = sorted(set(chunk_ids))
    if not entities or not ids:
        return
    rows = store.run(cypher.mentioned_by(), {"ids": ids})
    mentioned = sorted({r["id"] for r in rows})
    write_rows(store, cypher.refresh_entity_salience(), mentioned, batch_size=batch_size)
