"""TrilhaRetriever: the hybrid searcher as a LlamaIndex ``BaseRetriever`` (sync and async)."""

from __future__ import annotations

from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from trilha.llamaindex.nodes import hit_to_node
from trilha.types import Trace
from trilha.workspace import Workspace


class TrilhaRetriever(BaseRetriever):
    """BM25 ∪ dense retrieval over a :class:`~trilha.workspace.Workspace`.

    ``filters`` may be LlamaIndex ``MetadataFilters``, trilha ``SearchFilters`` or a dict of
    its fields; they are applied inside both indices. ``query_bundle.embedding``, when set, is
    used instead of encoding the query again. The last search's trace is kept in
    :attr:`last_trace`.
    """

    def __init__(
        self,
        workspace: Workspace,
        *,
        top_k: int | None = None,
        filters: Any = None,
        merge: str | None = None,
        candidates: int | None = None,
        kg: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.workspace = workspace
        self.params = workspace.params(
            top_k=top_k, candidates=candidates, merge=merge, filters=filters, kg=kg
        )
        self.last_trace: Trace | None = None

    def _vector(self, query_bundle: QueryBundle) -> Any:
        if query_bundle.embedding is None:
            return None
        import numpy as np

        return np.asarray(query_bundle.embedding, dtype=np.float32)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self.workspace.searcher.search(
            query_bundle.query_str, self.params, self._vector(query_bundle)
        )
        self.last_trace = result.trace
        return [hit_to_node(h) for h in result.hits]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = await self.workspace.searcher.asearch(
            query_bundle.query_str, self.params, self._vector(query_bundle)
        )
        self.last_trace = result.trace
        return [hit_to_node(h) for h in result.hits]
