"""Writing the graph: text units (Doc/Chunk/Entity/MENTIONS/Category/Tag and co-occurrence
RELATED), explicit records, document replacement and deletion, and orphan chunk removal.

Every write is a batched ``UNWIND`` of ``MERGE``/``SET`` with deterministic values, so running the
same input twice leaves the graph unchanged. Re-ingesting a unit replaces its extracted mentions
(mentions no longer extracted are deleted); RELATED co-occurrence counts are recomputed from the
graph, never incremented. A document whose content changed goes through :meth:`replace_doc`, which
writes the new units first and then removes the chunks that no longer exist, keeping the Doc and
the curated (record-origin) edges. Each write keeps the chunks' stored KG prior up to date
(:mod:`trilha.graph.boost.prior`).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from trilha.errors import BadRequestError
from trilha.graph.boost.prior import chunks_of_docs, chunks_touched_by, refresh_priors
from trilha.graph.boost.score import BoostWeights
from trilha.graph.build import statements as cypher
from trilha.graph.build.extract import EntityExtractor, ExtractedEntity, RuleEntityExtractor
from trilha.graph.build.mentions import write_mentions
from trilha.graph.build.records import EdgeRecord, NodeRecord, check_known, check_records
from trilha.graph.build.removal import (
    DeleteStats,
    doc_chunk_ids,
    drop_orphans,
    reattach_to_doc,
    remove_chunk_nodes,
)
from trilha.graph.build.rows import (
    chunk_rows,
    dedupe,
    doc_rows,
    link_rows,
    record_rows,
    summaries_touched,
)
from trilha.graph.build.summaries import refresh_summaries
from trilha.graph.stores.base import GraphStore, ensure_indexes, write_returning, write_rows
from trilha.graph.support import supported_pairs, upgrade_support
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
    removed: int = Field(0, description="Chunks removed (replace: no longer in the document).")
    reattached: int = Field(0, description="Record edges of removed chunks moved to their Doc.")


class GraphWriter:
    """Writes units, records and deletions into a :class:`GraphStore`."""

    def __init__(
        self,
        store: GraphStore,
        extractor: EntityExtractor | None = None,
        *,
        batch_size: int = 2000,
        pair_entities: int = 10,
        weights: BoostWeights | None = None,
    ) -> None:
        self.store = store
        self.extractor = extractor or RuleEntityExtractor()
        self.batch_size = batch_size
        self.pair_entities = pair_entities
        self.weights = weights or BoostWeights()
        self._schema_ready = False

    def ensure_schema(self) -> None:
        """Create the id indexes (once per writer)."""
        if not self._schema_ready:
            ensure_indexes(self.store)
            self._schema_ready = True

    def _write(self, statement: str, rows: Sequence[Any]) -> int:
        return write_rows(self.store, statement, rows, batch_size=self.batch_size)

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
            unlinked = write_returning(
                self.store, cypher.unlink_doc_stale(label, rel), keep, self.batch_size
            )
            self._write(cypher.link_doc(label, rel), links)
            drop_orphans(self.store, label, rel, unlinked)
        per_unit = {
            u.unit_id: dedupe(
                entities[u.unit_id]
                if entities and u.unit_id in entities
                else self.extractor.extract(u)
            )
            for u in units
        }
        entities_n, mentions_n, pairs_n = write_mentions(
            self.store, per_unit, pair_entities=self.pair_entities, batch_size=self.batch_size
        )
        self.refresh_priors(per_unit)
        return WriteStats(
            docs=len(docs),
            chunks=len(chunks),
            entities=entities_n,
            mentions=mentions_n,
            pairs=pairs_n,
        )

    def upgrade_support(self) -> int:
        """Give the RELATED edges written before access summaries existed theirs; how many."""
        return upgrade_support(self.store, self.batch_size)

    def lacks_access(self) -> bool:
        """True when some Doc or Chunk was stored without its access fields (an old graph)."""
        return any(self.store.run(cypher.without_access(label)) for label in ("Chunk", "Doc"))

    def write_access(self, units: Sequence[TextUnit]) -> int:
        """Set the Doc and Chunk properties (access fields included) of ``units`` again,
        leaving their entities and links alone, and the access summaries those chunks are in;
        returns the units written."""
        self._write(cypher.upsert_nodes("Doc"), doc_rows(units))
        written = self._write(cypher.upsert_chunks(), chunk_rows(units))
        refresh_summaries(self.store, set(), [u.unit_id for u in units], self.batch_size)
        return written

    def refresh_priors(self, chunk_ids: Iterable[str]) -> int:
        """Recompute the stored KG prior of ``chunk_ids``."""
        return refresh_priors(self.store, chunk_ids, self.weights, self.batch_size)

    def delete_doc(self, doc_id: str) -> DeleteStats:
        """Remove a document, its chunks and mentions, and entities/tags left orphaned (record
        edges to the Doc or its chunks go too: the document no longer exists)."""
        found = bool(self.store.run(cypher.node_by_id("Doc"), {"ids": [doc_id]}))
        chunk_ids = doc_chunk_ids(self.store, doc_id)
        links = self.store.run(cypher.doc_links(), {"doc_id": doc_id})
        removed = remove_chunk_nodes(self.store, chunk_ids, self.batch_size)
        self.store.write(cypher.delete_nodes("Doc"), {"ids": [doc_id]})
        tags = sum(
            drop_orphans(self.store, label, rel, [r["id"] for r in links if r["label"] == label])
            for label, rel in (("Tag", "HAS_TAG"), ("Category", "IN_CATEGORY"))
        )
        return DeleteStats(
            doc_id=doc_id,
            found=found or bool(chunk_ids),
            chunks=len(chunk_ids),
            entities=removed,
            tags=tags,
        )

    def replace_doc(
        self,
        doc_id: str,
        units: Sequence[TextUnit],
        entities: Mapping[str, Sequence[ExtractedEntity]] | None = None,
    ) -> WriteStats:
        """Make the graph hold ``units`` as the whole of document ``doc_id``.

        The new units are written first (so a failure leaves the old or a superset, never
        nothing); then the doc's chunks not among ``units`` are removed with their mentions.
        The Doc node and every record-origin edge stay: a record edge of a removed chunk
        (HAS_CRITERIO/HAS_FATO/HAS_PROVA from it, REFERENCES to it) moves to the Doc; one whose
        type cannot end at a Doc (a record MENTIONS) goes with the chunk. No units at all means
        the document is gone: :meth:`delete_doc`.
        """
        strangers = sorted({u.doc_id for u in units} - {doc_id})
        if strangers:
            raise BadRequestError(
                f"replace_doc({doc_id!r}) got units of other documents: {', '.join(strangers)}"
            )
        if not units:
            self.delete_doc(doc_id)
            return WriteStats()
        stats = self.upsert_units(units, entities)
        keep = {u.unit_id for u in units}
        stale = [c for c in doc_chunk_ids(self.store, doc_id) if c not in keep]
        moved = reattach_to_doc(self.store, doc_id, stale)
        remove_chunk_nodes(self.store, stale, self.batch_size)
        if moved:
            self.refresh_priors(chunks_of_docs(self.store, [doc_id]))
        return stats.model_copy(update={"removed": len(stale), "reattached": moved})

    def remove_chunks(
        self, unit_ids: Sequence[str], *, keep_docs: Collection[str] | None = None
    ) -> int:
        """Remove the chunks ``unit_ids`` (orphans: the unit store lacks them) with their
        mentions and the entities left orphaned; returns how many chunks existed.

        A Doc left without chunks goes too (with its record edges), since the unit store holds
        no unit of it, unless it is in ``keep_docs`` (documents the unit store still holds,
        whose units are about to be written again).
        """
        ids = sorted(set(unit_ids))
        rows = self.store.run(cypher.chunk_docs(), {"ids": ids}) if ids else []
        found = sorted({r["id"] for r in rows})
        remove_chunk_nodes(self.store, found, self.batch_size)
        docs = {r["doc"] for r in rows if r["doc"] is not None} - set(keep_docs or ())
        emptied = sorted(d for d in docs if not doc_chunk_ids(self.store, d))
        for doc in emptied:
            self.delete_doc(doc)
        return len(found)

    def ids(self, label: str) -> set[str]:
        """Ids of every ``label`` node (Chunk ids are unit ids, Doc ids doc ids)."""
        return {r["id"] for r in self.store.run(cypher.all_ids(label), {})}

    def write_records(
        self,
        records: Iterable[NodeRecord | EdgeRecord],
        *,
        known_docs: Collection[str] | None = None,
        known_units: Collection[str] | None = None,
        access_defaults: Mapping[str, Any] | None = None,
    ) -> WriteStats:
        """Upsert explicit records, all checked before any is written: valid
        (:mod:`trilha.graph.build.records`), naming only Docs in ``known_docs`` and Chunks in
        ``known_units`` (when given), and with valid access fields: a Task, User... node gets
        those of its props over ``access_defaults`` (the workspace's; public, sensitivity 0,
        level 0 when None). One :class:`BadRequestError` lists every bad record. A record
        node created only as an edge's end has no access fields: nobody sees it until a node
        record gives them."""
        batch = records if isinstance(records, Sequence) else list(records)
        check_records(batch)
        check_known(
            batch,
            None if known_docs is None else frozenset(known_docs),
            None if known_units is None else frozenset(known_units),
        )
        nodes, edges = record_rows(batch, access_defaults)
        self.ensure_schema()
        chunks, pairs = summaries_touched(batch)
        before = supported_pairs(self.store, chunks)
        for label, rows in nodes.items():
            self._write(cypher.upsert_nodes(label), rows)
        for (rel, sl, tl), rows in edges.items():
            for part in edge_rounds(self.store, rows):
                self._write(cypher.upsert_edges(rel, sl, tl), part)
        refresh_summaries(self.store, before | pairs, sorted(chunks), self.batch_size)
        self.refresh_priors(chunks_touched_by(self.store, batch))
        return WriteStats(nodes=sum(map(len, nodes.values())), edges=sum(map(len, edges.values())))


def edge_rounds(
    store: GraphStore, rows: Sequence[dict[str, Any]]
) -> list[Sequence[dict[str, Any]]]:
    """Record edges in one go; over Bolt (ArcadeDB refuses two new edges on one vertex in one
    statement: "edge list not visible yet"), in rounds where no node appears twice."""
    if store.dialect.name != "cypher":
        return [rows]
    return list(disjoint_rounds(rows))


def disjoint_rounds(rows: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """``rows`` (edges with ``source`` and ``target``) split into rounds, in order, where no
    node id is an end of two edges of one round."""
    rounds: list[tuple[set[str], list[dict[str, Any]]]] = []
    for row in rows:
        ends = {row["source"], row["target"]}
        for used, members in rounds:
            if not used & ends:
                used |= ends
                members.append(row)
                break
        else:
            rounds.append((ends, [row]))
    return [members for _, members in rounds]
