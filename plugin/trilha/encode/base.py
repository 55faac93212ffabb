"""The encoder protocol every embedding backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt


@runtime_checkable
class Embedder(Protocol):
    """Encodes queries and documents into L2-normalised float32 vectors."""

    @property
    def model_id(self) -> str:
        """A string identifying the model (stored in the workspace to detect a switch)."""
        ...

    @property
    def dimension(self) -> int:
        """Vector size."""
        ...

    def encode_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors for queries, shape (len(texts), dimension)."""
        ...

    def encode_documents(
        self, texts: Sequence[str], show_progress: bool = False
    ) -> npt.NDArray[np.float32]:
        """Vectors for passages, shape (len(texts), dimension)."""
        ...
