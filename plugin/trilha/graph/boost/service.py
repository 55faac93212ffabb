"""The KG boost of one graph store, as the service runs it: gated, time-bounded, logged.

:class:`~trilha.graph.boost.gate.BoostGate` says when there is nothing to read (no curated
evidence the principal sees) and holds the thread pool; :mod:`trilha.graph.boost.score` reads
and scores.
A boost never raises for graph trouble (it returns zeros and a warning) and its result is not
cached; once a process boosts repeatedly it is answered from an in-memory copy of the boost data
(:mod:`trilha.graph.boost.snapshot`), dropped on every write.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Collection, Sequence
from typing import Any

from trilha.access import Principal
from trilha.graph.boost.gate import BoostGate
from trilha.graph.boost.score import BoostResult, acompute_kg_boost, compute_kg_boost, gated_ids
from trilha.graph.boost.snapshot import snapshot_boost
from trilha.graph.log import RetrievalLog
from trilha.graph.stores.base import GraphStore


class KGBooster:
    """KG boosts over ``store`` within ``timeout_s``; async calls on one event loop share
    ``max_concurrency``."""

    def __init__(
        self,
        store: GraphStore,
        gate: BoostGate,
        *,
        timeout_s: float,
        max_concurrency: int,
        log: RetrievalLog | None = None,
    ) -> None:
        self.store = store
        self.timeout_s = timeout_s
        self.max_concurrency = max_concurrency
        self.log = log
        self._gate = gate
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def boost(
        self,
        unit_ids: Sequence[str],
        query_entities: Sequence[str],
        *,
        relevant: Collection[str] | None = None,
        principal: Principal | None = None,
    ) -> BoostResult:
        """KG boost as ``principal`` sees the graph (None: anonymous) within ``timeout_s``
        (never raises for graph trouble; no result is cached, but a warm process answers from
        its in-memory copy of the graph); only ``relevant`` units are read and may score
        (every unit when None). When the graph holds no curated evidence ``principal`` sees
        (and entities alone do not count), every boost is 0 and the graph is not asked."""
        nothing = self._gate.nothing_to_read(unit_ids, query_entities, principal)
        if nothing is not None:
            return nothing
        start = time.perf_counter()
        result = self._from_snapshot(unit_ids, query_entities, relevant, principal)
        if result is None:
            result = compute_kg_boost(
                self.store,
                unit_ids,
                query_entities,
                self.timeout_s,
                relevant=relevant,
                executor=self._gate.pool,
                corpus_size=self._gate.corpus_size(principal),
                principal=principal,
            )
        self._log(gated_ids(unit_ids, relevant), len(unit_ids), query_entities, result, start)
        return result

    async def aboost(
        self,
        unit_ids: Sequence[str],
        query_entities: Sequence[str],
        *,
        relevant: Collection[str] | None = None,
        batch_size: int | None = None,
        principal: Principal | None = None,
    ) -> BoostResult:
        """Async KG boost (as :meth:`boost`); all calls on one event loop share
        ``max_concurrency``."""
        loop = asyncio.get_running_loop()
        gate = self._loops.setdefault(loop, asyncio.Semaphore(self.max_concurrency))
        nothing = await asyncio.to_thread(
            self._gate.nothing_to_read, unit_ids, query_entities, principal
        )
        if nothing is not None:
            return nothing
        start = time.perf_counter()
        result = self._from_snapshot(unit_ids, query_entities, relevant, principal)
        if result is None:
            result = await acompute_kg_boost(
                self.store,
                unit_ids,
                query_entities,
                self.timeout_s,
                relevant=relevant,
                batch_size=batch_size,
                semaphore=gate,
                corpus_size=await asyncio.to_thread(self._gate.corpus_size, principal),
                principal=principal,
            )
        self._log(gated_ids(unit_ids, relevant), len(unit_ids), query_entities, result, start)
        return result

    def prepare(self) -> bool:
        """Build the in-memory copy of the boost data now, as a warm process has it
        (:mod:`trilha.graph.boost.snapshot`); False when the graph is too big or unreadable."""
        return self._gate.prepare()

    def _from_snapshot(
        self,
        unit_ids: Sequence[str],
        query_entities: Sequence[str],
        relevant: Collection[str] | None,
        principal: Principal | None,
    ) -> BoostResult | None:
        """The boost from the in-memory copy of the graph, or None while there is none."""
        snapshot = self._gate.snapshot.get()
        if snapshot is None:
            return None
        return snapshot_boost(
            snapshot, unit_ids, query_entities, relevant=relevant, principal=principal
        )

    def _log(
        self,
        read: Sequence[str],
        candidates: int,
        entities: Sequence[str],
        result: BoostResult,
        start: float,
    ) -> None:
        """Log a boost: the units read from the graph (the relevant ones) and how many
        candidates there were."""
        if self.log is not None:
            query: dict[str, Any] = {
                "op": "kg_boost",
                "unit_ids": list(read),
                "candidates": candidates,
                "query_entities": list(entities),
                "warning": result.warning,
            }
            self.log.append(query, len(result.scores), (time.perf_counter() - start) * 1000, False)
