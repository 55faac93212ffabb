"""The graph facade: one store, the seed 003 queries, a TTL cache, the retrieval log, KG boost,
context.md, and the writes (which clear the cache).

``open_graph_store(settings, data_dir)`` builds the store the settings ask for:

* ``graph_backend='falkordb'`` without ``graph_url``: embedded FalkorDB in ``data_dir``
  (default ``<workspace>/graph``); with ``graph_url``: that FalkorDB/redis server;
* ``graph_backend='bolt'``: ``graph_url`` (required), user, password, database;
* ``graph_backend='none'``: no store (None).

Every read takes ``principal`` (None: anonymous) and returns only what it may see
(:mod:`trilha.graph.read`). The cache is keyed by the principal's
:func:`~trilha.access.scope_key` and the retrieval log records that key, never the principal's
attributes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import weakref
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from trilha.access import Principal, scope_key
from trilha.errors import ConfigurationError
from trilha.graph.boost.gate import BoostGate
from trilha.graph.boost.score import (
    BoostResult,
    acompute_kg_boost,
    compute_kg_boost,
    gated_ids,
)
from trilha.graph.build.extract import ExtractedEntity
from trilha.graph.build.records import EdgeRecord, NodeRecord
from trilha.graph.build.writer import DeleteStats, GraphWriter, WriteStats
from trilha.graph.export.context import build_context, render_context_md
from trilha.graph.log import RetrievalLog
from trilha.graph.read.cache import TTLCache
from trilha.graph.read.path import path as read_path
from trilha.graph.read.results import PathResult, SubgraphResult, TopNResult
from trilha.graph.read.subgraph import subgraph as read_subgraph
from trilha.graph.read.topn import topn as read_topn
from trilha.graph.stores.base import GraphStore
from trilha.settings import TrilhaSettings
from trilha.types import TextUnit

logger = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)


def open_graph_store(settings: TrilhaSettings, data_dir: Path | None = None) -> GraphStore | None:
    """The graph store configured by ``settings`` (None for ``graph_backend='none'``)."""
    if settings.graph_backend == "none":
        return None
    graph = settings.graph_database or "trilha"
    if settings.graph_backend == "falkordb":
        from trilha.graph.stores.falkordb import FalkorDBStore

        if settings.graph_url:
            return FalkorDBStore.connect(settings.graph_url, graph)
        return FalkorDBStore.embedded(Path(data_dir or settings.workspace / "graph"), graph)
    if not settings.graph_url:
        raise ConfigurationError("graph_backend='bolt' needs TRILHA_GRAPH_URL (bolt://host:7687)")
    from trilha.graph.stores.bolt import BoltGraphStore

    return BoltGraphStore(
        settings.graph_url,
        settings.graph_user,
        settings.graph_password,
        settings.graph_database,
        timeout_s=max(settings.graph_timeout_s, 5.0),
    )


class GraphService:
    """Cached, logged graph retrieval over one :class:`GraphStore`."""

    def __init__(
        self,
        store: GraphStore,
        *,
        log: RetrievalLog | None = None,
        cache_ttl_s: float = 60.0,
        cache_size: int = 256,
        boost_timeout_s: float = 2.0,
        max_concurrency: int = 20,
        writer: GraphWriter | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.log = log
        self.boost_timeout_s = boost_timeout_s
        self.max_concurrency = max_concurrency
        self.writer = writer or GraphWriter(store)
        self._cache: TTLCache[BaseModel] = TTLCache(cache_ttl_s, cache_size, clock)
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._gate = BoostGate(store, self.writer.weights, boost_timeout_s, cache_ttl_s, clock)

    @classmethod
    def from_settings(
        cls, settings: TrilhaSettings, data_dir: Path | None = None, log_path: Path | None = None
    ) -> GraphService:
        """A service over :func:`open_graph_store`, logging to ``log_path``
        (default ``<data_dir or workspace/graph>/retrieval-log.jsonl``)."""
        store = open_graph_store(settings, data_dir)
        if store is None:
            raise ConfigurationError("graph_backend is 'none': there is no graph to serve")
        folder = Path(data_dir or settings.workspace / "graph")
        return cls(
            store,
            log=RetrievalLog(log_path or folder / "retrieval-log.jsonl"),
            boost_timeout_s=settings.graph_timeout_s,
            max_concurrency=settings.kg_boost_max_concurrency,
        )

    def _call(
        self,
        op: str,
        args: dict[str, Any],
        principal: Principal | None,
        run: Callable[[], R],
        count: Callable[[R], int],
    ) -> R:
        scope = scope_key(principal or Principal.anonymous())
        key = json.dumps(
            {"op": op, **args, "scope": scope}, sort_keys=True, ensure_ascii=False, default=str
        )
        start = time.perf_counter()
        cached = self._cache.get(key)
        if cached is not None:
            result = cast(R, cached.model_copy(deep=True))
        else:
            result = run()
            self._cache.put(key, result.model_copy(deep=True))
        if self.log is not None:
            query = json.loads(key)
            self.log.append(
                query, count(result), (time.perf_counter() - start) * 1000, cached is not None
            )
        return result

    def subgraph(
        self,
        doc_id: str,
        entity_names: Sequence[str] | None = None,
        max_hops: int = 2,
        limit: int = 30,
        *,
        principal: Principal | None = None,
    ) -> SubgraphResult:
        """:func:`~trilha.graph.read.read_subgraph` as ``principal`` sees it, cached, logged."""
        args = {
            "doc_id": doc_id,
            "entity_names": entity_names,
            "max_hops": max_hops,
            "limit": limit,
        }
        return self._call(
            "subgraph",
            args,
            principal,
            lambda: read_subgraph(
                self.store, doc_id, entity_names, max_hops, limit, principal=principal
            ),
            lambda r: len(r.nodes),
        )

    def path(
        self,
        source_entity: str,
        target_entity: str,
        max_length: int = 4,
        *,
        principal: Principal | None = None,
    ) -> PathResult:
        """:func:`trilha.graph.read.read_path` as ``principal`` sees it, cached and logged."""
        args = {
            "source_entity": source_entity,
            "target_entity": target_entity,
            "max_length": max_length,
        }
        return self._call(
            "path",
            args,
            principal,
            lambda: read_path(
                self.store, source_entity, target_entity, max_length, principal=principal
            ),
            lambda r: len(r.path),
        )

    def topn(
        self,
        entity_names: Sequence[str] | None = None,
        category: str | None = None,
        language: str | None = None,
        limit: int = 5,
        *,
        reasons_lang: str = "en",
        principal: Principal | None = None,
    ) -> TopNResult:
        """:func:`trilha.graph.read.read_topn` (reasons in ``reasons_lang``) as ``principal``
        sees it, cached and logged."""
        args = {
            "entity_names": entity_names,
            "category": category,
            "language": language,
            "limit": limit,
            "reasons_lang": reasons_lang,
        }
        return self._call(
            "topn",
            args,
            principal,
            lambda: read_topn(
                self.store,
                entity_names,
                category,
                language,
                limit,
                reasons_lang=reasons_lang,
                principal=principal,
            ),
            lambda r: len(r.items),
        )

    def kg_boost(
        self,
        unit_ids: Sequence[str],
        query_entities: Sequence[str],
        *,
        relevant: Collection[str] | None = None,
        principal: Principal | None = None,
    ) -> BoostResult:
        """KG boost as ``principal`` sees the graph (None: anonymous) within
        ``boost_timeout_s`` (never raises for graph trouble; not cached); only ``relevant``
        units are read and may score (every unit when None). When the query names no entity
        and the graph holds no curated evidence, every boost is 0 and the graph is not
        asked."""
        nothing = self._gate.nothing_to_read(unit_ids, query_entities)
        if nothing is not None:
            return nothing
        start = time.perf_counter()
        result = compute_kg_boost(
            self.store,
            unit_ids,
            query_entities,
            self.boost_timeout_s,
            relevant=relevant,
            executor=self._gate.pool,
            corpus_size=self._gate.corpus_size(principal),
            principal=principal,
        )
        self._log_boost(gated_ids(unit_ids, relevant), len(unit_ids), query_entities, result, start)
        return result

    async def akg_boost(
        self,
        unit_ids: Sequence[str],
        query_entities: Sequence[str],
        *,
        relevant: Collection[str] | None = None,
        batch_size: int | None = None,
        principal: Principal | None = None,
    ) -> BoostResult:
        """Async KG boost (as :meth:`kg_boost`); all calls on one event loop share
        ``max_concurrency``."""
        loop = asyncio.get_running_loop()
        gate = self._gates.setdefault(loop, asyncio.Semaphore(self.max_concurrency))
        nothing = await asyncio.to_thread(self._gate.nothing_to_read, unit_ids, query_entities)
        if nothing is not None:
            return nothing
        start = time.perf_counter()
        result = await acompute_kg_boost(
            self.store,
            unit_ids,
            query_entities,
            self.boost_timeout_s,
            relevant=relevant,
            batch_size=batch_size,
            semaphore=gate,
            corpus_size=await asyncio.to_thread(self._gate.corpus_size, principal),
            principal=principal,
        )
        self._log_boost(gated_ids(unit_ids, relevant), len(unit_ids), query_entities, result, start)
        return result

    def _changed(self) -> None:
        """Forget what was read (a write happened)."""
        self._cache.clear()
        self._gate.forget()

    def _log_boost(
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

    def context_md(
        self,
        doc_id: str | None = None,
        entity_names: Sequence[str] = (),
        *,
        category: str | None = None,
        language: str | None = None,
        limit: int = 5,
        lang: str = "en",
        principal: Principal | None = None,
    ) -> str:
        """context.md (seed 003 §5) from a doc's subgraph, the path between the first two
        entities and the top-N documents, all as ``principal`` sees them; headings and reasons
        in the template language ``lang`` ('en', 'pt', 'zh'), whatever the document-language
        filter ``language``. Without ``doc_id``, the subgraph is that of the entities' best
        top-N document (one the principal sees)."""
        who = principal
        names = list(entity_names) or None
        top = self.topn(names, category, language, limit, reasons_lang=lang, principal=who)
        if doc_id is None and entity_names and top.items:
            doc_id = top.items[0].doc_id
        sub = self.subgraph(doc_id, names, principal=who) if doc_id else None
        between = (
            self.path(entity_names[0], entity_names[1], principal=who)
            if len(entity_names) >= 2
            else None
        )
        data = build_context(sub, between, top.items, entity_names=entity_names, limit=limit)
        return render_context_md(data, lang)

    def ingest(
        self,
        units: Sequence[TextUnit],
        entities: Mapping[str, Sequence[ExtractedEntity]] | None = None,
    ) -> WriteStats:
        """Upsert units into the graph (clears the cache)."""
        self._changed()
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
        self._changed()
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
        if self.writer.upgrade_support():
            self._changed()
        if not self.writer.lacks_access():
            return 0
        self._changed()
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
        self._changed()
        return self.writer.replace_doc(doc_id, units)

    def delete_doc(self, doc_id: str) -> DeleteStats:
        """Delete a document from the graph, record edges included (clears the cache)."""
        self._changed()
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
        self._changed()
        return self.writer.remove_chunks(unit_ids, keep_docs=keep_docs)

    def close(self) -> None:
        """Close the store (stopping an embedded server) and the boost threads."""
        self._gate.close()
        self.store.close()
