"""Writing the graph: text units (Doc/Chunk/Entity/MENTIONS/Category/Tag and co-occurrence
RELATED), explicit records, and document deletion.

Every write is a batched ``UNWIND`` of ``MERGE``/``SET`` with deterministic values, so running the
same input twice leaves the graph unchanged. Re-ingesting a unit replaces its mentions (mentions
no longer extracted are deleted); RELATED co-occurrence counts are recomputed from the graph,
never incremented. To replace a whole document whose chunking changed, ``delete_doc`` first.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

from pydantic import BaseModel, Field

from trilha.graph import cypher
from trilha.graph.extract import EntityExtractor, ExtractedEntity, RuleEntityExtractor
from trilha.graph.model import NODE_SPECS, node_key, normalise_name
from trilha.graph.records import EdgeRecord, NodeRecord
from trilha.graph.store import GraphStore, batched, ensure_indexes, write_rows
from trilha.types import TextUnit

logger = logging.getLogger(__name__)


class WriteStats(BaseModel):
    """Rows sent per kind (not rows changed: re-sending the same rows changes nothing)."""

    docs: int = Field(0, description="Doc rows.")
    chunks: int = Field(0, description="Chunk rows.")
    entities: int = Field(0, description="Distinct entities.")
    mentions: int = Field(0, description="MENTIONS rows.")
    pairs: int = Field(0, description="Entity pairs whose RELATED edge was recomputed.")
    nodes: int = Field(0, description="Explicit node records.")
    edges: int = Field(0, description="Explicit edge records.")


class DeleteStats(BaseModel):
    """What ``delete_doc`` removed."""

    doc_id: str = Field(description="The document.")
    found: bool = Field(description="False when the graph had no such document.")
    chunks: int = Field(0, description="Chunks removed (with their MENTIONS).")
    entities: int = Field(0, description="Entities removed because no chunk mentions them.")
    tags: int = Field(0, description="Tags and categories removed because no doc uses them.")


def _compact(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if v is not None}


def category_of(unit: TextUnit) -> str | None:
    """A unit's category: ``extra['category']`` when it is a string, else ``tema``."""
    value = unit.extra.get("category")
    return value if isinstance(value, str) and value.strip() else unit.tema


def updated_at_of(unit: TextUnit) -> str | None:
    """``extra['updated_at']`` when set, else the content ``date``, else ``created_at``."""
    value = unit.extra.get("updated_at")
    return value if isinstance(value, str) and value else unit.date or unit.created_at


def doc_rows(units: Sequence[TextUnit]) -> list[dict[str, Any]]:
    """One ``{id, props}`` row per document (the last unit of a document wins)."""
    docs: dict[str, dict[str, Any]] = {}
    for u in units:
        docs[u.doc_id] = {
            "id": u.doc_id,
            "props": _compact(
                {
                    "title": u.title,
                    "updated_at": updated_at_of(u),
                    "lang": u.lang.lower(),
                    "owner_id": u.owner_id,
                    "visibility": u.visibility,
                    "hierarchy_level": u.hierarchy_level,
                    "source_ref": u.source_ref,
                }
            ),
        }
    return list(docs.values())


def chunk_rows(units: Sequence[TextUnit]) -> list[dict[str, Any]]:
    """One ``{id, doc_id, props}`` row per unit."""
    return [
        {
            "id": u.unit_id,
            "doc_id": u.doc_id,
            "props": {"doc_id": u.doc_id, "ordinal": u.ordinal, "lang": u.lang.lower()},
        }
        for u in units
    ]


Links = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def link_rows(units: Sequence[TextUnit]) -> tuple[Links, Links]:
    """Category and tag links: ``([{doc, id, name}], [{doc, keep}])`` for each of the two."""
    cats: dict[str, dict[str, str]] = {}
    tags: dict[str, dict[str, str]] = {}
    for u in units:
        category = category_of(u)
        names = [category] if category else []
        cats.setdefault(u.doc_id, {}).update({normalise_name(n): n for n in names if n.strip()})
        tags.setdefault(u.doc_id, {}).update({normalise_name(t): t for t in u.tags if t.strip()})
    return _links(cats), _links(tags)


def _links(by_doc: Mapping[str, Mapping[str, str]]) -> Links:
    links = [
        {"doc": d, "id": k, "name": n} for d, names in by_doc.items() for k, n in names.items()
    ]
    return links, [{"doc": d, "keep": sorted(names)} for d, names in by_doc.items()]


def _dedupe(found: Sequence[ExtractedEntity]) -> dict[str, ExtractedEntity]:
    best: dict[str, ExtractedEntity] = {}
    for e in found:
        key = normalise_name(e.name)
        if key and (key not in best or e.salience > best[key].salience):
            best[key] = e
    return best


def pairs_of(keys_by_salience: Sequence[str], top: int) -> set[tuple[str, str]]:
    """Ordered ``(a, b)`` pairs, ``a < b``, among the ``top`` most salient entities of a chunk."""
    return {(a, b) if a < b else (b, a) for a, b in combinations(keys_by_salience[:top], 2)}


class GraphWriter:
    """Writes units, records and deletions into a :class:`GraphStore`."""

    def __init__(
        self,
        store: GraphStore,
        extractor: EntityExtractor | None = None,
        *,
        batch_size: int = 2000,
        pair_entities: int = 10,
    ) -> None:
        self.store = store
        self.extractor = extractor or RuleEntityExtractor()
        self.batch_size = batch_size
        self.pair_entities = pair_entities
        self._schema_ready = False

    def ensure_schema(self) -> None:
        """Create the id indexes (once per writer)."""
        if not self._schema_ready:
            ensure_indexes(self.store)
            self._schema_ready = True

    def _write(self, statement: str, rows: Sequence[Any]) -> int:
        return write_rows(self.store, statement, rows, batch_size=self.batch_size)

    def _write_returning(self, statement: str, rows: Sequence[Any]) -> set[str]:
        """Run a batched write whose rows return ``id``; the ids."""
        ids: set[str] = set()
        for chunk in batched(rows, self.batch_size):
            ids.update(r["id"] for r in self.store.write(statement, {"rows": list(chunk)}))
        return ids

    def upsert_units(
        self,
        units: Sequence[TextUnit],
        entities: Mapping[str, Sequence[ExtractedEntity]] | None = None,
    ) -> WriteStats:
        """Upsert units with their entities (extracted unless given per ``unit_id``)."""
        self.ensure_schema()
        docs, chunks = doc_rows(units), chunk_rows(units)
        self._write(cypher.upsert_nodes("Doc"), docs)
        self._write(cypher.upsert_chunks(), chunks)
        kinds = (("Category", "IN_CATEGORY"), ("Tag", "HAS_TAG"))
        for (label, rel), (links, keep) in zip(kinds, link_rows(units), strict=True):
            unlinked = self._write_returning(cypher.unlink_doc_stale(label, rel), keep)
            self._write(cypher.link_doc(label, rel), links)
            self._drop_orphans(label, rel, unlinked)
        per_unit = {
            u.unit_id: _dedupe(
                entities[u.unit_id]
                if entities and u.unit_id in entities
                else self.extractor.extract(u)
            )
            for u in units
        }
        stats = self._write_mentions(per_unit)
        return stats.model_copy(update={"docs": len(docs), "chunks": len(chunks)})

    def _write_mentions(self, per_unit: Mapping[str, Mapping[str, ExtractedEntity]]) -> WriteStats:
        ents: dict[str, ExtractedEntity] = {}
        for found in per_unit.values():
            for key, e in found.items():
                if key not in ents or (ents[key].type == "Concept" and e.type != "Concept"):
                    ents[key] = e
        self._write(
            cypher.upsert_entities(),
            [{"id": k, "name": e.name, "type": e.type} for k, e in ents.items()],
        )
        stale = [{"id": uid, "keep": list(found)} for uid, found in per_unit.items()]
        touched = self._write_returning(cypher.delete_stale_mentions(), stale)
        mentions = [
            {"chunk": uid, "entity": k, "salience": e.salience, "count": e.occurrences}
            for uid, found in per_unit.items()
            for k, e in found.items()
        ]
        self._write(cypher.upsert_mentions(), mentions)
        self._write(cypher.refresh_entity_salience(), sorted(set(ents) | touched))
        pairs: set[tuple[str, str]] = set()
        for found in per_unit.values():
            ranked = sorted(found, key=lambda k: (-found[k].salience, k))
            pairs |= pairs_of(ranked, self.pair_entities)
        pairs |= self._pairs_touching(touched)
        self._refresh_pairs(pairs)
        self._drop_orphan_entities(touched)
        return WriteStats(entities=len(ents), mentions=len(mentions), pairs=len(pairs))

    def _pairs_touching(self, ids: Iterable[str]) -> set[tuple[str, str]]:
        ids = sorted(ids)
        if not ids:
            return set()
        rows = self.store.run(cypher.related_pairs_of(), {"ids": ids})
        return {(r["a"], r["b"]) if r["a"] < r["b"] else (r["b"], r["a"]) for r in rows}

    def _refresh_pairs(self, pairs: set[tuple[str, str]]) -> None:
        rows = [{"a": a, "b": b} for a, b in sorted(pairs)]
        self._write(cypher.upsert_cooccurrence(), rows)
        self._write(cypher.delete_dead_cooccurrence(), rows)

    def _drop_orphans(self, label: str, rel: str, ids: Iterable[str]) -> int:
        ids = sorted(set(ids))
        if not ids:
            return 0
        dead = [r["id"] for r in self.store.run(cypher.orphans(label, rel), {"ids": ids})]
        if dead:
            self.store.write(cypher.delete_nodes(label), {"ids": dead})
        return len(dead)

    def _drop_orphan_entities(self, ids: Iterable[str]) -> int:
        return self._drop_orphans("Entity", "MENTIONS", ids)

    def delete_doc(self, doc_id: str) -> DeleteStats:
        """Remove a document, its chunks and mentions, and entities/tags left orphaned."""
        found = bool(self.store.run(cypher.node_by_id("Doc"), {"ids": [doc_id]}))
        rows = self.store.run(cypher.doc_chunk_ids(), {"doc_id": doc_id})
        chunk_ids = sorted({r["id"] for r in rows if r["id"] is not None})
        entity_ids = [r["id"] for r in self.store.run(cypher.mentioned_by(), {"ids": chunk_ids})]
        links = self.store.run(cypher.doc_links(), {"doc_id": doc_id})
        if chunk_ids:
            self.store.write(cypher.delete_nodes("Chunk"), {"ids": chunk_ids})
        self.store.write(cypher.delete_nodes("Doc"), {"ids": [doc_id]})
        self._refresh_pairs(self._pairs_touching(entity_ids))
        removed = self._drop_orphan_entities(entity_ids)
        self._write(cypher.refresh_entity_salience(), sorted(entity_ids))
        tags = sum(
            self._drop_orphans(label, rel, [r["id"] for r in links if r["label"] == label])
            for label, rel in (("Tag", "HAS_TAG"), ("Category", "IN_CATEGORY"))
        )
        return DeleteStats(
            doc_id=doc_id,
            found=found or bool(chunk_ids),
            chunks=len(chunk_ids),
            entities=removed,
            tags=tags,
        )

    def write_records(self, records: Iterable[NodeRecord | EdgeRecord]) -> WriteStats:
        """Upsert explicit records (validated by :mod:`trilha.graph.records`)."""
        self.ensure_schema()
        nodes: dict[str, list[dict[str, Any]]] = defaultdict(list)
        edges: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
        for r in records:
            if isinstance(r, NodeRecord):
                nodes[r.label].append(_node_row(r))
            else:
                (sl, _), (tl, _) = r.endpoints()
                edges[(r.type, sl, tl)].append(_edge_row(r))
        for label, rows in nodes.items():
            self._write(cypher.upsert_nodes(label), rows)
        for (rel, sl, tl), rows in edges.items():
            self._write(cypher.upsert_edges(rel, sl, tl), rows)
        return WriteStats(nodes=sum(map(len, nodes.values())), edges=sum(map(len, edges.values())))


def _node_row(r: NodeRecord) -> dict[str, Any]:
    props: dict[str, Any] = {**r.props, "origin": "record"}
    if NODE_SPECS[r.label].named:
        props.setdefault("name", r.id)
    checked = NODE_SPECS[r.label].props.model_validate(props).model_dump(exclude_none=True)
    return {"id": node_key(r.label, r.id), "props": checked}


def _edge_row(r: EdgeRecord) -> dict[str, Any]:
    """Row of an explicit edge; RELATED (undirected) is stored from the smaller id."""
    (sl, si), (tl, ti) = r.endpoints()
    s_key, t_key = node_key(sl, si), node_key(tl, ti)
    if r.type == "RELATED" and s_key > t_key:
        (si, s_key), (ti, t_key) = (ti, t_key), (si, s_key)
    return {
        "source": s_key,
        "target": t_key,
        "s_name": si if NODE_SPECS[sl].named else None,
        "t_name": ti if NODE_SPECS[tl].named else None,
        "props": {**r.props, "origin": "record"},
    }
