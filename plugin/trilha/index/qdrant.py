"""Dense index on qdrant-client: local mode in a folder, or a Qdrant server by URL."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ApiException

from trilha.errors import BackendUnavailableError, ConfigurationError
from trilha.index.filters import FilterExpr
from trilha.index.qdrant_schema import INTEGER_FIELDS, KEYWORD_FIELDS, FilterCompiler, point_id
from trilha.types import TextUnit

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


def _answering(
    method: Callable[Concatenate[QdrantIndex, P], R],
) -> Callable[Concatenate[QdrantIndex, P], R]:
    """A server that does not answer (down, unreachable, failing) becomes one
    :class:`BackendUnavailableError` naming it: the search is refused with a 503, not a 500."""

    def call(self: QdrantIndex, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except (ApiException, OSError) as e:
            raise BackendUnavailableError(
                f"Qdrant at {self.where} did not answer ({type(e).__name__}: {e}); check that "
                "it runs and TRILHA_QDRANT_URL names it"
            ) from e

    functools.update_wrapper(call, method)
    return call


class _Models:
    """qdrant-client's models under the names :class:`FilterCompiler` expects."""

    Filter = models.Filter
    FieldCondition = models.FieldCondition
    MatchValue = models.MatchValue
    MatchAny = models.MatchAny
    Range = models.Range


class QdrantIndex:
    """Unit vectors in a Qdrant collection (qdrant-client)."""

    in_process = False  # a server's, or local mode's (pure Python: for small corpora)

    def __init__(
        self,
        client: QdrantClient,
        collection: str,
        dimension: int,
        where: str = "local mode",
        exact_below: int = 0,
    ) -> None:
        self._client = client
        #: The server's URL or the local-mode folder (named in errors).
        self.where = where
        #: A filter keeping fewer units is scored exactly (a server's planner may take a graph
        #: search for it; local mode is exact anyway: 0).
        self.exact_below = exact_below
        self.collection = collection
        self.dimension = dimension
        self._filters = FilterCompiler(_Models)
        self._ensure_collection()

    @classmethod
    def open(
        cls,
        *,
        path: Path | None,
        url: str | None,
        api_key: str | None,
        collection: str,
        dimension: int,
        exact_below: int = 0,
    ) -> QdrantIndex:
        """Local mode at ``path``, or a server at ``url`` (``exact_below``: see the
        attribute)."""
        try:
            client = QdrantClient(url=url, api_key=api_key) if url else QdrantClient(path=str(path))
        except RuntimeError as e:  # local mode folder locked by another client
            raise BackendUnavailableError(
                f"cannot open Qdrant at {url or path}: {e}. Close the other process using "
                "this workspace, or set TRILHA_QDRANT_URL to a server."
            ) from e
        return cls(client, collection, dimension, str(url or path), exact_below)

    def _ensure_collection(self) -> None:
        try:
            exists = self._client.collection_exists(self.collection)
        except Exception as e:
            raise BackendUnavailableError(f"Qdrant unreachable: {e}") from e
        indexed: set[str] = set()
        if exists:
            info = self._client.get_collection(self.collection)
            vectors = info.config.params.vectors
            size = vectors.size if isinstance(vectors, models.VectorParams) else None
            if size is not None and size != self.dimension:
                raise ConfigurationError(
                    f"collection {self.collection!r} holds {size}-d vectors but the encoder "
                    f"makes {self.dimension}-d ones; use another workspace or set "
                    "TRILHA_EMBEDDING_DIMENSION/TRILHA_EMBEDDING_MODEL to match"
                )
            indexed = set(info.payload_schema or {})
        else:
            self._client.create_collection(
                self.collection,
                vectors_config=models.VectorParams(
                    size=self.dimension, distance=models.Distance.COSINE
                ),
            )
        # a server gets the payload indices its collection lacks (a collection made before a
        # field was indexed gets it); local mode has no payload indices
        if self._client._client.__class__.__name__ != "QdrantLocal":
            kinds = {name: models.PayloadSchemaType.KEYWORD for name in KEYWORD_FIELDS}
            kinds.update({name: models.PayloadSchemaType.INTEGER for name in INTEGER_FIELDS})
            for name, kind in kinds.items():
                if name not in indexed:
                    self._client.create_payload_index(self.collection, name, kind)

    def close(self) -> None:
        """Release the client (and the local-mode folder lock)."""
        self._client.close()

    @_answering
    def count(self) -> int:
        """Points in the collection."""
        return int(self._client.count(self.collection, exact=True).count)

    @_answering
    def upsert(
        self, units: Sequence[TextUnit], vectors: npt.NDArray[np.float32], batch_size: int = 512
    ) -> None:
        """Insert or replace units' vectors and payloads."""
        for start in range(0, len(units), batch_size):
            chunk = units[start : start + batch_size]
            points = [
                models.PointStruct(
                    id=point_id(u.unit_id), vector=vectors[start + i].tolist(), payload=u.payload()
                )
                for i, u in enumerate(chunk)
            ]
            self._client.upsert(self.collection, points=points, wait=True)

    @_answering
    def delete_doc(self, doc_id: str) -> None:
        """Remove every point of a document."""
        selector = models.FilterSelector(
            filter=models.Filter(
                must=[models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id))]
            )
        )
        self._client.delete(self.collection, points_selector=selector, wait=True)

    @_answering
    def delete_units(self, unit_ids: Sequence[str], batch_size: int = 1024) -> None:
        """Remove the points of these units."""
        for start in range(0, len(unit_ids), batch_size):
            ids = [point_id(u) for u in unit_ids[start : start + batch_size]]
            selector = models.PointIdsList(points=list(ids))
            self._client.delete(self.collection, points_selector=selector, wait=True)

    @_answering
    def unit_ids(self) -> set[str]:
        """The ``unit_id`` of every point."""
        out: set[str] = set()
        offset: Any = None
        while True:
            records, offset = self._client.scroll(
                self.collection,
                limit=4096,
                offset=offset,
                with_payload=["unit_id"],
                with_vectors=False,
            )
            out.update(str(_payload(r).get("unit_id")) for r in records)
            if offset is None:
                return out

    @_answering
    def vectors(self, unit_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors by unit id (ids without a point are left out)."""
        out: dict[str, npt.NDArray[np.float32]] = {}
        for start in range(0, len(unit_ids), 1024):
            chunk = list(unit_ids[start : start + 1024])
            records = self._client.retrieve(
                self.collection,
                [point_id(u) for u in chunk],
                with_payload=["unit_id"],
                with_vectors=True,
            )
            for r in records:
                vec = r.vector if not isinstance(r.vector, dict) else r.vector.get("")
                out[str(_payload(r)["unit_id"])] = np.asarray(vec, dtype=np.float32)
        return out

    @_answering
    def search(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        expr: FilterExpr | None = None,
        exact: bool = False,
    ) -> list[tuple[str, float]]:
        """Top ``k`` (unit_id, cosine) pairs among the units matching ``expr``; ``exact``
        scores every one of them, whatever graphs the collection has."""
        if k <= 0:
            return []
        response = self._client.query_points(
            self.collection,
            query=vector.tolist(),
            limit=k,
            query_filter=None if expr is None or expr.is_empty() else self._filters.compile(expr),
            search_params=models.SearchParams(exact=True) if exact else None,
            with_payload=["unit_id"],
            with_vectors=False,
        )
        return [(str(_payload(p)["unit_id"]), float(p.score)) for p in response.points]


def _payload(point: Any) -> dict[str, Any]:
    payload = point.payload
    return payload if isinstance(payload, dict) else {}
