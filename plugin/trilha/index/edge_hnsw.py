"""HNSW for the embedded Qdrant shard, built in the background above a size threshold.

qdrant-edge builds its HNSW graphs in :meth:`EdgeShard.optimize`, which holds Python's GIL
until it ends (minutes at a million points): called in a thread, it would stop every search of
the process. So a shard is built in a child process, on a copy:

1. after the last write of an ingest (no write for :attr:`HnswPlan.quiet_s`), when the shard
   holds at least :attr:`HnswPlan.threshold` points not in a graph, its folder is copied to
   ``<folder>.next`` (writes wait for the copy, searches do not);
2. a child process (``python -m trilha.index.edge_hnsw``, niced, its own thread count) opens
   the copy with the HNSW settings, optimises it and closes it; meanwhile the process searches
   and writes its shard as before (exactly, plus the graphs of any earlier build), and records
   which points and documents each write touched; a build that falls ``threshold`` points
   behind (an ingest that paused, then went on) is abandoned, to start again once writes stop;
3. when the child is done, writes and searches wait while the shard is closed, the folders are
   renamed (``<folder>`` to ``<folder>.old``, ``<folder>.next`` to ``<folder>``), the built
   shard is opened and the recorded writes are replayed into it from the old one (each touched
   point as the old shard holds it now, or deleted where it holds none); then the old folder is
   dropped. A search sees the old shard or the built one, each holding every write so far.

The folders on disk, and what :func:`recover` (run at every open) makes of them after a process
died anywhere in a build:

- ``<folder>.next`` (a copy, built or not, never swapped in): removed;
- ``<folder>.old`` (the swap began and its replay had not completed: the built shard at
  ``<folder>``, if any, may lack writes): ``<folder>`` removed, ``.old`` renamed back to it;
- ``<folder>.trash`` (the replay completed and was flushed; the old shard was being deleted):
  removed, ``<folder>`` is the built shard.

``.old`` becomes ``.trash`` by one rename, the swap's commit point, only after the replay; it is
deleted only under that name, so a half-deleted folder is never taken for the shard. A swap
finds no ``.old`` (a replay that failed put it back at once): :func:`swap_in` refuses one
rather than delete the only copy of writes it may hold.

Below the threshold nothing is built and search stays exact. Points written after a build go
to a plain segment searched exactly beside the graphs, until they are ``threshold`` again.
Filtered searches whose filter matches fewer than ``threshold`` points (by the payload indices'
estimate: Qdrant's query planner, through ``full_scan_threshold``) score those points exactly.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trilha.diskspace import ensure_room

if TYPE_CHECKING:
    from trilha.settings import TrilhaSettings

log = logging.getLogger(__name__)

#: Suffixes of a shard folder's build copy, of the folder a swap replaced (until the replay is
#: done) and of that folder being deleted (after it).
NEXT, OLD, TRASH = ".next", ".old", ".trash"
#: The build's niceness: searches and writes of the process come first, but a busy machine's
#: other work does not starve the build (at 10 it got 3% of a core beside nine busy processes).
NICE = 3


@dataclass(frozen=True)
class HnswPlan:
    """When and how the shard is HNSW-built (the ``TRILHA_DENSE_HNSW_*`` settings); a due
    build starts once no write came for ``quiet_s`` seconds (an ingest's batches come faster)."""

    threshold: int
    m: int
    ef_construct: int
    ef: int
    threads: int
    quiet_s: float = 30.0

    @classmethod
    def of(cls, settings: TrilhaSettings) -> HnswPlan:
        """The plan the settings give."""
        return cls(
            threshold=settings.dense_hnsw_threshold,
            m=settings.dense_hnsw_m,
            ef_construct=settings.dense_hnsw_ef_construct,
            ef=settings.dense_hnsw_ef,
            threads=settings.dense_hnsw_build_threads,
        )

    @property
    def active(self) -> bool:
        """Whether a shard is ever built (threshold 0: never)."""
        return self.threshold > 0

    def full_scan_kb(self, dimension: int) -> int:
        """Qdrant's ``full_scan_threshold``: ``threshold`` vectors of ``dimension`` floats, in
        KB (below it a segment, or a filter's matches, is scored exactly)."""
        return max(1, self.threshold * dimension * 4 // 1024)

    def hnsw_config(self, qe: Any, dimension: int) -> Any:
        """qdrant-edge's HNSW configuration; no per-payload graphs (``payload_m=0``): filters
        run inside the main graph, or exactly when they are selective."""
        return qe.HnswIndexConfig(
            m=self.m,
            ef_construct=self.ef_construct,
            full_scan_threshold=self.full_scan_kb(dimension),
            max_indexing_threads=self.threads,
            payload_m=0,
        )

    def search_params(self, qe: Any, exact: bool = False) -> Any:
        """The search parameters of every query: ``ef`` candidates in a graph, or exact."""
        return qe.SearchParams(hnsw_ef=self.ef, exact=exact)


def recover(folder: Path) -> None:
    """Undo what a process that died inside a build left (the states in the module's
    docstring): a copy and a dropped old shard are removed; a swap cut short before its replay
    was done puts the old shard back (``.old`` is renamed away only once the built shard holds
    the writes of its build, so while it is there the built one may lack some)."""
    old, nxt, trash = _beside(folder, OLD), _beside(folder, NEXT), _beside(folder, TRASH)
    if old.exists():
        if folder.exists():
            shutil.rmtree(folder)
        old.rename(folder)
    for leftover in (nxt, trash):
        if leftover.exists():
            shutil.rmtree(leftover, ignore_errors=True)


def _beside(folder: Path, suffix: str) -> Path:
    return folder.with_name(folder.name + suffix)


def folder_bytes(folder: Path) -> int:
    """Bytes the folder's files take on disk (sparse files by their blocks)."""
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file():
                total += path.stat().st_blocks * 512
    return total


class Journal:
    """What the writes since a build's copy touched: point ids, and documents deleted whole."""

    def __init__(self) -> None:
        self.points: set[str] = set()
        self.docs: list[str] = []

    def __len__(self) -> int:
        return len(self.points) + len(self.docs)


def _die_with_parent(parent: int) -> None:  # pragma: no cover - runs in the child
    """Make this child end with the process that started it (Linux), and yield to it.

    Done by the child itself, not by a ``preexec_fn``: that runs Python in the forked copy of a
    process with threads, and its fork handlers may collect objects of the parent that share
    descriptors with it (an event loop's epoll, whose registrations a close there removes in the
    parent too, so that loop then sleeps forever)."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the line above
            sys.exit(1)
    with contextlib.suppress(OSError):
        os.nice(NICE)


def run_build(folder: Path, plan: HnswPlan, dimension: int, *stop: threading.Event) -> bool:
    """Build ``folder`` (a copy) in a child process; False when it failed or was stopped (one
    of ``stop`` set)."""
    args = [sys.executable, "-m", "trilha.index.edge_hnsw", str(folder), str(dimension)]
    args += [json.dumps(asdict(plan)), str(os.getpid())]
    # its output goes to a file read once it exits (a pipe read then fills at 64 KB and the
    # child, blocked writing, never exits)
    with tempfile.TemporaryFile() as output:
        child = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=output,
        )
        try:
            while child.poll() is None:
                time.sleep(0.2)
                if any(event.is_set() for event in stop):
                    return False
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        if child.returncode != 0:
            output.seek(max(0, output.seek(0, os.SEEK_END) - 2000))
            err = output.read().decode(errors="replace")
            log.warning("the HNSW build of %s failed (%s): %s", folder, child.returncode, err)
            return False
    return True


def build_in_place(folder: Path, plan: HnswPlan, dimension: int) -> None:
    """Open the shard at ``folder`` with ``plan``'s HNSW settings (written into its config) and
    optimise it until every segment is in a graph; then close it."""
    import qdrant_edge as qe

    config = qe.EdgeConfig(
        vectors=qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine),
        hnsw_config=plan.hnsw_config(qe, dimension),
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1),
    )
    shard = qe.EdgeShard.load(str(folder), config)
    try:
        shard.optimize()
        shard.flush()
    finally:
        shard.close()


def copy_for_build(folder: Path) -> Path:
    """``folder`` copied (sparse) to ``<folder>.next``, room checked first."""
    from trilha.testing.copying import copy_workspace

    target = _beside(folder, NEXT)
    if target.exists():
        shutil.rmtree(target)
    ensure_room(folder.parent, 2 * folder_bytes(folder))  # the copy, then its graphs
    return copy_workspace(folder, target)


class UnfinishedSwap(FileExistsError):
    """An ``.old`` shard is there already: nothing was moved."""


def swap_in(folder: Path) -> None:
    """Put the built ``<folder>.next`` in ``folder``'s place, the old shard at ``.old``; an
    ``.old`` already there (a swap whose replay is not done) is refused, not deleted."""
    old = _beside(folder, OLD)
    if old.exists():
        raise UnfinishedSwap(f"{old} is a shard whose swap did not complete; reopen the index")
    folder.rename(old)
    _beside(folder, NEXT).rename(folder)


def drop_old(folder: Path) -> None:
    """Remove the shard a swap replaced, once the built one holds every write: renamed to
    ``.trash`` (the swap's commit point, atomic), then deleted."""
    trash = _beside(folder, TRASH)
    if trash.exists():
        shutil.rmtree(trash)
    _beside(folder, OLD).rename(trash)
    shutil.rmtree(trash, ignore_errors=True)


def drop_copy(folder: Path) -> None:
    """Remove a build's copy that was not swapped in."""
    shutil.rmtree(_beside(folder, NEXT), ignore_errors=True)


def main(argv: list[str]) -> int:
    """Child entry point: ``FOLDER DIMENSION PLAN_JSON [PARENT_PID]``."""
    folder, dimension, plan = Path(argv[0]), int(argv[1]), HnswPlan(**json.loads(argv[2]))
    if len(argv) > 3:
        _die_with_parent(int(argv[3]))
    start = time.perf_counter()
    build_in_place(folder, plan, dimension)
    print(f"built {folder} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover - the child process
    sys.exit(main(sys.argv[1:]))
