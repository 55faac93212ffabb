"""Mirroring the memory into the graph: ``:RetrievalJob`` nodes with their ``RETURNED`` links,
and conversation turns as ``:Memory`` nodes (seed 004: "the graph when configured").

Both node kinds are personal: ``owner_id`` is the user, ``visibility`` is ``'private'`` and the
other access fields are checked like any record's (:func:`~trilha.graph.visibility.record_access`),
so the graph reads show them to their owner only. ``RETURNED`` edges are merged only to nodes that
exist: a ref naming a missing node, or a label RETURNED may not point to, links nothing (the job
keeps the full list in its ``returned`` property). Every statement is parametrised; labels come
from the model's allow-list.

The SQLite stores stay the truth: a mirror write that fails is reported as a warning string (and
logged once per mirror), never raised, so the record already written is not lost.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Self

from trilha.errors import TrilhaError
from trilha.graph.build.statements import upsert_nodes
from trilha.graph.model import EDGE_SPECS, check_label, node_key
from trilha.graph.stores.base import GraphStore, ensure_indexes
from trilha.graph.visibility import record_access
from trilha.memory.turns import Turn, stamp

if TYPE_CHECKING:
    from trilha.graph.service import GraphService
    from trilha.memory.jobs import RetrievalJob

logger = logging.getLogger(__name__)

_PRIVATE = {"visibility": "private"}
_RETURNABLE = EDGE_SPECS["RETURNED"].targets


def returned_statement(label: str) -> str:
    """Merge RETURNED from job ``$job`` to the ``label`` nodes whose ids are ``$rows``, when
    they exist; returns the ids linked."""
    return (
        f"UNWIND $rows AS k MATCH (j:RetrievalJob {{id: $job}}) "
        f"MATCH (t:{check_label(label)} {{id: k}}) MERGE (j)-[:RETURNED]->(t) RETURN t.id AS id"
    )


def returned_by_label(refs: Sequence[str]) -> dict[str, list[str]]:
    """``'Label:id'`` refs grouped by the labels RETURNED may point to (stored ids); refs of
    other or unknown labels are left out."""
    groups: dict[str, list[str]] = defaultdict(list)
    for ref in refs:
        label, sep, raw = ref.partition(":")
        if sep and raw and label in _RETURNABLE:
            groups[label].append(node_key(label, raw))
    return dict(groups)


def job_props(job: RetrievalJob) -> dict[str, Any]:
    """The node properties of ``job``: its scalar fields, ``prequery`` as JSON text
    (``prequery_json``), ``returned`` as a list, and private access fields."""
    data = job.model_dump(mode="json", exclude={"id", "prequery", "returned"}, exclude_none=True)
    data.update(
        created_at=stamp(job.created_at),
        prequery_json=json.dumps(job.prequery, ensure_ascii=False, sort_keys=True),
        returned=list(job.returned),
    )
    access = record_access("RetrievalJob", {"owner_id": job.user_id, **_PRIVATE}, {})
    return {**data, **access}


def turn_props(turn: Turn) -> dict[str, Any]:
    """The ``:Memory`` node properties of ``turn`` (episodic, private to its user)."""
    data = {
        "text": turn.text,
        "role": turn.role,
        "conversation_id": turn.conversation_id,
        "created_at": stamp(turn.created_at),
        "memory_class": "episodic",
        "source_ref": f"conversation:{turn.conversation_id}",
    }
    given = {"owner_id": turn.user_id, "project_id": turn.project_id, **_PRIVATE}
    return {**data, **record_access("Memory", given, {})}


class _Mirror:
    """What both mirrors share: the store, the cache hook, the index and the degrade policy."""

    label = ""

    def __init__(self, store: GraphStore, *, changed: Callable[[], None] | None = None) -> None:
        self.store = store
        self.changed = changed
        self._indexed = False
        self._warned = False

    @classmethod
    def for_service(cls, service: GraphService) -> Self:
        """A mirror writing into ``service``'s store and clearing its read cache."""
        return cls(service.store, changed=service.memory_changed)

    def _prepare(self) -> None:
        if self.changed is not None:
            self.changed()
        if not self._indexed:
            ensure_indexes(self.store, [(self.label, "id")])
            self._indexed = True

    def _degrade(self, what: str, error: TrilhaError) -> str:
        warning = f"graph mirror of {what} failed, kept in SQLite only: {error}"
        if not self._warned:
            logger.warning(warning)
            self._warned = True
        return warning


class JobGraphWriter(_Mirror):
    """Writes :class:`~trilha.memory.jobs.RetrievalJob` nodes and their RETURNED edges."""

    label = "RetrievalJob"

    def write(self, job: RetrievalJob) -> str | None:
        """Upsert ``job``'s node and link what it returned; None, or a warning if it failed."""
        try:
            self._prepare()
            row = {"id": job.id, "props": job_props(job)}
            self.store.write(upsert_nodes("RetrievalJob"), {"rows": [row]})
            for label, ids in returned_by_label(job.returned).items():
                self.store.write(returned_statement(label), {"job": job.id, "rows": ids})
        except TrilhaError as e:
            return self._degrade(f"retrieval job {job.id}", e)
        return None

    def linked(self, job_id: str) -> list[str]:
        """Refs (``'Label:id'``) of the nodes job ``job_id`` is RETURNED-linked to, sorted."""
        rows = self.store.run(
            "MATCH (:RetrievalJob {id: $job})-[:RETURNED]->(t) "
            "RETURN labels(t)[0] AS label, t.id AS id",
            {"job": job_id},
        )
        return sorted(f"{r['label']}:{r['id']}" for r in rows)


class GraphMemoryMirror(_Mirror):
    """Writes conversation turns as private, episodic ``:Memory`` nodes."""

    label = "Memory"

    def write(self, turns: Sequence[Turn]) -> str | None:
        """Upsert one ``:Memory`` node per turn (id: the turn id); None, or a warning."""
        rows = [{"id": t.turn_id, "props": turn_props(t)} for t in turns]
        try:
            self._prepare()
            self.store.write(upsert_nodes("Memory"), {"rows": rows})
        except TrilhaError as e:
            return self._degrade(f"{len(rows)} turn(s)", e)
        return None
