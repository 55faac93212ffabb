"""The workspace: one folder holding one corpus and every index over it.

``<workspace>/units.sqlite`` (the unit store), ``qdrant-edge/`` (dense; ``qdrant/`` in
qdrant-client local mode), ``lexical/``
(BM25) and ``workspace.json`` (the encoder it was built with). Reopening a workspace loads
everything without re-encoding. Most users only touch this class:

>>> with Workspace.open("my-ws") as ws:          # doctest: +SKIP
...     ws.ingest_path(Path("docs/"))
...     result = ws.search("prazo de recurso", top_k=5, filters={"lang": "pt"})
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import numpy.typing as npt

from trilha.access.legacy import ACCESS_VERSION, fail_closed
from trilha.consistency import Consistency, IndexDiff
from trilha.encode.base import Embedder
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BadRequestError, ConfigurationError, WorkspaceError
from trilha.graph.build.extract import EntityExtractor
from trilha.graph.build.writer import GraphWriter
from trilha.graph.service import GraphService
from trilha.index.dense import DenseIndex, open_dense_index
from trilha.index.docstore import DocStore
from trilha.index.lexical import LexicalIndex
from trilha.index.tokenize import TOKENIZER_VERSION, tokenize
from trilha.ingest.chunking import index_text
from trilha.ingest.loaders import Loaded, load_path
from trilha.ingest.pipeline import IngestPipeline, IngestReport
from trilha.lock import WorkspaceLock
from trilha.request import SearchRequest
from trilha.rerank.base import Reranker
from trilha.retrieve.hybrid import HybridSearcher, KgBooster
from trilha.retrieve.kg import GraphBooster, UnavailableBooster
from trilha.retrieve.plan import SearchPlan, plan
from trilha.settings import TrilhaSettings
from trilha.types import SearchResult, StageTrace, TextUnit

log = logging.getLogger(__name__)


class Workspace:
    """A corpus on disk with its lexical, dense (and later graph) indices."""

    def __init__(
        self,
        path: Path,
        settings: TrilhaSettings,
        store: DocStore,
        dense: DenseIndex,
        embedder: Embedder,
        reranker: Reranker | None = None,
        graph: GraphService | None = None,
        graph_warning: str | None = None,
        lock: WorkspaceLock | None = None,
    ) -> None:
        """Use :meth:`open`; this only wires already-open parts together."""
        self.path = path
        self._lock = lock
        self.settings = settings
        self.store = store
        self.dense = dense
        self.embedder = embedder
        self.graph = graph
        self.graph_warning = graph_warning
        self._reranker = reranker
        booster: KgBooster | None = None
        if graph is not None:
            booster = GraphBooster(graph)
        elif graph_warning is not None:
            booster = UnavailableBooster(graph_warning)
        self._searcher = HybridSearcher(self._load_lexical(), dense, embedder, booster)

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        settings: TrilhaSettings | None = None,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        extractor: EntityExtractor | None = None,
        *,
        create: bool = True,
        repair: bool = True,
    ) -> Workspace:
        """Open (or, with ``create``, create) the workspace at ``path`` (default:
        ``settings.workspace``).

        One process at a time holds a workspace: a second one gets a :class:`WorkspaceError`.
        With ``create=False`` a folder that holds no workspace is an error, not a new workspace.
        ``repair`` (default on) finishes interrupted writes and makes the dense index and the
        graph hold exactly the unit store's ids (:meth:`repair`).
        ``extractor`` finds entities for the graph at ingest: the offline rule extractor by
        default, or e.g. ``trilha.graph.LLMEntityExtractor(llm)`` (LlamaIndex's
        ``SchemaLLMPathExtractor``) when an LLM is configured."""
        settings = settings or TrilhaSettings()
        root = Path(path if path is not None else settings.workspace).expanduser()
        if not (root / "units.sqlite").exists():
            if not create:
                raise WorkspaceError(
                    f"no trilha workspace at {root}; check the path, or create one with "
                    f"`trilha ingest PATH -w {root}`"
                )
            if root.exists() and not root.is_dir():
                raise WorkspaceError(f"{root} is a file, not a workspace folder")
        root.mkdir(parents=True, exist_ok=True)
        lock = WorkspaceLock.acquire(root)
        try:
            return cls._open_locked(root, settings, embedder, reranker, extractor, lock, repair)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _open_locked(
        cls,
        root: Path,
        settings: TrilhaSettings,
        embedder: Embedder | None,
        reranker: Reranker | None,
        extractor: EntityExtractor | None,
        lock: WorkspaceLock,
        repair: bool,
    ) -> Workspace:
        embedder = embedder or SentenceTransformerEmbedder(
            settings.embedding_model,
            batch_size=settings.embedding_batch_size,
            device=settings.embedding_device,
            dimension=settings.embedding_dimension,
            backend=settings.embedding_backend,
            cache_dir=root / "models",
        )
        cls._check_encoder(root, embedder, settings)
        store = DocStore(root / "units.sqlite")
        try:
            migrated = store.migrate("access", ACCESS_VERSION, fail_closed)
            redone = store.retokenize(lambda u: tokenize(index_text(u), u.lang), TOKENIZER_VERSION)
        except BaseException:
            store.close()
            raise
        if redone:
            log.warning("re-tokenised %d units for tokenizer version %s", redone, TOKENIZER_VERSION)
        try:
            dense = open_dense_index(
                mode=settings.qdrant_mode,
                path=root,
                url=settings.qdrant_url,
                api_key=settings.qdrant_api_key,
                collection=settings.qdrant_collection,
                dimension=settings.embedding_dimension,
            )
        except BaseException:
            store.close()
            raise
        graph, graph_warning = _open_graph(settings, root, extractor)
        ws = cls(root, settings, store, dense, embedder, reranker, graph, graph_warning, lock)
        try:
            if migrated is not None:
                ws._rewrite_payloads(migrated)
            if repair:
                ws.repair()
                ws._upgrade_graph_access()
        except BaseException:
            ws.close()
            raise
        return ws

    def check(self) -> Consistency:
        """Compare the unit ids of the unit store, the dense index and the graph."""
        truth = self.store.unit_ids()
        graph, graph_error = None, self.graph_warning
        if self.graph is not None:
            try:
                graph = IndexDiff.of(truth, self.graph.chunk_ids())
            except Exception as e:  # a graph that is down is reported, never fatal
                graph_error = f"graph not checked ({type(e).__name__}: {e})"
                log.warning(graph_error)
        return Consistency(
            units=len(truth),
            dense=IndexDiff.of(truth, self.dense.unit_ids()),
            graph=graph,
            graph_error=graph_error,
            pending=self.store.pending_docs(),
        )

    def repair(self, progress: bool = False) -> Consistency:
        """Make the derived indices agree with the unit store (the source of truth).

        Documents whose write was interrupted are re-synced from the store; then the id sets are
        compared and the dense index and the graph lose their orphans and get their missing units
        back (re-encoded from the store). Returns what was found before repairing."""
        found = self.check()
        if found.consistent:
            return found
        if found.pending:
            log.warning(
                "re-syncing %d interrupted documents from the unit store", len(found.pending)
            )
            self._resync(found.pending, progress)
            found_now = self.check()
        else:
            found_now = found
        dense = found_now.dense
        if dense.orphans:
            log.warning("dense index holds %d units the store lacks; removing", len(dense.orphans))
            self.dense.delete_units(dense.orphans)
        if dense.missing:
            log.warning("dense index lacks %d units; re-encoding them", len(dense.missing))
            self._encode(list(self.store.get(dense.missing).values()), progress)
        if found_now.graph is not None and not found_now.graph.equal:
            self._repair_graph(found_now.graph)
        return found

    def _rewrite_payloads(self, made_private: list[str], batch: int = 1024) -> None:
        """Store every unit's current payload beside its vector (after the access rules
        changed); the vectors are read back, nothing is re-encoded."""
        if made_private:
            log.warning(
                "%d units stored before the visibility rules were made private to their owner; "
                "re-ingest their documents with org_id/project_id/acl to share them",
                len(made_private),
            )
        ids = sorted(self.store.unit_ids())
        for start in range(0, len(ids), batch):
            units = self.store.get(ids[start : start + batch])
            vectors = self.dense.vectors(list(units))
            have = [units[u] for u in units if u in vectors]
            if have:
                self.dense.upsert(have, np.stack([vectors[u.unit_id] for u in have]))

    def _upgrade_graph_access(self) -> None:
        """Give the Docs and Chunks of a graph written before the access fields existed those
        of the unit store (until then the policy hides them: it fails closed). Graph trouble
        is logged, never fatal."""
        if self.graph is None:
            return
        try:
            written = self.graph.upgrade_access(lambda: self._searcher.lexical.units)
        except Exception as e:
            log.warning("graph access upgrade failed (%s); old nodes stay hidden", e)
            return
        if written:
            log.warning("wrote the access fields of %d units into the graph", written)

    def _encode(self, units: list[TextUnit], progress: bool = False) -> None:
        if units:
            vectors = self.embedder.encode_documents([index_text(u) for u in units], progress)
            self.dense.upsert(units, vectors)

    def _resync(self, doc_ids: list[str], progress: bool) -> None:
        """Rewrite these documents in the derived indices from the store, then clear their
        marks (a document the store lacks is removed from them)."""
        for doc_id in doc_ids:
            self.dense.delete_doc(doc_id)
        units = self.store.units_of(doc_ids)
        self._encode(units, progress)
        errors: list[str] = []
        for doc_id in doc_ids:
            mine = [u for u in units if u.doc_id == doc_id]
            self._graph_write(errors, doc_id, mine)
        self.store.clear_pending(doc_ids)

    @staticmethod
    def _check_encoder(root: Path, embedder: Embedder, settings: TrilhaSettings) -> None:
        info_file = root / "workspace.json"
        info = {
            "embedding_model": embedder.model_id,
            "embedding_dimension": settings.embedding_dimension,
        }
        if info_file.exists():
            old = json.loads(info_file.read_text())
            if old != info:
                raise ConfigurationError(
                    f"workspace {root} was built with {old}, not {info}; open it with the same "
                    "encoder settings or ingest into a new workspace"
                )
        else:
            info_file.write_text(json.dumps(info, indent=2))

    # -- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        """Release the stores (the Qdrant folder lock too; an embedded graph server stops)."""
        self._searcher.close()
        if self.graph is not None:
            self.graph.close()
        self.dense.close()
        self.store.close()
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- indices --------------------------------------------------------------------------------
    def _load_lexical(self) -> LexicalIndex:
        rows = self.store.iter_rows()
        units = [TextUnit.model_validate_json(body) for _, body, _ in rows]
        generation = self.store.generation
        folder = self.path / "lexical"
        loaded = LexicalIndex.load(folder, generation, units)
        if loaded is not None:
            return loaded
        index = LexicalIndex.build(
            units,
            [tokens.split() for _, _, tokens in rows],
            k1=self.settings.bm25_k1,
            b=self.settings.bm25_b,
        )
        index.save(folder, generation)
        return index

    def _refresh(self) -> None:
        self._searcher.lexical = self._load_lexical()

    @property
    def searcher(self) -> HybridSearcher:
        """The hybrid searcher over this workspace's indices."""
        return self._searcher

    def __len__(self) -> int:
        return len(self._searcher.lexical)

    def units(self, unit_ids: list[str]) -> dict[str, TextUnit]:
        """Units by id."""
        return self.store.get(unit_ids)

    # -- ingest ---------------------------------------------------------------------------------
    def ingest(
        self,
        documents: Iterable[Loaded],
        progress: bool = False,
        max_words: int = 180,
    ) -> IngestReport:
        """Index documents; unchanged ones are skipped, changed ones replaced, bad ones refused
        (listed in ``report.refused``); graph trouble is listed in ``report.errors``."""
        errors: list[str] = []
        pipeline = IngestPipeline(
            self.store,
            self.dense,
            self.embedder,
            max_words=max_words,
            on_doc_written=lambda doc_id, units: self._graph_write(errors, doc_id, units),
            defaults=self.settings.access_defaults(),
        )
        try:
            report = pipeline.run(documents, progress=progress)
        finally:
            self._refresh()
        report.errors.extend(errors)
        return report

    def _graph_write(self, errors: list[str], doc_id: str, units: list[TextUnit]) -> None:
        """Write a committed document into the graph, new state before old is removed
        (curated record edges survive; no units means the document is gone). Graph trouble is
        recorded, never fatal: the unit store stays the truth and :meth:`repair` re-syncs."""
        if self.graph is None:
            return
        try:
            self.graph.replace_doc(doc_id, units)
        except Exception as e:
            msg = f"graph ingest failed for {doc_id} ({type(e).__name__}: {e}); run trilha doctor"
            log.warning(msg)
            errors.append(msg)

    def ingest_records(self, path: str | Path) -> int:
        """Write explicit graph records (JSON/JSONL nodes and edges); returns how many.

        The whole file is checked first: a malformed record, one naming a document or unit
        this workspace does not hold, or one with bad access fields (a Task, User... node gets
        the workspace's access defaults for those it lacks), refuses the file (one error
        listing the lines) and nothing is written."""
        from trilha.graph.build.records import load_records

        graph = self._require_graph()
        records = load_records(Path(path))
        graph.write_records(
            records,
            known_docs=self.store.doc_ids(),
            known_units=[u.unit_id for u in self.searcher.lexical.units],
            access_defaults=self.settings.access_defaults(),
        )
        return len(records)

    def rebuild_graph(self) -> int:
        """Write every unit of the unit store into the graph again (idempotent)."""
        graph = self._require_graph()
        units = self._searcher.lexical.units
        for start in range(0, len(units), 2000):
            graph.ingest(units[start : start + 2000])
        return len(units)

    def _repair_graph(self, diff: IndexDiff) -> None:
        """Remove the chunks the unit store lacks and write the units the graph lacks (a
        workspace made before the graph existed, a lost graph folder, an interrupted write).
        Graph trouble is logged, never fatal: the graph stays behind and doctor says so."""
        graph = self.graph
        if graph is None:
            return
        try:
            if diff.orphans:
                log.warning("graph holds %d units the store lacks; removing", len(diff.orphans))
                graph.remove_chunks(diff.orphans, keep_docs=set(self.store.doc_ids()))
            if diff.missing:
                log.warning("graph lacks %d units; writing them", len(diff.missing))
                units = list(self.store.get(diff.missing).values())
                for start in range(0, len(units), 2000):
                    graph.ingest(units[start : start + 2000])
        except Exception as e:
            log.warning("graph repair failed (%s: %s); the graph stays behind", type(e).__name__, e)

    def _require_graph(self) -> GraphService:
        if self.graph is None:
            raise ConfigurationError(
                self.graph_warning
                or "this workspace has no graph: set TRILHA_GRAPH_BACKEND to falkordb or bolt"
            )
        return self.graph

    def load(self, path: str | Path) -> Iterable[Loaded]:
        """The documents under ``path`` (see :func:`load_path`), never this workspace's own
        files."""
        return load_path(Path(path), exclude=[self.path])

    def ingest_path(
        self, path: str | Path, progress: bool = False, max_words: int = 180
    ) -> IngestReport:
        """Index every .md, .txt and .jsonl file under ``path``."""
        return self.ingest(self.load(path), progress=progress, max_words=max_words)

    def delete(self, doc_id: str) -> int:
        """Remove a document from every index; returns the number of units removed."""
        self.store.mark_pending([doc_id])
        removed = self.store.delete_doc(doc_id)
        self.dense.delete_doc(doc_id)
        if self.graph is not None:
            try:
                self.graph.delete_doc(doc_id)
            except Exception as e:
                log.warning("graph delete of %s failed (%s); run trilha doctor", doc_id, e)
        self.store.clear_pending([doc_id])
        self._refresh()
        return removed

    # -- search ---------------------------------------------------------------------------------
    def plan(self, request: SearchRequest | str, **fields: Any) -> SearchPlan:
        """The concrete search a request (or a query and :class:`SearchRequest` fields) asks
        for, with this workspace's defaults."""
        return plan(SearchRequest.make(request, **fields), self.settings, self.graph is not None)

    @property
    def reranker(self) -> Reranker:
        """The configured cross-encoder (TRILHA_RERANKER_MODEL), loaded on first use."""
        if self._reranker is None:
            s = self.settings
            if not s.reranker_model:
                raise ConfigurationError(
                    "no reranker configured: set TRILHA_RERANKER_MODEL to a cross-encoder id or "
                    "local folder, or pass reranker= to Workspace.open"
                )
            from trilha.rerank.cross_encoder import CrossEncoderReranker

            self._reranker = CrossEncoderReranker(
                s.reranker_model,
                top_n=s.rerank_top_n,
                batch_size=s.rerank_batch_size,
                max_length=s.rerank_max_length,
                backend=s.rerank_backend,
                precision=s.rerank_precision,
                cache_dir=self.path / "models",
            )
        return self._reranker

    def search(
        self,
        request: SearchRequest | str,
        /,
        *,
        vector: npt.NDArray[np.float32] | None = None,
        **fields: Any,
    ) -> SearchResult:
        """Hybrid search for a :class:`~trilha.request.SearchRequest`, or for a query with the
        request's fields as keywords (``top_k``, ``filters``, ``merge``, ``weights``, ``kg``,
        ``rerank``, ``candidates``, ``sides``, ``principal``). Results are limited to what the
        principal may see (anonymous when none is given). ``vector`` is the query's embedding,
        when the caller has it already."""
        planned = self.plan(request, **fields)
        self._check_vector(vector)
        result = self._searcher.search(planned.query, planned.params, vector)
        return self._rerank(planned.query, result, planned.keep) if planned.rerank else result

    async def asearch(
        self,
        request: SearchRequest | str,
        /,
        *,
        vector: npt.NDArray[np.float32] | None = None,
        **fields: Any,
    ) -> SearchResult:
        """Async :meth:`search`: both sides run concurrently, rerank runs off the event loop."""
        import asyncio

        planned = self.plan(request, **fields)
        self._check_vector(vector)
        result = await self._searcher.asearch(planned.query, planned.params, vector)
        if not planned.rerank:
            return result
        return await asyncio.to_thread(self._rerank, planned.query, result, planned.keep)

    def _check_vector(self, vector: npt.NDArray[np.float32] | None) -> None:
        """A query embedding must be one vector of the workspace's dimension."""
        if vector is None:
            return
        want = self.settings.embedding_dimension
        shape = tuple(np.shape(vector))
        if shape != (want,):
            raise BadRequestError(
                f"the query embedding has shape {shape}, this workspace's encoder makes ({want},) "
                f"vectors ({self.embedder.model_id}); embed the query with the same model"
            )

    def _rerank(self, query: str, result: SearchResult, keep: int) -> SearchResult:
        start = time.perf_counter()
        hits = self.reranker.rerank(query, result.hits, top_n=keep)
        trace = result.trace.model_copy(deep=True)
        trace.stages.append(
            StageTrace(
                name="rerank", count=len(hits), latency_ms=(time.perf_counter() - start) * 1000
            )
        )
        return SearchResult(hits=hits, trace=trace)


def _open_graph(
    settings: TrilhaSettings, root: Path, extractor: EntityExtractor | None = None
) -> tuple[GraphService | None, str | None]:
    """The workspace's graph, or (None, why) when it is off or cannot be reached: a graph that
    is down degrades retrieval (no KG boost, a warning in every trace), it never fails it."""
    if settings.graph_backend == "none":
        return None, None
    try:
        service = GraphService.from_settings(
            settings, data_dir=root / "graph", log_path=settings.graph_log_path
        )
        if extractor is not None:
            service.writer = GraphWriter(service.store, extractor)
        return service, None
    except Exception as e:
        warning = f"graph unavailable ({type(e).__name__}: {e}); searching without KG boost"
        log.warning(warning)
        return None, warning
