"""Writing what units mention: Entity nodes, MENTIONS with salience, each entity's salience and
the RELATED co-occurrence of the pairs that changed.

A unit's mentions are replaced, not added to: those no longer extracted are deleted, and the
entities they touched get their salience and co-occurrence recomputed (orphans are dropped).
"""

from __future__ import annotations

from collections.abc import Mapping

from trilha.graph.build import statements as cypher
from trilha.graph.build.extract import ExtractedEntity
from trilha.graph.build.removal import drop_orphans, pairs_touching, refresh_pairs
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


def write_mentions(
    store: GraphStore, per_unit: PerUnit, *, pair_entities: int, batch_size: int
) -> tuple[int, int, int]:
    """Write the entities and mentions of ``per_unit`` (each unit's mentions replaced) and
    recompute co-occurrence among each unit's ``pair_entities`` most salient entities; returns
    (entities, mentions, pairs) written."""
    ents = merged_entities(per_unit)
    entity_rows = [{"id": k, "name": e.name, "type": e.type} for k, e in ents.items()]
    write_rows(store, cypher.upsert_entities(), entity_rows, batch_size=batch_size)
    stale = [{"id": uid, "keep": list(found)} for uid, found in per_unit.items()]
    touched = write_returning(store, cypher.delete_stale_mentions(), stale, batch_size)
    mentions = [
        {"chunk": uid, "entity": k, "salience": e.salience, "count": e.occurrences}
        for uid, found in per_unit.items()
        for k, e in found.items()
    ]
    write_rows(store, cypher.upsert_mentions(), mentions, batch_size=batch_size)
    salience = sorted(set(ents) | touched)
    write_rows(store, cypher.refresh_entity_salience(), salience, batch_size=batch_size)
    pairs: set[tuple[str, str]] = set()
    for found in per_unit.values():
        ranked = sorted(found, key=lambda k: (-found[k].salience, k))
        pairs |= pairs_of(ranked, pair_entities)
    pairs |= pairs_touching(store, touched)
    refresh_pairs(store, pairs, batch_size)
    drop_orphans(store, "Entity", "MENTIONS", touched)
    return len(ents), len(mentions), len(pairs)
