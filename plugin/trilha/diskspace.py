"""Room on the disk: checked before the big writes, and a full disk said in one line.

A full disk must not end an ingest with SIGBUS and no message: qdrant-edge writes its segment
files through memory maps (sparse files filled page by page, and zero-filled flag files), and a
page the disk cannot back kills the process. So :func:`ensure_room` compares the free bytes of
the disk holding a folder with an estimate before such writes, and :func:`disk_full_errors`
turns a full disk met anyway (ENOSPC, EDQUOT, SQLite's "database or disk is full") into a
:class:`~trilha.errors.DiskFullError`: one line naming the disk and the bytes needed.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from trilha.errors import DiskFullError

#: Bytes one unit takes in a workspace: unit store, dense index with its write-ahead log,
#: lexical index and graph (about 9 KB measured on 1,600 units), doubled.
UNIT_BYTES = 16 * 1024
#: Bytes a new workspace takes before its first unit (qdrant-edge's segment files: 36 MB on
#: tmpfs), with some room.
NEW_WORKSPACE_BYTES = 48 * 1024 * 1024
#: Kept free under every estimate (the lexical index, metadata, the write-ahead log's next part).
SLACK_BYTES = 8 * 1024 * 1024

_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_FULL_TEXTS = ("no space left on device", "disk quota exceeded", "database or disk is full")


def existing(path: Path) -> Path:
    """``path``, or its nearest ancestor that exists."""
    path = Path(path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def mount_of(path: Path) -> Path:
    """The mount point of the disk that holds (or would hold) ``path``."""
    here = existing(path)
    while not os.path.ismount(here) and here != here.parent:
        here = here.parent
    return here


def free_bytes(path: Path) -> int:
    """Bytes free on the disk that holds (or would hold) ``path``."""
    return shutil.disk_usage(existing(path)).free


def full_error(path: Path, needed: int | None) -> DiskFullError:
    """The one line for a disk too full to write ``needed`` bytes (None: unknown) at ``path``."""
    free = free_bytes(path)
    want = f"about {needed:,} bytes needed" if needed else "more needed"
    return DiskFullError(
        f"the disk at {mount_of(path)} is full for {path}: {free:,} bytes free, {want}; "
        "free some space there or use a folder on another disk"
    )


def ensure_room(path: Path, needed: int) -> None:
    """Raise :class:`DiskFullError` unless the disk holding ``path`` has ``needed`` bytes free
    beside :data:`SLACK_BYTES`."""
    if free_bytes(path) < needed + SLACK_BYTES:
        raise full_error(path, needed + SLACK_BYTES)


def is_disk_full(error: BaseException) -> bool:
    """Whether ``error``, or one it was raised from, says the disk is full."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _FULL_ERRNOS:
            return True
        if any(text in str(current).lower() for text in _FULL_TEXTS):
            return True
        current = current.__cause__ or current.__context__
    return False


@contextmanager
def disk_full_errors(path: Path, needed: int | None = None) -> Iterator[None]:
    """Turn a full disk met inside the block into :class:`DiskFullError` about the disk of
    ``path``, or of the file the error names (a copy names its source, then its target: the
    target's disk is the full one, and the source's size is what was needed)."""
    try:
        yield
    except DiskFullError:
        raise
    except Exception as e:
        if not is_disk_full(e):
            raise
        source, target = getattr(e, "filename", None), getattr(e, "filename2", None)
        if isinstance(target, str) and isinstance(source, str) and os.path.isfile(source):
            path, needed = Path(target), needed or os.path.getsize(source)
        elif isinstance(source, str):
            path = Path(source)
        raise full_error(path, needed) from e
