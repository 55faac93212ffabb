"""The workspace: one folder holding one corpus and every index over it.

``<workspace>/units.sqlite`` (the unit store), ``qdrant-edge/`` (dense; ``qdrant/`` in
qdrant-client local mode), ``lexical/``
(BM25) and ``workspace.json`` (the encoder it was built with); with ``TRILHA_STORE_URL`` the unit
store and the records are in that PostgreSQL database instead (:mod:`trilha.workspace.shared`).
Reopening a workspace loads everything without re-encoding. Most users only touch this class:

>>> with Workspace.open("my-ws") as ws:          # doctest: +SKIP
...     ws.ingest_path(Path("docs/"))
...     result = ws.search("prazo de recurso", top_k=5, filters={"lang": "pt"})

The parts are built by :func:`trilha.workspace.compose.compose`; the workspace holds the lock,
owns the parts, closes them, and delegates to them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from functools import partial
from itertools import chain
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from trilha.encode.base import Embedder
from trilha.graph.build.extract import EntityExtractor
from trilha.graph.service import GraphService
from trilha.index.language import written_code
from trilha.ingest.loaders import Loaded, Refusal, SourceDocument, load_path
from trilha.ingest.pipeline import IngestReport
from trilha.request import SearchRequest
from trilha.rerank.base import Reranker
from trilha.retrieve import pipeline
from trilha.retrieve.cache import ResultCache
from trilha.retrieve.expand import make_expander
from trilha.retrieve.fusion_table import FusionTable
from trilha.retrieve.pipeline import Collaborators
from trilha.retrieve.plan import SearchPlan, fusion_for, plan
from trilha.settings import TrilhaSettings
from trilha.types import SearchResult
from trilha.workspace import repair as maintenance
from trilha.workspace import writes
from trilha.workspace.consistency import Consistency
from trilha.workspace.lock import WorkspaceLock
from trilha.workspace.opening import acquire, encoder_settings, open_parts
from trilha.workspace.parts import Parts
from trilha.workspace.units import UnitReads, Vector

log = logging.getLogger(__name__)


class Workspace(UnitReads):
    """A corpus on disk with its lexical, dense and graph indices.

    Its parts, built by :func:`trilha.workspace.compose.compose` and closed by :meth:`close`, are
    read-only attributes: ``store`` (the unit store, the source of truth), ``dense`` (the
    dense index), ``embedder`` (the encoder of documents and queries), ``graph`` (None when
    it is off or unavailable; ``graph_warning`` says why), ``searcher`` (the hybrid searcher)
    and ``booster`` (the KG booster, None when the workspace has no graph backend)."""

    def __init__(
        self, path: Path, settings: TrilhaSettings, parts: Parts, lock: WorkspaceLock | None
    ) -> None:
        """Use :meth:`open`; this only takes ownership of already-open parts."""
        self.path: Final = path
        self._resolved = str(path.resolve())
        self.settings: Final = settings
        self.store: Final = parts.store
        self.dense: Final = parts.dense
        self.embedder: Final = parts.embedder
        self.graph: Final = parts.graph
        self.graph_warning: Final = parts.graph_warning
        self.searcher: Final = parts.searcher
        self.booster: Final = parts.booster
        #: Fusion per query language: shipped profile, ``trilha tune``'s file, settings.
        self.fusion = FusionTable.of(settings, path)
        #: Stage 1: results of recent searches (None when TRILHA_RESULT_CACHE_TTL_S is 0).
        self.cache = ResultCache.of(
            settings.result_cache_ttl_s, settings.result_cache_entries, settings.redis_url
        )
        #: The LlamaIndex LLM given by :meth:`use_llm` (None: ``Settings.llm`` when set).
        self.llm: object | None = None
        #: Stage 2: makes a query's variants when a search asks to expand it.
        self.expander = make_expander(settings)
        self._parts = parts
        self._lock = lock
        self._closed = False
        #: Read-only (:mod:`trilha.workspace.shared`): no writes; searches follow the writer.
        self.read_only: Final = parts.follower is not None
        self._follower = parts.follower
        self._encoder_id: str | None = None  # the encoder's model id, read on the first search

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        settings: TrilhaSettings | None = None,
        embedder: Embedder | object | None = None,
        reranker: Reranker | None = None,
        extractor: EntityExtractor | None = None,
        *,
        create: bool = False,
        repair: bool = True,
        read_only: bool | None = None,
    ) -> Workspace:
        """Open the workspace at ``path`` (``settings.workspace``); with ``create``, a new one
        when the folder holds none (without it, a :class:`WorkspaceError` saying so).

        One process at a time holds a workspace (a second one gets a :class:`WorkspaceError`);
        opening it again in the same process shares its parts (:mod:`~.opening`).
        ``repair`` finishes interrupted writes first (:meth:`repair`). ``extractor`` finds the
        graph's entities at ingest (default: offline rules; or ``LLMEntityExtractor(llm)``).
        ``read_only`` (default ``TRILHA_READ_ONLY``) opens an existing workspace without the
        lock, beside its writer and other readers; its indices must then be servers
        (:mod:`trilha.workspace.shared`). ``embedder`` may be any LlamaIndex ``BaseEmbedding``
        (:class:`~trilha.llamaindex.embedding.LlamaIndexEmbedder`)."""
        settings, encoder = encoder_settings(settings or TrilhaSettings(), embedder)
        root, settings, lock = acquire(path, settings, create, read_only)
        parts = open_parts(root, settings, lock, encoder, reranker, extractor, repair)
        return cls(root, settings, parts, lock)

    def require_graph(self) -> GraphService:
        """The graph; a :class:`ConfigurationError` saying why when there is none."""
        return self._parts.require_graph()

    # -- lifecycle ------------------------------------------------------------------------------
    def check(self) -> Consistency:
        """Compare the unit ids of the unit store, the dense index and the graph."""
        return maintenance.check(self._parts)

    def repair(self, progress: bool = False) -> Consistency:
        """Make the derived indices agree with the unit store
        (:func:`trilha.workspace.repair.repair`); returns what was found before repairing."""
        return maintenance.repair(self._parts.writable(), progress)

    def close(self, finish_build: bool = True) -> None:
        """Release the parts (the Qdrant folder lock too; an embedded graph server stops) when
        this is the process's last handle on the workspace; idempotent. An HNSW build of the
        dense index that this process's writes made due is finished first (so ``trilha
        ingest`` leaves a built index); ``finish_build=False``, for a long-lived process
        shutting down, cancels it instead and leaves it to the next writer."""
        if self._closed:
            return
        self._closed = True
        if self._lock is None or self._lock.last:
            self._parts.close(finish_build)
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _refresh(self) -> None:
        """Swap in the lexical snapshot of the store's new generation, made from the current
        one and what changed since (one assignment: a search keeps the snapshot it started
        with)."""
        self.searcher.lexical = self._parts.load_lexical(current=self.searcher.lexical)

    # -- writing --------------------------------------------------------------------------------
    def ingest(
        self,
        documents: Iterable[Loaded] | Iterable[object],
        progress: bool = False,
        max_words: int = 180,
        lang: str | None = None,
    ) -> IngestReport:
        """Index documents; unchanged ones are skipped, changed ones replaced, bad ones refused
        (listed in ``report.refused``); graph trouble is listed in ``report.errors``.

        A document without a ``lang`` field is in ``lang`` when given, else in the language
        detected from its text (:func:`~trilha.index.language.detect_language`). LlamaIndex
        Documents and nodes are taken too (:mod:`trilha.llamaindex.sources`)."""
        parts = self._parts.writable()  # before the try: a reader refreshes nothing
        defaults: dict[str, Any] = dict(self.settings.access_defaults())
        if lang is not None:
            defaults["lang"] = written_code(lang)
        try:
            return writes.ingest(
                parts, _sources(documents), defaults, progress, max_words, self.settings,
                self.path, refresh=self._refresh,
            )  # fmt: skip
        finally:
            self._refresh()

    def load(self, path: str | Path) -> Iterable[Loaded]:
        """The documents under ``path`` (see :func:`load_path`), never this workspace's files."""
        return load_path(Path(path), exclude=[self.path])

    def ingest_path(
        self,
        path: str | Path,
        progress: bool = False,
        max_words: int = 180,
        lang: str | None = None,
    ) -> IngestReport:
        """Index every .md, .txt and .jsonl file under ``path`` (``lang``: as in :meth:`ingest`)."""
        return self.ingest(self.load(path), progress=progress, max_words=max_words, lang=lang)

    def ingest_records(self, path: str | Path) -> int:
        """Write explicit graph records (JSON/JSONL nodes and edges); returns how many. A bad
        record (malformed, naming a document or unit not held, bad access fields) refuses the
        whole file, one error listing the lines; a crash part-way is finished by the next
        repair (:func:`trilha.workspace.writes.write_records`)."""
        parts = self._parts.writable()
        try:
            return writes.write_records(parts, Path(path), self.settings.access_defaults())
        finally:
            self.store.bump_graph()

    def rebuild_graph(self) -> int:
        """Write every unit of the unit store into the graph again (idempotent)."""
        graph = self._parts.writable().require_graph()
        try:
            return writes.write_units(graph, self.all_units())
        finally:
            self.store.bump_graph()

    def delete(self, doc_id: str) -> int:
        """Remove a document from every index; returns the number of units removed."""
        parts = self._parts.writable()
        try:
            return writes.delete(parts, doc_id)
        finally:
            self._refresh()

    # -- search ---------------------------------------------------------------------------------
    def plan(self, request: SearchRequest | str, **fields: Any) -> SearchPlan:
        """The concrete search a request (or a query and :class:`SearchRequest` fields) asks
        for, with this workspace's defaults."""
        req = SearchRequest.make(request, **fields)
        if self._follower is not None:
            self._follower.follow()  # catch up with the writing process
        langs = partial(self.searcher.langs_for, req.principal)  # read only when needed
        lang, fusion = fusion_for(self.fusion, req.query, langs, req.merge, req.weights)
        return plan(req, self.settings, self.graph is not None, fusion, lang)

    @property
    def reranker(self) -> Reranker:
        """The reranker given to :meth:`open` or :meth:`use_reranker`, else the configured
        cross-encoder (TRILHA_RERANKER_MODEL), loaded on first use."""
        return self._parts.reranker.get()

    @property
    def reranker_identity(self) -> str:
        """``configured``, or a name of the reranker given (keys cached reranked results)."""
        return self._parts.reranker.identity

    def use_reranker(self, reranker: Reranker | None) -> None:
        """Rerank with ``reranker`` from now on (None: the configured cross-encoder again)."""
        self._parts.reranker.set(reranker)

    def use_llm(self, llm: object | None) -> None:
        """Expand queries (and classify questions, :class:`~trilha.orchestrate.Orchestrator`)
        with the LlamaIndex LLM ``llm`` from now on; a Groq key in the settings still wins
        (:func:`~trilha.retrieve.expand.make_expander`). None: ``Settings.llm`` again."""
        self.llm = llm
        self.expander = make_expander(self.settings, llm)

    def search(
        self, request: SearchRequest | str, /, *, vector: Vector | None = None, **fields: Any
    ) -> SearchResult:
        """Hybrid search for a :class:`~trilha.request.SearchRequest`, or for a query with the
        request's fields as keywords (``top_k``, ``filters``, ``merge``, ``weights``, ``kg``,
        ``rerank``, ``expand``, ``candidates``, ``sides``, ``principal``). Results are limited
        to what the principal may see (anonymous when none is given). ``vector`` is the query's
        embedding, when the caller has it already. A search asked again within the result
        cache's TTL is answered from it (``trace.cache_hit``)."""
        planned = self.plan(request, **fields)
        return pipeline.search(planned, vector, self.collaborators(planned, vector))

    async def asearch(
        self, request: SearchRequest | str, /, *, vector: Vector | None = None, **fields: Any
    ) -> SearchResult:
        """Async :meth:`search`: both sides run concurrently, rerank runs off the event loop."""
        planned = self.plan(request, **fields)
        return await pipeline.asearch(planned, vector, self.collaborators(planned, vector))

    def collaborators(self, plan: SearchPlan, vector: Vector | None = None) -> Collaborators:
        """What the search ``plan`` of this workspace reads now (:mod:`trilha.retrieve.pipeline`):
        the current lexical snapshot, the indices, the cache (with what its result depends on
        besides the plan, when it is cached: not with a ``vector`` of the caller's), the expander
        and the reranker."""
        searcher = self.searcher
        lexical = searcher.lexical  # one snapshot: the one searched is the one the key names
        cached = self.cache is not None and vector is None
        return Collaborators(
            lexical=lexical,
            dense=searcher.dense,
            embedder=searcher.embedder,
            booster=searcher.booster,
            policies=searcher.policies,
            pool=searcher.pool,
            cache=self.cache,
            expander=self.expander,
            reranker=self._parts.reranker.get,
            scope=self.cache_scope(plan.kg, plan.rerank, lexical.generation) if cached else {},
            dimension=self.settings.embedding_dimension,
            workspace=self.path,
        )

    def cache_scope(self, kg: bool, rerank: bool, generation: int | None = None) -> dict[str, Any]:
        """What a cached result depends on besides its request: the workspace, its encoder, the
        lexical snapshot's ``generation`` (default: the current snapshot's), the graph's (when
        boosted) and the reranker (when used)."""
        if self._encoder_id is None:
            self._encoder_id = self.embedder.model_id  # fixed once known (a server's is asked)
        return {
            "workspace": self._resolved,
            "encoder": self._encoder_id,
            "generation": self.searcher.lexical.generation if generation is None else generation,
            "graph": self.store.graph_generation if kg else None,
            "reranker": self.reranker_identity if rerank else None,
        }


def _sources(items: Iterable[object]) -> Iterator[Loaded]:
    """trilha's documents for ``items``; LlamaIndex's are converted
    (:func:`trilha.llamaindex.sources.to_sources`, imported only when one comes)."""
    rest = iter(items)
    for item in rest:
        if isinstance(item, SourceDocument | Refusal):
            yield item
            continue
        from trilha.llamaindex.sources import to_sources

        yield from to_sources(chain([item], rest))
        return
