"""Node postprocessors: cross-encoder rerank as a LlamaIndex ``BaseNodePostprocessor``."""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from trilha.errors import BadRequestError
from trilha.llamaindex.nodes import hit_to_node, node_to_hit
from trilha.rerank.base import Reranker
from trilha.rerank.cross_encoder import CrossEncoderReranker


class CrossEncoderRerank(BaseNodePostprocessor):
    """Reorders nodes by a cross-encoder; earlier stage scores stay in the node metadata.

    Pass ``model`` (id or local path) or a ready ``reranker``. On the async path the model runs
    in a worker thread, off the event loop.
    """

    model: str | None = Field(default=None, description="Cross-encoder id or local path.")
    top_n: int = Field(default=12, gt=0, description="Nodes kept.")
    batch_size: int = Field(default=32, gt=0, description="Pairs per batch.")
    max_length: int = Field(default=256, gt=0, description="Max tokens per pair.")
    _reranker: Reranker = PrivateAttr()

    def __init__(
        self, model: str | None = None, *, reranker: Reranker | None = None, **kwargs: Any
    ) -> None:
        super().__init__(model=model, **kwargs)
        if reranker is None:
            if not model:
                raise BadRequestError("CrossEncoderRerank needs model= (id or path) or reranker=")
            reranker = CrossEncoderReranker(
                model, top_n=self.top_n, batch_size=self.batch_size, max_length=self.max_length
            )
        self._reranker = reranker

    @classmethod
    def class_name(cls) -> str:
        return "TrilhaCrossEncoderRerank"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise BadRequestError("rerank needs the query: pass query_bundle / query_str")
        if not nodes:
            return []
        hits = self._reranker.rerank(
            query_bundle.query_str, [node_to_hit(n) for n in nodes], top_n=self.top_n
        )
        return [hit_to_node(h) for h in hits]

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._postprocess_nodes, nodes, query_bundle)
