"""A trilha :class:`~trilha.encode.base.Embedder` as a LlamaIndex ``BaseEmbedding``."""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr

from trilha.encode.base import Embedder


class TrilhaEmbedding(BaseEmbedding):
    """Lets LlamaIndex indices and retrievers use the very encoder a workspace uses."""

    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Embedder, **kwargs: Any) -> None:
        super().__init__(model_name=embedder.model_id, **kwargs)
        self._embedder = embedder

    @classmethod
    def class_name(cls) -> str:
        return "TrilhaEmbedding"

    def _get_query_embedding(self, query: str) -> list[float]:
        return [float(x) for x in self._embedder.encode_queries([query])[0]]

    def _get_text_embedding(self, text: str) -> list[float]:
        return [float(x) for x in self._embedder.encode_documents([text])[0]]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._embedder.encode_documents(texts)]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return await asyncio.to_thread(self._get_query_embedding, query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return await asyncio.to_thread(self._get_text_embedding, text)
