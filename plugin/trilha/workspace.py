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
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import numpy.typing as npt

from trilha.encode.base import Embedder
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BadRequestError, ConfigurationError
from trilha.fusion import Weights
from trilha.graph.extract import EntityExtractor
from trilha.graph.ingest import GraphWriter
from trilha.graph.service import GraphService
from trilha.index.dense import DenseIndex, open_dense_index
from trilha.index.docstore import DocStore
from trilha.index.filters import coerce_filters
from trilha.index.lexical import LexicalIndex
from trilha.ingest.chunking import index_text
from trilha.ingest.loaders import SourceDocument, load_path
from trilha.ingest.pipeline import IngestPipeline, IngestReport
from trilha.rerank.base import Reranker
from trilha.retrieve.hybrid import HybridSearcher, KgBooster, SearchParams, Side
from trilha.retrieve.kg import GraphBooster, UnavailableBooster
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
    ) -> None:
        """Use :meth:`open`; this only wires already-open parts together."""
        self.path = path
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
    ) -> Workspace:
        """Open (or create) the workspace at ``path`` (default: ``settings.workspace``).

        ``extractor`` finds entities for the graph at ingest: the offline rule extractor by
        default, or e.g. ``trilha.graph.LLMEntityExtractor(llm)`` (LlamaIndex's
        ``SchemaLLMPathExtractor``) when an LLM is configured."""
        settings = settings or TrilhaSettings()
        root = Path(path if path is not None else settings.workspace).expanduser()
        root.mkdir(parents=True, exist_ok=True)
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
        ws = cls(root, settings, store, dense, embedder, reranker, graph, graph_warning)
        try:
            ws.repair()
        except BaseException:
            ws.close()
            raise
        return ws

    def repair(self, progress: bool = False) -> int:
        """Re-encode units the dense index lacks (lost folder, switched Qdrant mode).

        The unit store is the source of truth; returns how many units were restored.
        """
        units = self._searcher.lexical.units
        self._repair_graph(len(units))
        if self.dense.count() >= len(units):
            return 0
        present = self.dense.vectors([u.unit_id for u in units])
        missing = [u for u in units if u.unit_id not in present]
        if not missing:
            return 0
        log.warning(
            "dense index lacks %d of %d units; re-encoding them from the unit store",
            len(missing),
            len(units),
        )
        vectors = self.embedder.encode_documents([index_text(u) for u in missing], progress)
        self.dense.upsert(missing, vectors)
        return len(missing)

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
        documents: Iterable[SourceDocument],
        progress: bool = False,
        total: int | None = None,
        max_words: int = 180,
    ) -> IngestReport:
        """Index documents; unchanged ones are skipped, changed ones replaced."""
        errors: list[str] = []
        pipeline = IngestPipeline(
            self.store,
            self.dense,
            self.embedder,
            max_words=max_words,
            on_doc_removed=self._graph_hook(errors, "delete_doc"),
            on_units_written=self._graph_hook(errors, "ingest"),
        )
        try:
            report = pipeline.run(documents, progress=progress, total=total)
        finally:
            self._refresh()
        report.errors.extend(errors)
        return report

    def _graph_hook(self, errors: list[str], method: str) -> Callable[[Any], None] | None:
        """A pipeline hook writing to the graph; graph trouble is recorded, never fatal (the
        unit store stays the truth and :meth:`rebuild_graph` re-syncs the graph)."""
        graph = self.graph
        if graph is None:
            return None

        def hook(arg: Any) -> None:
            try:
                getattr(graph, method)(arg)
            except Exception as e:
                msg = f"graph {method} failed ({type(e).__name__}: {e}); run rebuild_graph()"
                log.warning(msg)
                errors.append(msg)

        return hook

    def ingest_records(self, path: str | Path) -> int:
        """Write explicit graph records (JSON/JSONL nodes and edges); returns how many.

        The whole file is checked first: a malformed record, or one naming a document or unit
        this workspace does not hold, refuses the file (one error listing the lines) and
        nothing is written."""
        from trilha.graph.records import load_records

        graph = self._require_graph()
        records = load_records(Path(path))
        graph.write_records(
            records,
            known_docs=self.store.doc_ids(),
            known_units=[u.unit_id for u in self.searcher.lexical.units],
        )
        return len(records)

    def rebuild_graph(self) -> int:
        """Write every unit of the unit store into the graph again (idempotent)."""
        graph = self._require_graph()
        units = self._searcher.lexical.units
        for start in range(0, len(units), 2000):
            graph.ingest(units[start : start + 2000])
        return len(units)

    def _repair_graph(self, n_units: int) -> None:
        """Write the units into the graph when it holds fewer chunks than the unit store (a
        workspace made before the graph existed, a lost graph folder)."""
        if self.graph is None or n_units == 0:
            return
        try:
            rows = self.graph.store.run("MATCH (c:Chunk) RETURN count(c) AS n", {})
            chunks = int(rows[0]["n"]) if rows else 0
        except Exception as e:
            log.warning("cannot count graph chunks (%s); graph not checked", e)
            return
        if chunks < n_units:
            log.warning("graph holds %d of %d units; writing them", chunks, n_units)
            self.rebuild_graph()

    def _require_graph(self) -> GraphService:
        if self.graph is None:
            raise ConfigurationError(
                self.graph_warning
                or "this workspace has no graph: set TRILHA_GRAPH_BACKEND to falkordb or bolt"
            )
        return self.graph

    def ingest_path(self, path: str | Path, progress: bool = False) -> IngestReport:
        """Index every .md, .txt and .jsonl file under ``path``."""
        return self.ingest(load_path(Path(path)), progress=progress)

    def delete(self, doc_id: str) -> int:
        """Remove a document from every index; returns the number of units removed."""
        self.dense.delete_doc(doc_id)
        removed = self.store.delete_doc(doc_id)
        errors: list[str] = []
        hook = self._graph_hook(errors, "delete_doc")
        if hook is not None:
            hook(doc_id)
        self._refresh()
        return removed

    # -- search ---------------------------------------------------------------------------------
    def params(
        self,
        *,
        top_k: int | None = None,
        candidates: int | None = None,
        merge: str | None = None,
        filters: Any = None,
        sides: tuple[Side, ...] = ("bm25", "semantic"),
        weights: Weights | None = None,
        kg: bool | None = None,
    ) -> SearchParams:
        """Search parameters: the settings' defaults merged with per-call overrides.

        ``kg`` defaults to ``TRILHA_KG_BOOST`` when the workspace has a graph backend."""
        s = self.settings
        if kg is None:
            kg = s.kg_boost and s.graph_backend != "none"
        try:
            return SearchParams(
                top_k=s.top_k if top_k is None else top_k,
                candidates=candidates,
                merge=merge or s.merge,
                weights=weights
                or Weights(bm25=s.weight_bm25, semantic=s.weight_semantic, kg=s.weight_kg),
                rrf_k=s.rrf_k,
                candidate_cap=s.candidate_cap,
                doc_penalty=s.doc_penalty,
                sides=sides,
                filters=coerce_filters(filters),
                kg=kg,
            )
        except ValueError as e:
            raise BadRequestError(f"invalid search parameters: {e}") from e

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
        query: str,
        *,
        top_k: int | None = None,
        filters: Any = None,
        merge: str | None = None,
        candidates: int | None = None,
        rerank: bool = False,
        sides: tuple[Side, ...] = ("bm25", "semantic"),
        kg: bool | None = None,
        vector: npt.NDArray[np.float32] | None = None,
    ) -> SearchResult:
        """Hybrid search; with ``rerank`` the pool of ``candidates`` (default 40) is reranked
        and ``top_k`` (default ``rerank_top_n``) results are kept; ``kg`` adds the graph boost
        (default: on when the workspace has a graph)."""
        params, keep = self._plan(top_k, candidates, merge, filters, sides, rerank, kg)
        result = self._searcher.search(query, params, vector)
        return self._rerank(query, result, keep) if rerank else result

    async def asearch(
        self,
        query: str,
        *,
        top_k: int | None = None,
        filters: Any = None,
        merge: str | None = None,
        candidates: int | None = None,
        rerank: bool = False,
        sides: tuple[Side, ...] = ("bm25", "semantic"),
        kg: bool | None = None,
        vector: npt.NDArray[np.float32] | None = None,
    ) -> SearchResult:
        """Async :meth:`search`: both sides run concurrently, rerank runs off the event loop."""
        import asyncio

        params, keep = self._plan(top_k, candidates, merge, filters, sides, rerank, kg)
        result = await self._searcher.asearch(query, params, vector)
        if not rerank:
            return result
        return await asyncio.to_thread(self._rerank, query, result, keep)

    def _plan(
        self,
        top_k: int | None,
        candidates: int | None,
        merge: str | None,
        filters: Any,
        sides: tuple[Side, ...],
        rerank: bool,
        kg: bool | None,
    ) -> tuple[SearchParams, int]:
        if not rerank:
            return self.params(
                top_k=top_k,
                candidates=candidates,
                merge=merge,
                filters=filters,
                sides=sides,
                kg=kg,
            ), self.settings.top_k if top_k is None else top_k
        keep = self.settings.rerank_top_n if top_k is None else top_k
        if keep <= 0:
            raise BadRequestError(f"top_k must be positive, got {keep}")
        pool = max(candidates or 40, keep)
        return self.params(
            top_k=pool, candidates=pool, merge=merge, filters=filters, sides=sides, kg=kg
        ), keep

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
