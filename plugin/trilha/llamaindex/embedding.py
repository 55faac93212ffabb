"""Encoders across the border: a trilha :class:`~trilha.encode.base.Embedder` as a LlamaIndex
``BaseEmbedding`` (:class:`TrilhaEmbedding`), and any ``BaseEmbedding`` as a workspace's
encoder (:class:`LlamaIndexEmbedder`, :func:`settings_for`)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.settings import Settings

from trilha.encode.base import Embedder
from trilha.settings import TrilhaSettings


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


#: Settings that name trilha's own encoder (they win over ``Settings.embed_model``).
_ENCODER_SETTINGS = {"embedding_model", "embedding_dimension"}


class LlamaIndexEmbedder:
    """Any LlamaIndex ``BaseEmbedding`` as trilha's :class:`~trilha.encode.base.Embedder`: the
    dense encoder of a workspace (vectors L2-normalised; the model id recorded is
    ``llamaindex:<class>:<model_name>``)."""

    def __init__(self, embed_model: BaseEmbedding) -> None:
        self.embed_model = embed_model
        self._dimension = len(embed_model.get_text_embedding("dimension"))

    @staticmethod
    def id_of(embed_model: BaseEmbedding) -> str:
        """The model id recorded for a workspace built with ``embed_model``."""
        return f"llamaindex:{embed_model.class_name()}:{embed_model.model_name}"

    @property
    def model_id(self) -> str:
        return self.id_of(self.embed_model)

    @property
    def dimension(self) -> int:
        return self._dimension

    def encode_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return _normalised([self.embed_model.get_query_embedding(t) for t in texts])

    def encode_documents(
        self, texts: Sequence[str], show_progress: bool = False
    ) -> npt.NDArray[np.float32]:
        rows = self.embed_model.get_text_embedding_batch(list(texts), show_progress=show_progress)
        return _normalised(rows)


def _normalised(rows: Sequence[Sequence[float]]) -> npt.NDArray[np.float32]:
    array = np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return (array / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def settings_for(
    settings: TrilhaSettings, embed_model: Any = None, recorded: str | None = None
) -> tuple[TrilhaSettings, Embedder | None]:
    """The settings and encoder of a workspace opened with a LlamaIndex embedding: the one
    given (or a trilha :class:`Embedder`, used as it is), else ``Settings.embed_model`` when one
    was set and the settings name no encoder of their own; (``settings``, None) otherwise.

    ``recorded`` is the model id an existing workspace was built with (None: a new one).
    ``Settings.embed_model`` is a default for new indices: an existing one takes it only when it
    was built with that same model, and otherwise keeps its own encoder."""
    if embed_model is None:
        if settings.model_fields_set & _ENCODER_SETTINGS:
            return settings, None
        embed_model = Settings._embed_model
        if embed_model is None or isinstance(embed_model, TrilhaEmbedding):
            return settings, None
        if recorded is not None and recorded != LlamaIndexEmbedder.id_of(embed_model):
            return settings, None
    if not isinstance(embed_model, BaseEmbedding):
        return settings, embed_model
    embedder = LlamaIndexEmbedder(embed_model)
    update = {"embedding_model": embedder.model_id, "embedding_dimension": embedder.dimension}
    return settings.model_copy(update=update), embedder
