"""The graph writes of :class:`~trilha.graph.service.GraphService`: units, records, access
upgrades, document replacement and deletion, and the id listings that consistency checks compare.

Every write calls :meth:`GraphWrites.changed` before and after it (:meth:`GraphWrites._writing`),
which the service overrides to forget what it cached: what was read while a write was under way
does not outlive it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from trilha.graph.build.extract import ExtractedEntity
from trilha.graph.build.records import EdgeRecord, NodeRecord
from trilha.graph.build.removal import DeleteStats
from trilha.graph.build.writer import GraphWriter, WriteStats
from trilha.types import TextUnit


class GraphWrites:
    """Writes through one :class:`GraphWriter`."""

    writer: GraphWriter

    def changed(self) -> None:
        """Called before and after every write; a no-op here."""

    @contextmanager
    def _writing(self) -> Iterator[None]:
        self.changed()
        try:
            yield
        finally:
            self.changed()

    def ingest(
        self,
        units: Sequence[TextUnit],
        entities: Mapping[str, Sequence[ExtractedEntity]] | None = None,
    ) -> WriteStats:
        """Upsert units into the graph (clears the cache)."""
        with self._writing():
            return self.writer.upsert_units(units, entities)

    def write_records(
        self,
        records: Iterable[NodeRecord | EdgeRecord],
        *,
        known_docs: Collection[str] | None = None,
        known_units: Collection[str] | None = None,
        access_defaults: Mapping[str, Any] | None = None,
    ) -> WriteStats:
        """Upsert explicit records (clears the cache). All are checked first; records naming a
        Doc not in ``known_docs`` or a Chunk not in ``known_units`` (when given), or with bad
        access fields (Task, User... nodes get theirs over ``access_defaults``), are refused
        with one :class:`BadRequestError` that lists them, and nothing is written."""
        with self._writing():
            return self.writer.write_records(
                records,
                known_docs=known_docs,
                known_units=known_units,
                access_defaults=access_defaults,
            )

    def upgrade_access(self, units: Callable[[], Iterable[TextUnit]]) -> int:
        """When the graph holds Docs or Chunks without access fields (written before they
        existed), write those of every unit again (``units`` yields the unit store's);
        returns how many units were rewritten (0: nothing to do). Until then such nodes are
        seen by nobody: the policy fails closed on a missing field. RELATED edges without an
        access summary get one first (until then they are seen by nobody either)."""
        if self.writer.upgrade_support():  # written: forget what was read before
            self.changed()
        if not self.writer.lacks_access():
            return 0
        with self._writing():
            batch: list[TextUnit] = []
            written = 0
            for unit in units():
                batch.append(unit)
                if len(batch) >= self.writer.batch_size:
                    written += self.writer.write_access(batch)
                    batch = []
            return written + (self.writer.write_access(batch) if batch else 0)

    def replace_doc(self, doc_id: str, units: Sequence[TextUnit]) -> WriteStats:
        """Replace document ``doc_id`` by ``units``, keeping its Doc node and curated (record)
        edges (clears the cache); see :meth:`GraphWriter.replace_doc`."""
        with self._writing():
            return self.writer.replace_doc(doc_id, units)

    def delete_doc(self, doc_id: str) -> DeleteStats:
        """Delete a document from the graph, record edges included (clears the cache)."""
        with self._writing():
            return self.writer.delete_doc(doc_id)

    def chunk_ids(self) -> set[str]:
        """Ids of every Chunk node (unit ids), to compare with the unit store."""
        return self.writer.ids("Chunk")

    def doc_ids(self) -> set[str]:
        """Ids of every Doc node, whether or not it still holds chunks (a Doc without chunks
        is one the unit store should explain, or an orphan)."""
        return self.writer.ids("Doc")

    def remove_chunks(
        self, unit_ids: Sequence[str], *, keep_docs: Collection[str] | None = None
    ) -> int:
        """Remove orphan chunks (ids the unit store lacks), their mentions, orphaned entities,
        and Docs left without chunks unless in ``keep_docs`` (clears the cache); returns how
        many chunks existed. See :meth:`GraphWriter.remove_chunks`."""
        with self._writing():
            return self.writer.remove_chunks(unit_ids, keep_docs=keep_docs)
