"""Dense index on qdrant-edge: Qdrant's engine running inside this process.

The shard lives in the workspace folder. Payload indices on the filter fields let filtered
searches visit only matching points; segments are not HNSW-optimised, so search is exact.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from trilha.diskspace import NEW_WORKSPACE_BYTES, UNIT_BYTES, ensure_room
from trilha.errors import BackendUnavailableError, ConfigurationError, MissingDependencyError
from trilha.index.filters import FilterExpr
from trilha.index.qdrant_schema import INTEGER_FIELDS, KEYWORD_FIELDS, FilterCompiler, point_id
from trilha.types import TextUnit

log = logging.getLogger(__name__)


def _edge() -> Any:
    try:
        import qdrant_edge
    except ImportError as e:
        raise MissingDependencyError("qdrant-edge-py", purpose="the embedded Qdrant index") from e
    return qdrant_edge


class _Models:
    """qdrant-edge's classes under the names :class:`FilterCompiler` expects."""

    def __init__(self, qe: Any) -> None:
        self.Filter = qe.Filter
        self.FieldCondition = qe.FieldCondition
        self.MatchValue = qe.MatchValue
        self.MatchAny = qe.MatchAny
        self.Range = qe.RangeFloat


class QdrantEdgeIndex:
    """Unit vectors in an embedded Qdrant shard."""

    def __init__(self, shard: Any, qe: Any, dimension: int, folder: Path | None = None) -> None:
        self._shard = shard
        self.folder = folder  # whose disk must have room before a write (None: not checked)
        self._qe = qe
        self._filters = FilterCompiler(_Models(qe))
        self.dimension = dimension
        self._lock = threading.Lock()

    @classmethod
    def open(cls, folder: Path, dimension: int) -> QdrantEdgeIndex:
        """Load the shard in ``folder`` or create it; either way with its payload indices."""
        qe = _edge()
        params = qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine)
        config = qe.EdgeConfig(vectors=params)
        try:
            if folder.exists() and any(folder.iterdir()):
                shard = qe.EdgeShard.load(str(folder))
                size = shard.config().vectors[""].size if hasattr(shard, "config") else None
                if size is not None and size != dimension:
                    raise ConfigurationError(
                        f"{folder} holds {size}-d vectors, the encoder makes {dimension}-d"
                    )
            else:  # the new shard's files are written through memory maps: room first
                ensure_room(folder, NEW_WORKSPACE_BYTES)
                folder.mkdir(parents=True, exist_ok=True)
                shard = qe.EdgeShard.create(str(folder), config)
        except (OSError, RuntimeError, ValueError) as e:
            raise BackendUnavailableError(
                f"cannot open the embedded Qdrant shard at {folder}: {e}. Is another process "
                "using this workspace?"
            ) from e
        # every open (re)creates the payload indices: a shard made before a field was indexed
        # gets it (the policy's fields unindexed made filtered searches ~20x slower)
        for name in KEYWORD_FIELDS:
            shard.update(qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Keyword))
        for name in INTEGER_FIELDS:
            shard.update(qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Integer))
        return cls(shard, qe, dimension, folder)

    def close(self) -> None:
        """Flush and release the shard."""
        with self._lock:
            if self._shard is not None:
                self._shard.flush()
                self._shard.close()
                self._shard = None

    def _live(self) -> Any:
        if self._shard is None:
            raise BackendUnavailableError("the dense index is closed; reopen the workspace")
        return self._shard

    def count(self) -> int:
        """Points in the shard."""
        return int(self._live().count(self._qe.CountRequest(exact=True)))

    def upsert(
        self, units: Sequence[TextUnit], vectors: npt.NDArray[np.float32], batch_size: int = 1024
    ) -> None:
        """Insert or replace units' vectors and payloads, then flush to disk. A disk without
        room for them is a :class:`~trilha.errors.DiskFullError` before anything is written
        (the shard writes through memory maps: a full disk there would be a SIGBUS)."""
        if len(units) != len(vectors):
            raise ValueError(f"{len(units)} units but {len(vectors)} vectors")
        if self.folder is not None:
            ensure_room(self.folder, len(units) * UNIT_BYTES)
        qe, shard = self._qe, self._live()
        for start in range(0, len(units), batch_size):
            points = [
                qe.Point(point_id(u.unit_id), vectors[start + i].tolist(), u.payload())
                for i, u in enumerate(units[start : start + batch_size])
            ]
            shard.update(qe.UpdateOperation.upsert_points(points))
        shard.flush()

    def delete_doc(self, doc_id: str) -> None:
        """Remove every point of a document."""
        qe, shard = self._qe, self._live()
        flt = qe.Filter(must=[qe.FieldCondition(key="doc_id", match=qe.MatchValue(doc_id))])
        shard.update(qe.UpdateOperation.delete_points_by_filter(flt))
        shard.flush()

    def delete_units(self, unit_ids: Sequence[str], batch_size: int = 1024) -> None:
        """Remove the points of these units, then flush."""
        qe, shard = self._qe, self._live()
        for start in range(0, len(unit_ids), batch_size):
            ids = [point_id(u) for u in unit_ids[start : start + batch_size]]
            shard.update(qe.UpdateOperation.delete_points(ids))
        shard.flush()

    def unit_ids(self) -> set[str]:
        """The ``unit_id`` of every point."""
        qe, shard = self._qe, self._live()
        out: set[str] = set()
        offset = None
        while True:
            request = qe.ScrollRequest(
                offset=offset, limit=4096, with_payload=["unit_id"], with_vector=False
            )
            records, offset = shard.scroll(request)
            out.update(str((r.payload or {}).get("unit_id")) for r in records)
            if offset is None:
                return out

    def vectors(self, unit_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors by unit id (ids without a point are left out)."""
        out: dict[str, npt.NDArray[np.float32]] = {}
        shard = self._live()
        for start in range(0, len(unit_ids), 1024):
            chunk = list(unit_ids[start : start + 1024])
            for r in shard.retrieve(
                [point_id(u) for u in chunk], with_payload=["unit_id"], with_vector=True
            ):
                vec = r.vector.get("") if isinstance(r.vector, dict) else r.vector
                out[str((r.payload or {})["unit_id"])] = np.asarray(vec, dtype=np.float32)
        return out

    def search(
        self, vector: npt.NDArray[np.float32], k: int, expr: FilterExpr | None = None
    ) -> list[tuple[str, float]]:
        """Top ``k`` (unit_id, cosine) pairs among the units matching ``expr``."""
        if k <= 0:
            return []
        qe = self._qe
        flt = None if expr is None or expr.is_empty() else self._filters.compile(expr)
        request = qe.SearchRequest(
            query=qe.Query.Nearest(vector.tolist()), limit=k, filter=flt, with_payload=["unit_id"]
        )
        return [(str(p.payload["unit_id"]), float(p.score)) for p in self._live().search(request)]
