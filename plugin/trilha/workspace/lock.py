"""One process at a time per workspace: an advisory lock on ``<workspace>/.lock``.

The embedded Qdrant shard, the SQLite unit store and the embedded graph server are not safe to
share between processes, so :meth:`WorkspaceLock.acquire` takes an exclusive ``flock`` for as long
as the workspace is open and refuses a second taker with one line that says who holds it and what
to do. The kernel drops the lock when the holder dies, even by ``kill -9``, so a crash never
leaves a workspace locked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from trilha.errors import WorkspaceError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, nothing is enforced
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".lock"


class WorkspaceLock:
    """An exclusive lock on a workspace folder, held until :meth:`release`."""

    def __init__(self, path: Path, handle: IO[str] | None) -> None:
        self.path = path
        self._handle = handle

    @classmethod
    def acquire(cls, root: Path) -> WorkspaceLock:
        """Lock ``root``; :class:`WorkspaceError` when another process holds it."""
        path = root / LOCK_NAME
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        if fcntl is None:
            return cls(path, handle)
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
        return cls(path, handle)

    def release(self) -> None:
        """Drop the lock (idempotent)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
