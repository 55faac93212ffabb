"""Dense index on qdrant-edge: Qdrant's engine running inside this process.

The shard lives in the workspace folder. Payload indices on the filter fields let filtered
searches visit only matching points. Below :attr:`HnswPlan.threshold
<trilha.index.edge_hnsw.HnswPlan.threshold>` points search is exact; above it the shard is
HNSW-built in the background (:mod:`trilha.index.edge_hnsw`, which says how searches stay
correct meanwhile).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from trilha.diskspace import NEW_WORKSPACE_BYTES, UNIT_BYTES, ensure_room
from trilha.errors import BackendUnavailableError, ConfigurationError, MissingDependencyError
from trilha.index import edge_hnsw
from trilha.index.edge_hnsw import HnswPlan, Journal
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


class Gate:
    """Many searches (and writes) at once, or one swap of the shard alone. ``with gate:`` holds
    it with others (two plain lock turns: a search pays about a microsecond);
    :meth:`alone` waits for those holding it, and holds new ones back, until the swap is done.
    It lives here, not in :mod:`~trilha.index.edge_hnsw`: a warm search runs no code there."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._shared = 0
        self._closed = False
        self._open = threading.Event()
        self._open.set()
        self._one = threading.Lock()  # one swap at a time

    def __enter__(self) -> None:
        while True:
            with self._lock:
                if not self._closed:
                    self._shared += 1
                    return
            self._open.wait()

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._shared -= 1

    @contextlib.contextmanager
    def alone(self) -> Iterator[None]:
        """Hold the shard alone (waits for those holding it to finish)."""
        with self._one:
            with self._lock:
                self._closed = True
                self._open.clear()
            while True:
                with self._lock:
                    if self._shared == 0:
                        break
                time.sleep(0.001)
            try:
                yield
            finally:
                with self._lock:
                    self._closed = False
                self._open.set()


class QdrantEdgeIndex:
    """Unit vectors in an embedded Qdrant shard, HNSW-built in the background by ``hnsw``'s
    plan (None: never, search stays exact)."""

    in_process = True

    def __init__(
        self,
        shard: Any,
        qe: Any,
        dimension: int,
        folder: Path | None = None,
        hnsw: HnswPlan | None = None,
    ) -> None:
        self._shard = shard
        self.folder = folder  # whose disk must have room before a write (None: not checked)
        self._qe = qe
        self._filters = FilterCompiler(_Models(qe))
        self.dimension = dimension
        self._lock = threading.Lock()  # writes, a build's copy and its swap, one at a time
        self._gate = Gate()  # searches and writes share the shard; a swap holds it alone
        self.hnsw = hnsw if hnsw is not None and hnsw.active and folder is not None else None
        #: A filter keeping fewer points is scored exactly (:meth:`search`'s ``exact``): the
        #: plan's threshold. Qdrant's planner estimates a conjunction of conditions from each
        #: one's count, and took a graph search for a filter keeping 2% of 500,000 points
        #: (dense recall@10 0.26); the caller counts them on its lexical snapshot.
        self.exact_below = 0 if self.hnsw is None else self.hnsw.threshold
        self._params = None if self.hnsw is None else self.hnsw.search_params(qe)
        self._journal: Journal | None = None  # writes during a build, replayed after it
        self._builder: threading.Thread | None = None
        self._last_write = 0.0
        self._hurry = threading.Event()  # build now (settle, close), not after the quiet time
        self._cancel = threading.Event()  # closing without waiting: kill the build
        self._stale = threading.Event()  # the running build fell behind the writes
        self.builds = 0  # builds swapped in by this process

    @classmethod
    def open(cls, folder: Path, dimension: int, hnsw: HnswPlan | None = None) -> QdrantEdgeIndex:
        """Load the shard in ``folder`` or create it; either way with its payload indices."""
        qe = _edge()
        params = qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine)
        config = qe.EdgeConfig(vectors=params)
        try:
            edge_hnsw.recover(folder)
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
        # every open creates the payload indices the shard lacks: a shard made before a field was
        # indexed gets it (the policy's fields unindexed made filtered searches ~20x slower);
        # those it has are left alone (recreating all 17 took 0.3 s of every open)
        held = {name: index.data_type for name, index in shard.info().payload_schema.items()}
        for names, kind in (
            (KEYWORD_FIELDS, qe.PayloadSchemaType.Keyword),
            (INTEGER_FIELDS, qe.PayloadSchemaType.Integer),
        ):
            for name in names:
                if held.get(name) != kind:
                    shard.update(qe.UpdateOperation.create_field_index(name, kind))
        return cls(shard, qe, dimension, folder, hnsw)

    def close(self, finish_build: bool = True) -> None:
        """Flush and release the shard. First, by default, finish a build this process's writes
        made due, however long it takes (so that ``trilha ingest`` leaves the shard built);
        ``finish_build=False`` (a long-lived process shutting down) cancels it instead
        (:meth:`cancel_build`), leaving the shard as it was, to be built by the next writer."""
        if finish_build:
            self.settle()
        else:
            self.cancel_build()
        with self._lock, self._gate.alone():
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
        with self._gate:
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
        qe = self._qe
        with self._lock, self._gate:
            shard = self._live()
            for start in range(0, len(units), batch_size):
                points = [
                    qe.Point(point_id(u.unit_id), vectors[start + i].tolist(), u.payload())
                    for i, u in enumerate(units[start : start + batch_size])
                ]
                shard.update(qe.UpdateOperation.upsert_points(points))
                if self._journal is not None:
                    self._journal.points.update(str(p.id) for p in points)
            shard.flush()
            self._wrote()

    def delete_doc(self, doc_id: str) -> None:
        """Remove every point of a document."""
        qe = self._qe
        flt = qe.Filter(must=[qe.FieldCondition(key="doc_id", match=qe.MatchValue(doc_id))])
        with self._lock, self._gate:
            shard = self._live()
            shard.update(qe.UpdateOperation.delete_points_by_filter(flt))
            shard.flush()
            if self._journal is not None:
                self._journal.docs.append(doc_id)
            self._wrote()

    def delete_units(self, unit_ids: Sequence[str], batch_size: int = 1024) -> None:
        """Remove the points of these units, then flush."""
        qe = self._qe
        with self._lock, self._gate:
            shard = self._live()
            for start in range(0, len(unit_ids), batch_size):
                ids = [point_id(u) for u in unit_ids[start : start + batch_size]]
                shard.update(qe.UpdateOperation.delete_points(ids))
                if self._journal is not None:
                    self._journal.points.update(ids)
            shard.flush()
            self._wrote()

    def unit_ids(self) -> set[str]:
        """The ``unit_id`` of every point."""
        qe = self._qe
        out: set[str] = set()
        offset = None
        with self._gate:
            shard = self._live()
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
        with self._gate:
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
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        expr: FilterExpr | None = None,
        exact: bool = False,
        ef: int | None = None,
    ) -> list[tuple[str, float]]:
        """Top ``k`` (unit_id, cosine) pairs among the units matching ``expr``; ``exact``
        scores every matching point even where the shard has graphs (recall's reference),
        ``ef`` overrides the plan's candidates per graph search."""
        if k <= 0:
            return []
        qe = self._qe
        flt = None if expr is None or expr.is_empty() else self._filters.compile(expr)
        params = self._params
        if exact or ef is not None:
            params = qe.SearchParams(exact=exact, hnsw_ef=ef)
        request = qe.SearchRequest(
            query=qe.Query.Nearest(vector.tolist()),
            limit=k,
            filter=flt,
            params=params,
            with_payload=["unit_id"],
        )
        with self._gate:
            found = self._live().search(request)
        return [(str(p.payload["unit_id"]), float(p.score)) for p in found]

    # -- the background HNSW build (trilha.index.edge_hnsw) ----------------------------------
    def hnsw_state(self) -> dict[str, Any]:
        """Points, points in a graph, whether a build is running, builds swapped in."""
        with self._gate:
            info = self._live().info()
        return {
            "points": int(info.points_count),
            "indexed": int(info.indexed_vectors_count),
            "building": self._builder is not None and self._builder.is_alive(),
            "builds": self.builds,
        }

    def _due(self) -> bool:
        """Whether the shard holds ``threshold`` points outside a graph (shard held)."""
        if self.hnsw is None:
            return False
        info = self._live().info()
        return int(info.points_count) - int(info.indexed_vectors_count) >= self.hnsw.threshold

    def _wrote(self) -> None:
        """After a write (lock held): a build is started when one is due and none runs; it
        waits for the writes to stop. A running build that fell ``threshold`` points behind is
        abandoned (the loop starts another once the writes stop)."""
        self._last_write = time.monotonic()
        if self.hnsw is None:
            return
        if self._builder is not None and self._builder.is_alive():
            if self._journal is not None and len(self._journal) >= self.hnsw.threshold:
                self._stale.set()
            return
        if self._due():
            self._builder = threading.Thread(target=self._build_loop, name="trilha-hnsw")
            self._builder.daemon = True
            self._builder.start()

    def settle(self, timeout: float | None = None) -> None:
        """Start a due build now (not after the quiet time) and wait for it to be swapped in."""
        builder = self._builder
        if builder is None or not builder.is_alive():
            return
        self._hurry.set()
        builder.join(timeout)
        if not builder.is_alive():
            self._hurry.clear()

    def cancel_build(self, timeout: float | None = None) -> bool:
        """Stop a running build: its child killed, its copy removed, the shard left as it is
        (a swap under way is finished first); a later write that makes a build due starts
        another. Whether no build runs any more (the thread joined within ``timeout``)."""
        builder = self._builder
        if builder is None or not builder.is_alive():
            return True
        self._cancel.set()
        self._hurry.set()  # out of the wait for quiet
        builder.join(timeout)
        if builder.is_alive():
            return False
        self._cancel.clear()
        self._hurry.clear()
        return True

    def _build_loop(self) -> None:
        assert self.hnsw is not None and self.folder is not None
        while not self._cancel.is_set():
            while not self._hurry.is_set():  # the ingest is over when writes stop
                quiet = time.monotonic() - self._last_write
                if quiet >= self.hnsw.quiet_s or self._hurry.wait(self.hnsw.quiet_s - quiet):
                    break
            if self._cancel.is_set():
                return
            try:
                if not self._build_once():
                    return
            except Exception:  # a failed build leaves the shard exact; the next write retries
                log.exception("the HNSW build of %s failed", self.folder)
                return
            with self._lock, self._gate:
                if self._shard is None or not self._due():
                    self._builder = None  # a write from now on starts the next one
                    return

    def _build_once(self) -> bool:
        """Copy, build in a child, swap in with the writes made meanwhile; False: nothing
        done (closed, cancelled or the child failed)."""
        assert self.hnsw is not None and self.folder is not None
        folder = self.folder
        with self._lock:
            if self._shard is None:
                return False
            self._shard.flush()
            start = time.perf_counter()
            copy = edge_hnsw.copy_for_build(folder)
            self._journal = Journal()
            self._stale.clear()
        log.info("building HNSW for %s (copied in %.1f s)", folder, time.perf_counter() - start)
        try:
            built = edge_hnsw.run_build(copy, self.hnsw, self.dimension, self._cancel, self._stale)
            if self._stale.is_set():
                log.info("HNSW build of %s abandoned: the writes went on", folder)
                return True  # the loop waits for quiet and starts again
            if not built:
                return False
            with self._lock, self._gate.alone():
                if self._shard is None:
                    return False
                self._swap(folder)
        finally:
            with self._lock:  # a write checks for the journal, then adds to it, under the lock
                self._journal = None
            edge_hnsw.drop_copy(folder)  # when it was not swapped in
        self.builds += 1
        log.info("HNSW of %s swapped in", folder)
        return True

    def _swap(self, folder: Path) -> None:
        """Swap the built copy in and replay the journal into it (lock and gate held)."""
        qe, old, journal = self._qe, self._shard, self._journal
        assert journal is not None
        ids = sorted(journal.points)
        present: list[Any] = []
        for start in range(0, len(ids), 1024):
            present += old.retrieve(ids[start : start + 1024], with_payload=True, with_vector=True)
        old.flush()
        old.close()
        self._shard = None
        new = None
        try:
            edge_hnsw.swap_in(folder)
            new = qe.EdgeShard.load(str(folder))
            self._replay(new, journal, ids, present)
        except edge_hnsw.UnfinishedSwap:  # nothing moved: the shard as it was
            self._shard = qe.EdgeShard.load(str(folder))
            raise
        except Exception:  # opening or replaying into the built shard failed: the old one back
            if new is not None:
                with contextlib.suppress(Exception):
                    new.close()
            edge_hnsw.recover(folder)
            self._shard = qe.EdgeShard.load(str(folder))
            raise
        self._shard = new
        edge_hnsw.drop_old(folder)

    def _replay(self, new: Any, journal: Journal, ids: list[str], present: list[Any]) -> None:
        """The writes of the build's time into the built shard: documents deleted, points
        deleted where the old shard holds none, the others as it holds them; flushed."""
        qe = self._qe
        for doc_id in journal.docs:
            match = qe.MatchValue(doc_id)
            flt = qe.Filter(must=[qe.FieldCondition(key="doc_id", match=match)])
            new.update(qe.UpdateOperation.delete_points_by_filter(flt))
        gone = sorted(set(ids) - {str(r.id) for r in present})
        for start in range(0, len(gone), 1024):
            new.update(qe.UpdateOperation.delete_points(gone[start : start + 1024]))
        for start in range(0, len(present), 1024):
            points = [
                qe.Point(
                    r.id,
                    r.vector.get("") if isinstance(r.vector, dict) else r.vector,
                    r.payload or {},
                )
                for r in present[start : start + 1024]
            ]
            new.update(qe.UpdateOperation.upsert_points(points))
        new.flush()
