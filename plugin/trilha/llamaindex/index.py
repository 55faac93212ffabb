"""TrilhaIndex: a trilha workspace as a LlamaIndex managed index (it owns its storage).

>>> index = TrilhaIndex.from_documents(SimpleDirectoryReader("docs").load_data(),
...                                    path="my-index")                    # doctest: +SKIP
>>> index.as_retriever(similarity_top_k=5).retrieve("prazo de recurso")    # doctest: +SKIP

Documents are chunked by trilha; nodes that arrive chunked (a node parser, an
``IngestionPipeline``) are indexed as they are, one unit each. Ids and metadata follow
:mod:`trilha.llamaindex.sources`: a Document is named by the ``doc_id`` the caller set, else by
its reader's ``file_path``, so loading a folder again and refreshing changes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.chat_engine.types import BaseChatEngine, ChatMode
from llama_index.core.data_structs.data_structs import IndexDict
from llama_index.core.indices.managed.base import BaseManagedIndex
from llama_index.core.ingestion import run_transformations
from llama_index.core.llms import LLM
from llama_index.core.llms.utils import LLMType, resolve_llm
from llama_index.core.schema import BaseNode, Document, TransformComponent
from llama_index.core.settings import Settings
from llama_index.core.storage.docstore.types import RefDocInfo

from trilha.errors import BadRequestError, ConfigurationError
from trilha.ingest.chunking import chunk_document
from trilha.ingest.loaders import Loaded, Refusal, SourceDocument
from trilha.ingest.pipeline import IngestReport
from trilha.llamaindex.embedding import settings_for
from trilha.llamaindex.query_engine import TrilhaQueryEngine
from trilha.llamaindex.retriever import TrilhaRetriever
from trilha.llamaindex.sources import document_id, to_sources
from trilha.request import SearchRequest
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace
from trilha.workspace.upgrade import recorded_model

#: as_query_engine's and as_chat_engine's arguments that are the retriever's.
_REQUEST_FIELDS = frozenset(SearchRequest.model_fields) - {"query"}


class TrilhaIndex(BaseManagedIndex):
    """A trilha workspace (hybrid BM25 + dense search, the knowledge graph, visibility) behind
    LlamaIndex's index interface. ``TrilhaIndex(nodes=..., path=...)`` indexes nodes into a new
    or existing workspace; :meth:`from_documents` documents; :meth:`open` an existing one (a
    path that holds none is an error). ``embed_model`` (else ``Settings.embed_model`` when set)
    is the dense encoder of a new index; ``llm`` (else ``Settings.llm``) answers, expands
    queries and classifies questions. TRILHA_* settings win when they name either."""

    def __init__(
        self,
        nodes: Sequence[BaseNode] | None = None,
        *,
        path: str | Path | None = None,
        workspace: Workspace | None = None,
        settings: TrilhaSettings | None = None,
        embed_model: BaseEmbedding | None = None,
        llm: LLMType | None = None,
        show_progress: bool = False,
        create: bool | None = None,
        transformations: list[TransformComponent] | None = None,
        **kwargs: Any,
    ) -> None:
        if workspace is None:
            settings = settings or TrilhaSettings()
            recorded = recorded_model(Path(path or settings.workspace), settings)
            settings, embedder = settings_for(settings, embed_model, recorded)
            create = nodes is not None if create is None else create
            workspace = Workspace.open(path, settings, embedder=embedder, create=create)
        #: The workspace the index reads and writes (closed by :meth:`close`).
        self.workspace = workspace
        #: The LLM given (None: ``Settings.llm``, read when an engine is made).
        self.llm = _llm(llm) if llm is not None else None
        if self.llm is not None:
            workspace.use_llm(self.llm)
        #: What the last write did (added, updated, unchanged, refused).
        self.last_report = IngestReport()
        self._given_transformations = transformations
        kwargs.pop("storage_context", None)  # trilha owns its storage
        super().__init__(index_struct=IndexDict(), show_progress=show_progress,
                         transformations=transformations, **kwargs)  # fmt: skip
        if nodes:
            self.insert_nodes(nodes)

    @classmethod
    def open(cls, path: str | Path, **kwargs: Any) -> TrilhaIndex:
        """The index stored at ``path`` (a :class:`WorkspaceError` when there is none)."""
        return cls(path=path, create=False, **kwargs)

    @classmethod
    def from_documents(  # type: ignore[override]
        cls,
        documents: Sequence[Document],
        path: str | Path | None = None,
        show_progress: bool = False,
        transformations: list[TransformComponent] | None = None,
        embed_model: BaseEmbedding | None = None,
        **kwargs: Any,
    ) -> TrilhaIndex:
        """A new (or the existing) index at ``path`` holding ``documents``: chunked by trilha,
        or by ``transformations`` when given. Unchanged documents are skipped (``last_report``
        says what was added, updated, unchanged)."""
        index = cls(path=path, create=True, show_progress=show_progress,
                    transformations=transformations, embed_model=embed_model, **kwargs)  # fmt: skip
        index._write_documents(documents)
        return index

    # -- writing --------------------------------------------------------------------------------
    def _write(self, items: Sequence[Any]) -> IngestReport:
        """Ingest LlamaIndex items; nothing is written when any is refused (one error)."""
        sources = list(to_sources(items))
        refusals = _refusals(sources, self.workspace.settings.access_defaults())
        if refusals:
            more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
            raise BadRequestError(f"nothing written: {refusals[0]}{more}")
        report = self.workspace.ingest(sources, progress=self._show_progress)
        if report.refused:  # an id clash found by the pipeline: others are written
            raise BadRequestError(f"refused {report.refused[0]}")
        self.last_report = report
        return report

    def _write_documents(self, documents: Sequence[Document]) -> IngestReport:
        if self._given_transformations:
            nodes = run_transformations(list(documents), self._given_transformations,
                                        show_progress=self._show_progress)  # fmt: skip
            return self._write(nodes)
        return self._write(documents)

    def _insert(self, nodes: Sequence[BaseNode], **insert_kwargs: Any) -> None:
        self._write(nodes)

    def insert_nodes(self, nodes: Sequence[BaseNode], **insert_kwargs: Any) -> None:
        """Index nodes as they are: one unit per node, its id, text and metadata kept."""
        self._write(nodes)

    async def ainsert_nodes(self, nodes: Sequence[BaseNode], **insert_kwargs: Any) -> None:
        await asyncio.to_thread(self._write, nodes)

    def insert(self, document: Document, **insert_kwargs: Any) -> None:
        """Index (or replace) one document."""
        self._write_documents([document])

    async def ainsert(self, document: Document, **insert_kwargs: Any) -> None:
        await asyncio.to_thread(self._write_documents, [document])

    def update_ref_doc(self, document: Document, **update_kwargs: Any) -> None:
        """Replace a document (the same id) with this version."""
        self._write_documents([document])

    async def aupdate_ref_doc(self, document: Document, **update_kwargs: Any) -> None:
        await asyncio.to_thread(self._write_documents, [document])

    def delete_ref_doc(
        self, ref_doc_id: str, delete_from_docstore: bool = False, **delete_kwargs: Any
    ) -> None:
        """Remove a document and its units from every index."""
        self.workspace.delete(ref_doc_id)

    async def adelete_ref_doc(
        self, ref_doc_id: str, delete_from_docstore: bool = False, **delete_kwargs: Any
    ) -> None:
        await asyncio.to_thread(self.workspace.delete, ref_doc_id)

    def _delete_node(self, node_id: str, **delete_kwargs: Any) -> None:
        raise BadRequestError("trilha deletes whole documents: use delete_ref_doc(doc_id)")

    def refresh_ref_docs(self, documents: Sequence[Document], **update_kwargs: Any) -> list[bool]:
        """Add new documents, replace changed ones, skip unchanged ones; per document, whether
        it was written."""
        ids = [document_id(d) for d in documents]
        before = {i: self.workspace.store.doc_hash(i) for i in ids}
        self._write_documents(documents)
        return [self.workspace.store.doc_hash(i) != before[i] for i in ids]

    async def arefresh_ref_docs(
        self, documents: Sequence[Document], **update_kwargs: Any
    ) -> list[bool]:
        return await asyncio.to_thread(self.refresh_ref_docs, documents)

    @property
    def ref_doc_info(self) -> dict[str, RefDocInfo]:
        """Every document held: its unit (node) ids."""
        store = self.workspace.store
        return {d: RefDocInfo(node_ids=store.unit_ids_of(d)) for d in store.doc_ids()}

    # -- reading --------------------------------------------------------------------------------
    def as_retriever(self, similarity_top_k: int | None = None, **request: Any) -> TrilhaRetriever:
        """A :class:`TrilhaRetriever`: ``similarity_top_k`` hits (``top_k``), ``filters``
        (``MetadataFilters``, a dict, ``SearchFilters``), ``principal`` and any other
        :class:`~trilha.request.SearchRequest` field."""
        if similarity_top_k is not None:
            request["top_k"] = similarity_top_k
        return TrilhaRetriever(
            self.workspace, **{k: v for k, v in request.items() if v is not None}
        )

    def as_query_engine(self, llm: LLMType | None = None, **kwargs: Any) -> BaseQueryEngine:
        """With an LLM (``llm``, else the index's, else ``Settings.llm`` when set): LlamaIndex's
        ``RetrieverQueryEngine`` over :meth:`as_retriever` (``similarity_top_k``, ``filters``,
        ``node_postprocessors``, ``response_mode``...). Without one: trilha's cited answer
        (:class:`TrilhaQueryEngine`, extractive unless TRILHA_* names an LLM)."""
        from llama_index.core.query_engine import RetrieverQueryEngine

        request, rest = _split(kwargs)
        chosen = _llm(llm if llm is not None else self.llm)
        if chosen is None:
            fields = {"k": request.pop("top_k", None), **request}
            return TrilhaQueryEngine(self.workspace, **{k: v for k, v in fields.items() if v})
        return RetrieverQueryEngine.from_args(self.as_retriever(**request), llm=chosen, **rest)

    def as_chat_engine(
        self, chat_mode: ChatMode = ChatMode.BEST, llm: LLMType | None = None, **kwargs: Any
    ) -> BaseChatEngine:
        """LlamaIndex's chat engines over :meth:`as_retriever`; they need an LLM (``llm`` or
        ``Settings.llm``)."""
        from llama_index.core.chat_engine import (
            CondensePlusContextChatEngine,
            CondenseQuestionChatEngine,
            ContextChatEngine,
            SimpleChatEngine,
        )

        chosen = _llm(llm if llm is not None else self.llm)
        if chosen is None:
            raise ConfigurationError("a chat engine needs an LLM: pass llm= or set Settings.llm")
        request, rest = _split(kwargs)
        if chat_mode == ChatMode.CONDENSE_QUESTION:
            engine = self.as_query_engine(llm=chosen, **kwargs)
            return CondenseQuestionChatEngine.from_defaults(query_engine=engine, llm=chosen)
        if chat_mode == ChatMode.SIMPLE:
            return SimpleChatEngine.from_defaults(llm=chosen, **rest)
        kind = ContextChatEngine if chat_mode == ChatMode.CONTEXT else CondensePlusContextChatEngine
        return kind.from_defaults(retriever=self.as_retriever(**request), llm=chosen, **rest)

    def close(self) -> None:
        """Close the workspace."""
        self.workspace.close()

    def __enter__(self) -> TrilhaIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _refusals(sources: list[Loaded], defaults: dict[str, Any]) -> list[Refusal]:
    """The refusals among ``sources``, and the documents whose metadata or text trilha refuses,
    checked before anything is written."""
    refused = [s for s in sources if isinstance(s, Refusal)]
    for doc in (s for s in sources if isinstance(s, SourceDocument)):
        try:
            chunk_document(doc, defaults=defaults)
        except BadRequestError as e:
            refused.append(Refusal(doc.where, str(e)))
    return refused


def _split(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the retriever's arguments, the rest) of an engine's keyword arguments."""
    request = {k: v for k, v in kwargs.items() if k in _REQUEST_FIELDS}
    if "similarity_top_k" in kwargs:
        request["top_k"] = kwargs["similarity_top_k"]
    rest = {k: v for k, v in kwargs.items() if k not in request and k != "similarity_top_k"}
    return request, rest


def _llm(llm: LLMType | None) -> LLM | None:
    """``llm`` (an LLM, or a name LlamaIndex resolves), else ``Settings.llm`` when one was set
    (never LlamaIndex's OpenAI default)."""
    if llm is not None:
        return resolve_llm(llm)
    return Settings._llm
