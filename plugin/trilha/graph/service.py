"""The graph facade: one store, the seed 003 queries, a TTL cache, the retrieval log, KG boost,
context.md, the writes (:class:`~trilha.graph.writes.GraphWrites`; each clears the cache) and
the profile reads of seed 004 (:class:`~trilha.graph.read.profile_reads.ProfileReads`).
The store comes from :func:`~trilha.graph.stores.factory.open_graph_store`.

Every read takes ``principal`` (None: anonymous) and returns only what it may see
(:mod:`trilha.graph.read`). The cache is keyed by the principal's
:func:`~trilha.access.scope_key` and the retrieval log records that key, never the principal's
attributes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from trilha.access import Principal
from trilha.errors import ConfigurationError
from trilha.graph.boost.service import BoostGate, KGBooster
from trilha.graph.build.writer import GraphWriter
from trilha.graph.export.context import build_context, render_context_md
from trilha.graph.log import RetrievalLog
from trilha.graph.read.cache import CachedReads
from trilha.graph.read.path import path as read_path
from trilha.graph.read.profile_reads import ProfileReads
from trilha.graph.read.results import PathResult, SubgraphResult, TopNResult
from trilha.graph.read.subgraph import subgraph as read_subgraph
from trilha.graph.read.topn import topn as read_topn
from trilha.graph.stores.base import GraphStore
from trilha.graph.stores.factory import graph_folder, open_graph_store
from trilha.graph.writes import GraphWrites
from trilha.retrieve.cache import TTLCache
from trilha.settings import TrilhaSettings

logger = logging.getLogger(__name__)


class GraphService(GraphWrites, ProfileReads):
    """Cached, logged graph retrieval over one :class:`GraphStore`."""

    def __init__(
        self,
        store: GraphStore,
        *,
        log: RetrievalLog | None = None,
        cache_ttl_s: float = 60.0,
        cache_size: int = 256,
        boost_timeout_s: float = 2.0,
        writer: GraphWriter | None = None,
        clock: Callable[[], float] = time.monotonic,
        entities_alone: bool = False,
    ) -> None:
        self.store = store
        #: Bumped by every write through this service: what was read at another is stale.
        self.generation = 0
        self.log = log
        self.writer = writer or GraphWriter(store)
        self._reads = CachedReads(TTLCache(cache_ttl_s, cache_size, clock), log)
        self._gate = BoostGate(store, self.writer.weights, boost_timeout_s, cache_ttl_s, clock)
        self._gate.entities_alone = entities_alone
        #: The KG booster of this graph (the search pipeline's, :mod:`trilha.retrieve.pipeline`).
        self.booster = KGBooster(store, self._gate, timeout_s=boost_timeout_s, log=log)

    @classmethod
    def from_settings(
        cls, settings: TrilhaSettings, data_dir: Path | None = None, log_path: Path | None = None
    ) -> GraphService:
        """A service over :func:`open_graph_store`, logging to ``log_path``
        (default ``<data_dir or workspace/graph>/retrieval-log.jsonl``)."""
        store = open_graph_store(settings, data_dir)
        if store is None:
            raise ConfigurationError("graph_backend is 'none': there is no graph to serve")
        folder = graph_folder(settings, data_dir)
        return cls(
            store,
            log=RetrievalLog(log_path or folder / "retrieval-log.jsonl"),
            boost_timeout_s=settings.graph_timeout_s,
            entities_alone=settings.kg_entities_alone,
        )

    def subgraph(
        self,
        doc_id: str,
        entity_names: Sequence[str] | None = None,
        max_hops: int = 2,
        limit: int = 30,
        *,
        principal: Principal | None = None,
    ) -> SubgraphResult:
        """:func:`~trilha.graph.read.subgraph.subgraph` as ``principal`` sees it, cached, logged."""
        args = {
            "doc_id": doc_id,
            "entity_names": entity_names,
            "max_hops": max_hops,
            "limit": limit,
        }
        return self._reads.call(
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
        """:func:`~trilha.graph.read.path.path` as ``principal`` sees it, cached and logged."""
        args = {
            "source_entity": source_entity,
            "target_entity": target_entity,
            "max_length": max_length,
        }
        return self._reads.call(
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
        """:func:`~trilha.graph.read.topn.topn` (reasons in ``reasons_lang``) as ``principal``
        sees it, cached and logged."""
        args = {
            "entity_names": entity_names,
            "category": category,
            "language": language,
            "limit": limit,
            "reasons_lang": reasons_lang,
        }
        return self._reads.call(
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

    def changed(self) -> None:
        """Forget what was read (a write happened)."""
        self.memory_changed()
        self._gate.forget()

    def memory_changed(self) -> None:
        """Forget what was read but the boost's data: memory writes nothing a boost reads."""
        self.generation += 1
        self._reads.clear()

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

    def close(self) -> None:
        """Close the store (stopping an embedded server) and the boost threads."""
        self._gate.close()
        self.store.close()
