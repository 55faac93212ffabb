"""TrilhaRetriever: the hybrid searcher as a LlamaIndex ``BaseRetriever`` (sync and async)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from trilha.llamaindex.nodes import hit_to_node
from trilha.request import SearchRequest
from trilha.types import SearchResult
from trilha.workspace import Workspace


class TrilhaRetriever(BaseRetriever):
    """BM25 ∪ dense retrieval over a :class:`~trilha.workspace.Workspace`.

    The keyword arguments are :class:`~trilha.request.SearchRequest` fields (``top_k``,
    ``filters``, ``merge``, ``weights``, ``kg``, ``rerank``, ``candidates``, ``sides``,
    ``principal``), validated once here and used for every query; ``filters`` may be LlamaIndex
    ``MetadataFilters``, trilha ``SearchFilters`` or a dict of its fields, and are applied
    inside both indices, as is the principal's visibility (anonymous when none is given).
    ``query_bundle.embedding``, when set, is used instead of encoding the query again.

    The retriever keeps no per-call state, so one instance serves concurrent queries; call
    :meth:`search` / :meth:`asearch` for the hits together with their trace.
    """

    def __init__(self, workspace: Workspace, **request: Any) -> None:
        callback_manager = request.pop("callback_manager", None)
        verbose = request.pop("verbose", False)
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self.workspace = workspace
        self.request = SearchRequest.make("(template)", **request)
        workspace.plan(self.request)  # refuse bad parameters now, not at the first query

    @staticmethod
    def _vector(query_bundle: QueryBundle) -> npt.NDArray[np.float32] | None:
        if query_bundle.embedding is None:
            return None
        return np.asarray(query_bundle.embedding, dtype=np.float32)

    def search(self, query: str | QueryBundle) -> SearchResult:
        """Hits and trace for one query."""
        bundle = QueryBundle(query) if isinstance(query, str) else query
        return self.workspace.search(
            self.request, query=bundle.query_str, vector=self._vector(bundle)
        )

    async def asearch(self, query: str | QueryBundle) -> SearchResult:
        """Async :meth:`search`."""
        bundle = QueryBundle(query) if isinstance(query, str) else query
        return await self.workspace.asearch(
            self.request, query=bundle.query_str, vector=self._vector(bundle)
        )

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [hit_to_node(h) for h in self.search(query_bundle).hits]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [hit_to_node(h) for h in (await self.asearch(query_bundle)).hits]
