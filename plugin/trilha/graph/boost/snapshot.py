"""An in-memory copy of what the KG boost reads, so that a warm process boosts without a graph read.

Each query's boost reads, for its few well-ranked candidates, the stored prior of each chunk,
the query entities it mentions with their salience, and how many visible chunks mention each
(:func:`trilha.graph.boost.statements.kg_boost`). That read is one round trip of about 1.5 ms
on the embedded server, most of it the server waking up, which is as much as the BM25 side and
the merge together. :class:`BoostSnapshot` holds the same data for the whole graph: per chunk
its two priors, its Doc and the access fields of both; per entity the chunks that mention it,
with their salience. :meth:`BoostSnapshot.rows` answers the boost read from it with the rows
the graph would return, so the arithmetic (:func:`trilha.graph.boost.score.scored`) is shared.

Visibility goes through the one compiled policy: the access fields of chunks and Docs are
:class:`~trilha.index.columns.MetaColumns`, and :meth:`~trilha.access.compiled.CompiledPolicy.
row_mask` (cached per principal and per snapshot) says which rows a principal sees, as it does
for the lexical index. A chunk it may not see gives no row; a Doc it may not see leaves the
chunk its own prior; an entity's document frequency (the graph reads it from access summaries)
and the corpus size (a count of the visible chunks) count only the chunks it sees.

:class:`SnapshotSlot` keeps one snapshot fresh:

* it is built on the boost's thread pool, off the query path, once :data:`BUILD_AFTER` boosts
  asked since the last write (a one-shot CLI query never pays for it), and only when the
  graph holds at most :data:`MAX_MENTIONS` mentions; until then the boost reads the graph;
* every write through the service drops it (:meth:`SnapshotSlot.forget`), and a build that a
  write overtook is thrown away; the memory's writes to the graph (retrieval jobs, turns)
  touch nothing the boost reads and keep it;
* on a store other processes may write (not the embedded server, which the workspace lock
  gives to one process), it is used for ``ttl_s`` after it was read, as the graph's read cache.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from trilha.access import ACCESS_KEYS, Principal
from trilha.access.compiled import POLICIES
from trilha.graph.boost import statements as cypher
from trilha.graph.boost.score import BoostResult, BoostWeights, entity_keys, gated_ids, scored
from trilha.graph.stores.base import GraphStore, Row
from trilha.index.columns import BoolArray, MetaColumns

logger = logging.getLogger(__name__)

#: Boosts asked since the last write before a snapshot is built.
BUILD_AFTER = 3
#: Graphs with more MENTIONS edges than this are not copied (~80 bytes each, ~300 while read).
MAX_MENTIONS = 2_000_000
#: The store that one process owns (the workspace lock): nobody else writes it.
OWNED_STORES = frozenset({"falkordb-embedded"})

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Postings:
    """The chunks (row numbers) mentioning one entity, and the salience of each mention."""

    rows: IntArray
    salience: dict[int, float]


@dataclass(frozen=True, eq=False)
class BoostSnapshot:
    """What the KG boost reads, for every chunk of the graph (see the module docstring)."""

    index: dict[str, int]
    chunks: MetaColumns
    docs: MetaColumns
    doc_rows: tuple[tuple[int, ...], ...]
    prior: tuple[float, ...]
    prior_own: tuple[float, ...]
    postings: dict[str, _Postings]

    def _seen(self, principal: Principal | None) -> tuple[BoolArray | None, BoolArray | None]:
        policy = POLICIES.get(principal or Principal.anonymous())
        return policy.row_mask(self.chunks), policy.row_mask(self.docs)

    def corpus_size(self, principal: Principal | None = None) -> int:
        """How many chunks ``principal`` (None: anonymous) sees."""
        chunks, _ = self._seen(principal)
        return self.chunks.n if chunks is None else int(chunks.sum())

    def rows(
        self, unit_ids: Sequence[str], keys: Sequence[str], principal: Principal | None = None
    ) -> list[Row]:
        """The rows :func:`~trilha.graph.boost.statements.kg_boost` gives for ``unit_ids`` and
        the entity ids ``keys`` as ``principal`` sees the graph: one per distinct chunk it
        sees, with ``prior`` and (when ``keys``) ``entities``."""
        chunks, docs = self._seen(principal)
        counts = {k: self._count(k, chunks) for k in keys}
        out: list[Row] = []
        for uid in dict.fromkeys(unit_ids):
            i = self.index.get(uid)
            if i is None or (chunks is not None and not chunks[i]):
                continue
            row: Row = {"uid": uid, "prior": self._prior(i, docs)}
            if keys:
                row["entities"] = [
                    {"id": k, "salience": self.postings[k].salience[i], "chunks": counts[k]}
                    for k in keys
                    if k in self.postings and i in self.postings[k].salience
                ]
            out.append(row)
        return out

    def _prior(self, i: int, docs: BoolArray | None) -> float:
        """``kg_prior`` when the principal sees one of the chunk's Docs, else ``kg_prior_own``."""
        prior, own = self.prior[i], self.prior_own[i]
        if prior == own or any(docs is None or docs[d] for d in self.doc_rows[i]):
            return prior
        return own

    def _count(self, key: str, chunks: BoolArray | None) -> int:
        """How many chunks the principal sees mention entity ``key``."""
        found = self.postings.get(key)
        if found is None:
            return 0
        return len(found.rows) if chunks is None else int(chunks[found.rows].sum())


def _access(row: Row, prefix: str) -> dict[str, Any]:
    """The access fields of one node, from columns named ``<prefix><field>``."""
    return {k: row[prefix + k] for k in ACCESS_KEYS if row.get(prefix + k) is not None}


def read_snapshot(store: GraphStore, max_mentions: int = MAX_MENTIONS) -> BoostSnapshot | None:
    """The snapshot of ``store``'s graph, in two reads; None when it holds more than
    ``max_mentions`` mentions (the boost then keeps reading the graph)."""
    if int(store.run(cypher.mention_count(), {})[0]["n"]) > max_mentions:
        return None
    index: dict[str, int] = {}
    doc_index: dict[str, int] = {}
    chunk_access: list[dict[str, Any]] = []
    doc_access: list[dict[str, Any]] = []
    doc_rows: list[list[int]] = []
    prior: list[float] = []
    own: list[float] = []
    for row in store.run(cypher.snapshot_chunks(ACCESS_KEYS), {}):
        i = index.get(row["id"])
        if i is None:
            i = index[row["id"]] = len(index)
            chunk_access.append(_access(row, "c_"))
            prior.append(float(row["prior"] or 0.0))
            own.append(float(row["own"] or 0.0))
            doc_rows.append([])
        if row["doc"] is not None:
            if row["doc"] not in doc_index:
                doc_index[row["doc"]] = len(doc_access)
                doc_access.append(_access(row, "d_"))
            doc_rows[i].append(doc_index[row["doc"]])
    return BoostSnapshot(
        index=index,
        chunks=MetaColumns(chunk_access),
        docs=MetaColumns(doc_access),
        doc_rows=tuple(tuple(d) for d in doc_rows),
        prior=tuple(prior),
        prior_own=tuple(own),
        postings=_postings(store.run(cypher.snapshot_mentions(), {}), index),
    )


def _postings(mentions: Iterable[Row], index: dict[str, int]) -> dict[str, _Postings]:
    """Per entity id, the chunks that mention it and the salience of each mention."""
    by_entity: defaultdict[str, dict[int, float]] = defaultdict(dict)
    for m in mentions:
        i = index.get(m["chunk"])
        if i is not None:
            seen = by_entity[m["entity"]]
            seen[i] = max(seen.get(i, 0.0), float(m["salience"] or 0.0))
    return {
        e: _Postings(np.fromiter(rows, dtype=np.int64, count=len(rows)), rows)
        for e, rows in by_entity.items()
    }


class SnapshotSlot:
    """One graph's :class:`BoostSnapshot`, built in the background and dropped on writes."""

    def __init__(
        self,
        store: GraphStore,
        pool: Executor,
        ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
        *,
        build_after: int = BUILD_AFTER,
        max_mentions: int = MAX_MENTIONS,
    ) -> None:
        self.store, self.pool, self.ttl_s, self._clock = store, pool, ttl_s, clock
        self.build_after, self.max_mentions = build_after, max_mentions
        self._owned = store.name in OWNED_STORES
        self._lock = threading.Lock()
        self._held: tuple[BoostSnapshot, float] | None = None
        self._generation = 0
        self._asked = 0
        self._building = False
        self._given_up: float | None = None

    def get(self) -> BoostSnapshot | None:
        """The snapshot when it is ready and fresh; otherwise None, and a build is started in
        the background once enough boosts asked since the last write."""
        with self._lock:
            held = self._held
            if held is not None and (self._owned or self._clock() - held[1] <= self.ttl_s):
                return held[0]
            self._asked += 1
            if self._building or self._asked < self.build_after or self._resting():
                return None
            self._building, generation = True, self._generation
        try:
            self.pool.submit(self._build, generation)
        except RuntimeError:  # the pool is shut down: the service is closing
            with self._lock:
                self._building = False
        return None

    def build(self) -> BoostSnapshot | None:
        """Build the snapshot now, on the caller's thread (a warm-up); None when the graph is too
        big to copy or cannot be read."""
        with self._lock:
            generation = self._generation
        self._build(generation)
        with self._lock:
            return None if self._held is None else self._held[0]

    def forget(self) -> None:
        """The graph was written: drop the snapshot, and any build that started before."""
        with self._lock:
            self._generation += 1
            self._held = None
            self._asked = 0
            self._given_up = None

    def _resting(self) -> bool:
        """A build found the graph too big or unreadable less than ``ttl_s`` ago."""
        return self._given_up is not None and self._clock() - self._given_up <= self.ttl_s

    def _build(self, generation: int) -> None:
        started = self._clock()
        try:
            snapshot = read_snapshot(self.store, self.max_mentions)
        except Exception as e:  # the boost keeps reading the graph, which degrades on its own
            logger.debug("cannot copy the graph for the KG boost: %s", e)
            snapshot = None
        with self._lock:
            self._building = False
            if generation != self._generation:
                return
            if snapshot is None:
                self._given_up = self._clock()
            else:
                self._held = (snapshot, started)


def snapshot_boost(
    snapshot: BoostSnapshot,
    unit_ids: Sequence[str],
    query_entities: Sequence[str],
    *,
    relevant: Collection[str] | None = None,
    principal: Principal | None = None,
    weights: BoostWeights | None = None,
) -> BoostResult:
    """:func:`~trilha.graph.boost.score.compute_kg_boost` answered from ``snapshot``: the same
    boosts, without a graph read."""
    if not unit_ids:
        return BoostResult(scores={})
    rows = snapshot.rows(gated_ids(unit_ids, relevant), entity_keys(query_entities), principal)
    return scored(unit_ids, rows, weights or BoostWeights(), snapshot.corpus_size(principal))
