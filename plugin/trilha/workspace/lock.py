"""One process at a time per workspace: an advisory lock on ``<workspace>/.lock``.

The embedded Qdrant shard, the SQLite unit store and the embedded graph server are not safe to
share between processes, so :meth:`WorkspaceLock.acquire` takes an exclusive ``flock`` for as long
as the workspace is open and refuses a second taker with one line that says who holds it and what
to do. The kernel drops the lock when the holder dies, even by ``kill -9``, so a crash never
leaves a workspace locked.

The lock is held per process, not per handle: acquiring a folder this process holds already
returns the same lock with one more holder (and the parts opened under it,
:mod:`trilha.workspace.opening`); the file lock goes when the last holder releases it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import IO, Any

from trilha.errors import WorkspaceError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, nothing is enforced
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".lock"

#: The locks this process holds, by resolved workspace folder.
_HELD: dict[Path, WorkspaceLock] = {}
_GUARD = threading.Lock()


class WorkspaceLock:
    """An exclusive lock on a workspace folder, held by this process until its last
    :meth:`release`."""

    def __init__(self, path: Path, handle: IO[str] | None) -> None:
        self.path = path
        self._handle = handle
        #: How many open handles of this process share the lock.
        self.holders = 1
        #: The parts opened under the lock, and the settings they were opened with (shared by
        #: every handle; set by :func:`trilha.workspace.opening.open_parts`).
        self.parts: Any = None
        self.settings: Any = None

    @classmethod
    def acquire(cls, root: Path) -> WorkspaceLock:
        """Lock ``root`` (one more holder when this process holds it already);
        :class:`WorkspaceError` when another process holds it."""
        key = root.resolve()
        with _GUARD:
            held = _HELD.get(key)
            if held is not None:
                held.holders += 1
                return held
            lock = _HELD[key] = cls(root / LOCK_NAME, _take(root))
            return lock

    @property
    def last(self) -> bool:
        """Whether one holder is left (its release drops the lock)."""
        return self.holders == 1

    def release(self) -> None:
        """One holder fewer; the last one drops the lock (idempotent once dropped)."""
        with _GUARD:
            if self.holders == 0:
                return
            self.holders -= 1
            if self.holders:
                return
            _HELD.pop(self.path.parent.resolve(), None)
            self.parts = self.settings = None
            if self._handle is not None:
                self._handle.close()
                self._handle = None


def _take(root: Path) -> IO[str]:
    """An open ``root/.lock`` holding the exclusive ``flock``, our pid written in it."""
    path = root / LOCK_NAME
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
    if fcntl is None:
        return handle
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise WorkspaceError(
            f"workspace {root} is in use by another trilha process (pid {holder}); wait for "
            "it to finish or stop it, or use another --workspace"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle
