"""The files that tie an embedded FalkorDB server to its data folder.

In the data folder:

* ``falkordb.owner.lock``: an ``flock`` held by the process that owns the server (the one that
  stops it). Free while a server runs means its owner is gone: the server is an orphan.
* ``falkordb.server.lock``: an ``flock`` taken before the server starts and inherited by it, so
  it is held exactly while a server process lives on the folder: at most one server per folder.
* ``falkordb.watchdog.lock``: held by the server's watchdog while it lives. A server with no
  owner and no watchdog is an orphan to adopt; one whose watchdog lives is being stopped.
* ``falkordb.pid``: the running server's pid and socket (JSON), removed when it stops.
* ``falkordb.sock``: a symbolic link to the socket (for ``redis-cli -s``), removed with it.

The lock files stay (empty): removing a lock file races with the next process that takes it.
The socket lives in a short private folder, ``$XDG_RUNTIME_DIR/trilha`` or ``/tmp/trilha-<uid>``,
named by a hash of the data folder's resolved path: unix socket paths are limited to 107 bytes
and workspace paths are not.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from trilha.errors import BackendUnavailableError

OWNER_LOCK = "falkordb.owner.lock"
SERVER_LOCK = "falkordb.server.lock"
WATCHDOG_LOCK = "falkordb.watchdog.lock"
RECORD = "falkordb.pid"
POINTER = "falkordb.sock"
_MAX_RUNTIME_DIR = 60  # leaves room for "/trilha/<16 hex>.sock" under 107 bytes


@dataclass(frozen=True)
class ServerRecord:
    """What ``falkordb.pid`` says about the server running on a folder."""

    pid: int
    socket: str


def socket_dir() -> Path:
    """The private folder for sockets: ``$XDG_RUNTIME_DIR/trilha`` or ``/tmp/trilha-<uid>``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and len(runtime) <= _MAX_RUNTIME_DIR and os.path.isdir(runtime):
        folder = Path(runtime) / "trilha"
    else:
        folder = Path(f"/tmp/trilha-{os.getuid()}")
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise BackendUnavailableError(
            f"{folder} is not a private folder of this user; remove it and retry"
        )
    return folder


def socket_path(data_dir: Path) -> str:
    """The socket of the server for ``data_dir`` (a resolved path): short whatever its length."""
    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:16]
    return str(socket_dir() / f"{digest}.sock")


def ping(path: str, timeout_s: float = 0.2) -> bool:
    """True when something answers a redis PING on the unix socket ``path``."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout_s)
            s.connect(path)
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def try_lock(path: Path, timeout_s: float = 0.0) -> int | None:
    """An open descriptor holding an exclusive ``flock`` on ``path``, taken within ``timeout_s``
    seconds; None if another open file holds it until then."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
        time.sleep(0.02)


def is_locked(path: Path) -> bool:
    """True while an open file (of this process or another) holds the lock ``path``."""
    fd = try_lock(path)
    if fd is not None:
        os.close(fd)
    return fd is None


def wait_unlocked(path: Path, timeout_s: float) -> bool:
    """Wait until nobody holds the lock ``path``; False if it is still held after ``timeout_s``."""
    fd = try_lock(path, timeout_s)
    if fd is not None:
        os.close(fd)
    return fd is not None


def read_record(data_dir: Path) -> ServerRecord | None:
    """The server record of ``data_dir``, if there is a readable one."""
    try:
        raw = json.loads((data_dir / RECORD).read_text())
        return ServerRecord(int(raw["pid"]), str(raw["socket"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_record(data_dir: Path, record: ServerRecord) -> None:
    """Write the record and the socket pointer, each replaced atomically."""
    tmp = data_dir / f".{RECORD}.tmp"
    tmp.write_text(json.dumps({"pid": record.pid, "socket": record.socket}))
    os.replace(tmp, data_dir / RECORD)
    link = data_dir / f".{POINTER}.tmp"
    link.unlink(missing_ok=True)
    link.symlink_to(record.socket)
    os.replace(link, data_dir / POINTER)


def clear_record(data_dir: Path, socket_file: str) -> None:
    """Remove the record, the pointer and the socket file of a server that has stopped."""
    for path in (data_dir / RECORD, data_dir / POINTER, Path(socket_file)):
        path.unlink(missing_ok=True)
