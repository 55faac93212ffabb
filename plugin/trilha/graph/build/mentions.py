"""Writing what units mention: Entity nodes, MENTIONS with salience, each entity's salience and
the RELATED co-occurrence of the pairs that changed, with the access summaries
(:mod:`trilha.graph.support`) of the edges and entities behind which the units' chunks are.

A unit's mentions are replaced, not added to: those no longer extracted are deleted, and the
entities they touched get their salience and co-occurrence recomputed (orphans are dropped).
Each edge is recomputed once, by one walk to its chunks: co-occurrence and summary together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from trilha.graph import support
from trilha.graph.build import statements as cypher
from trilha.graph.build.extract import ExtractedEntity
from trilha.graph.build.removal import drop_orphans, refresh_pairs
from trilha.graph.build.rows import pairs_of
from trilha.graph.stores.base import GraphStore, write_returning, write_rows

#: Extracted entities per unit id, keyed by normalised entity key.
PerUnit = Mapping[str, Mapping[str, ExtractedEntity]]


def merged_entities(per_unit: PerUnit) -> dict[str, ExtractedEntity]:
    """One entity per key; a typed entity wins over a ``Concept`` of the same key."""
    ents: dict[str, ExtractedEntity] = {}
    for found in per_unit.values():
        for key, e in found.items():
            if key not in ents or (ents[key].type == "Concept" and e.type != "Concept"):
                ents[key] = e
    return ents


def ranked(per_unit: PerUnit, top: int) -> dict[str, list[str]]:
    """Each unit's ``top`` most salient entity keys (ties by key): those it pairs."""
    return {
        uid: sorted(found, key=lambda k: (-found[k].salience, k))[:top]
        for uid, found in per_unit.items()
    }


def write_mentions(
    store: GraphStore, per_unit: PerUnit, *, pair_entities: int, batch_size: int
) -> tuple[int, int, int]:
    """Write the entities and mentions of ``per_unit`` (each unit's mentions replaced), then
    recompute co-occurrence among each unit's ``pair_entities`` most salient entities and of
    the edges a unit stops supporting, and the summaries of every edge and entity behind which
    the units' chunks are; returns (entities, mentions, pairs) written."""
    ents = merged_entities(per_unit)
    entity_rows = [{"id": k, "name": e.name, "type": e.type} for k, e in ents.items()]
    write_rows(store, cypher.upsert_entities(), entity_rows, batch_size=batch_size)
    stale = [{"id": uid, "keep": list(found)} for uid, found in per_unit.items()]
    losing = support.read_pairs(store, cypher.pairs_losing(), stale, batch_size)
    touched = write_returning(store, cypher.delete_stale_mentions(), stale, batch_size)
    mentions = [
        {"chunk": uid, "entity": k, "salience": e.salience, "count": e.occurrences}
        for uid, found in per_unit.items()
        for k, e in found.items()
    ]
    write_rows(store, cypher.upsert_mentions(), mentions, batch_size=batch_size)
    refresh_entities(store, sorted(per_unit), touched, batch_size)
    tops = ranked(per_unit, pair_entities)
    pairs = set().union(*(pairs_of(keys, pair_entities) for keys in tops.values()))
    done = refresh_pairs(store, pairs, batch_size, existing=losing)
    rest = support.supported_pairs(store, per_unit, tops, batch_size) - done
    support.refresh_pairs(store, rest, batch_size)
    drop_orphans(store, "Entity", "MENTIONS", touched)
    return len(ents), len(mentions), len(done)


def refresh_entities(
    store: GraphStore, chunk_ids: Sequence[str], also: set[str], batch_size: int
) -> None:
    """Recompute the salience, chunk count and summary of the entities the chunks mention (a
    record's MENTIONS too: a chunk's access may have changed) and of ``also``."""
    rows = store.run(cypher.mentioned_by(), {"ids": list(chunk_ids)}) if chunk_ids else []
    ids = sorted({r["id"] for r in rows} | also)
    write_rows(store, cypher.refresh_entity_salience(), ids, batch_size=batch_size)
