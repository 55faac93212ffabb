"""The dense index: one protocol, Qdrant behind it.

Backends (``TRILHA_QDRANT_MODE``):

* ``edge`` (default): Qdrant's own engine in-process (``qdrant-edge-py``), persisted in the
  workspace, with payload indices on the filter fields; exact search below
  ``TRILHA_DENSE_HNSW_THRESHOLD`` points (~1 ms on 5k units), HNSW built in the background
  above it (:mod:`trilha.index.edge_hnsw`).
* ``local``: ``qdrant-client``'s local mode (``QdrantClient(path=...)``) in the workspace. It is
  pure Python: fine for small corpora, ~210 ms plain and ~2 s filtered at 100k units.
* ``server``: any Qdrant server when ``TRILHA_QDRANT_URL`` is set.

Every backend stores the unit's flat metadata as payload and evaluates filters inside the
search; what the Qdrant backends share (point ids, payload indices, the filter compiler) is in
:mod:`trilha.index.qdrant_schema`, so they never import this module back. Vectors are compared
by cosine. :func:`open_dense_index` imports only the backend it opens.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from trilha.errors import ConfigurationError, requires_extra
from trilha.index.filters import FilterExpr
from trilha.types import TextUnit

if TYPE_CHECKING:
    from trilha.index.edge_hnsw import HnswPlan


@runtime_checkable
class DenseIndex(Protocol):
    """Unit vectors with payloads, searched by cosine with filters inside the search."""

    #: The vectors' length.
    dimension: int

    #: Whether the vectors are in this process (the embedded shard), so that reading them all
    #: costs no network: then the lexical snapshot keeps a copy of each row's to score
    #: selective filters itself (:mod:`trilha.index.row_vectors`).
    in_process: bool

    def upsert(self, units: Sequence[TextUnit], vectors: npt.NDArray[np.float32]) -> None:
        """Insert or replace units' vectors and payloads."""
        ...

    def delete_doc(self, doc_id: str) -> None:
        """Remove every point of a document."""
        ...

    def delete_units(self, unit_ids: Sequence[str]) -> None:
        """Remove the points of these units (ids without a point are ignored)."""
        ...

    def unit_ids(self) -> set[str]:
        """The ``unit_id`` of every point (for repair: compared with the unit store's ids)."""
        ...

    #: A filter keeping fewer units than this is best scored exactly, unit by unit, rather
    #: than left to the index's planner (0: nothing to gain; the search is exact anyway).
    exact_below: int

    def search(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        expr: FilterExpr | None = None,
        exact: bool = False,
    ) -> list[tuple[str, float]]:
        """Top ``k`` (unit_id, cosine) pairs among the units matching ``expr``; ``exact``
        scores every unit ``expr`` keeps, even where the index has graphs."""
        ...

    def vectors(self, unit_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors by unit id."""
        ...

    def count(self) -> int:
        """Number of points."""
        ...

    def close(self) -> None:
        """Release files and connections."""
        ...


def open_dense_index(
    *,
    mode: str,
    path: Path,
    url: str | None,
    api_key: str | None,
    collection: str,
    dimension: int,
    hnsw: HnswPlan | None = None,
) -> DenseIndex:
    """The dense index of a workspace for the configured mode; ``hnsw``: when the embedded
    shard is HNSW-built (None: never)."""
    if url or mode == "server":
        if not url:
            raise ConfigurationError("TRILHA_QDRANT_MODE=server needs TRILHA_QDRANT_URL")
        with requires_extra("qdrant", "the dense index on a Qdrant server (TRILHA_QDRANT_URL)"):
            from trilha.index.qdrant import QdrantIndex

        return QdrantIndex.open(
            path=None,
            url=url,
            api_key=api_key,
            collection=collection,
            dimension=dimension,
            exact_below=hnsw.threshold if hnsw is not None else 0,
        )
    if mode == "local":
        with requires_extra("qdrant", "TRILHA_QDRANT_MODE=local"):
            from trilha.index.qdrant import QdrantIndex

        return QdrantIndex.open(
            path=path / "qdrant", url=None, api_key=None, collection=collection, dimension=dimension
        )
    if mode == "edge":
        from trilha.index.qdrant_edge import QdrantEdgeIndex

        return QdrantEdgeIndex.open(path / "qdrant-edge", dimension=dimension, hnsw=hnsw)
    raise ConfigurationError(f"unknown TRILHA_QDRANT_MODE {mode!r}; use edge, local or server")
