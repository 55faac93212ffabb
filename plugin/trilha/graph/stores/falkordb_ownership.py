"""What the owner of an embedded FalkorDB server holds, and how it lets go of it.

The owner holds the folder's owner lock, the server (its child, or an adopted orphan) and a
watchdog process whose stdin is a pipe only the owner writes to. :func:`release` compacts the
append-only file, closes that pipe (the watchdog then stops the server: SIGTERM, redis saves and
exits; SIGKILL after the grace period), waits until the server is gone, removes the record,
pointer and socket, and releases the owner lock. If the owner dies instead, the kernel closes the
pipe and the watchdog stops the server all the same. :func:`bury` reaps a server that died on
its own and its watchdog, keeping the owner lock for the server started in its place.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from trilha.errors import BackendUnavailableError
from trilha.graph.stores.falkordb_folder import (
    SERVER_LOCK,
    WATCHDOG_LOCK,
    clear_record,
    is_locked,
    try_lock,
    wait_unlocked,
)
from trilha.graph.stores.process import terminate

logger = logging.getLogger(__name__)

_WATCHDOG = Path(__file__).with_name("_falkordb_watchdog.py")


def detached(args: list[str], stdin: int, fd: int) -> subprocess.Popen[bytes]:
    """Start ``args`` in its own session (a terminal's Ctrl-C or a kill of this process group
    does not reach it), output discarded, inheriting the open descriptor ``fd``."""
    return subprocess.Popen(
        args,
        stdin=stdin,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(fd,),
        start_new_session=True,
    )


def unsaved_changes(sock: str) -> int | None:
    """The writes the server on ``sock`` counted since its last snapshot (None: no answer).
    Reads leave it; a start counts the writes it replays from the append-only file."""
    try:
        import redis

        client = redis.Redis(unix_socket_path=sock, socket_timeout=10)
        try:
            return int(client.info("persistence")["rdb_changes_since_last_save"])
        finally:
            client.close()
    except Exception:  # best effort: without it the server saves on stop as before
        return None


def prepare_stop(own: Ownership, min_growth: int = 1 << 20, timeout_s: float = 120.0) -> None:
    """Before the owner stops the server: rewrite the append-only file into an RDB base when it
    grew by ``min_growth`` bytes, and drop the final snapshot when nothing was written since the
    owner took the server.

    Redis replays the AOF's incremental part query by query when it starts; after a rewrite it
    loads the compact base instead, so a graph reopens in milliseconds, not minutes. A server
    stopped by SIGTERM also saves ``graph.rdb`` whole, which takes longer the larger the graph;
    when the count of unsaved writes is the one it had when the owner took it, the process only
    read, so the save is skipped (the append-only file, which a start loads, holds every write
    either way).
    """
    try:
        import redis

        client = redis.Redis(unix_socket_path=own.socket, socket_timeout=10)
        info = client.info("persistence")
        if int(info.get("aof_current_size", 0)) - int(info.get("aof_base_size", 0)) >= min_growth:
            client.bgrewriteaof()
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                info = client.info("persistence")
                if not info.get("aof_rewrite_in_progress") and not info.get(
                    "aof_rewrite_scheduled"
                ):
                    break
                time.sleep(0.02)
        if own.changes_at_start == info.get("rdb_changes_since_last_save"):
            client.config_set("save", "")  # no save points: SIGTERM then writes no snapshot
        client.close()
    except Exception as e:  # best effort: the AOF itself is intact either way
        logger.warning("could not prepare the FalkorDB server's stop: %s", e)


def watch(data_dir: Path, pid: int, grace_s: float) -> subprocess.Popen[bytes]:
    """Start the watchdog that stops ``pid`` when this process closes its stdin or dies.

    The watchdog inherits the folder's watchdog lock and holds it while it lives.
    """
    lock = try_lock(data_dir / WATCHDOG_LOCK, timeout_s=5.0)  # a watchdog may still be exiting
    if lock is None:
        raise BackendUnavailableError(
            f"the FalkorDB watchdog lock of {data_dir} stays held; stop the process holding it"
        )
    try:
        args = [sys.executable, "-I", "-S", str(_WATCHDOG), str(pid), str(grace_s)]
        return detached(args, subprocess.PIPE, lock)
    finally:
        os.close(lock)


@dataclass
class Ownership:
    """What the owner of a server holds until :func:`release` stops the server."""

    data_dir: Path
    socket: str
    pid: int
    owner_fd: int
    watchdog: subprocess.Popen[bytes]
    child: subprocess.Popen[bytes] | None  # None for an adopted server
    grace_s: float
    creator: int = field(default_factory=os.getpid)
    #: Set once the owner lets go of the server (:func:`release`): its end is no death.
    released: bool = False
    #: :func:`unsaved_changes` when the owner took the running server (None: unknown).
    changes_at_start: int | None = None

    def alive(self) -> bool:
        """True while the server runs (an adopted one holds the server lock while it lives)."""
        if self.child is not None:
            return self.child.poll() is None
        return is_locked(self.data_dir / SERVER_LOCK)

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the server if it still runs."""
        if self.child is not None:
            self.child.send_signal(sig)
        elif self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def wait(self, timeout_s: float) -> bool:
        """Wait until the server is gone; False if it still runs after ``timeout_s``."""
        if self.child is None:
            return wait_unlocked(self.data_dir / SERVER_LOCK, timeout_s)
        try:
            self.child.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True


def release(own: Ownership, *, kill: bool = False) -> None:
    """Compact the AOF, stop the server (SIGTERM: it saves, unless :func:`prepare_stop` found
    nothing to save; SIGKILL after the grace period),
    remove the record, pointer and socket, and release the owner lock.

    ``kill=True`` is for a server that stopped answering: SIGKILL at once, no compaction and no
    final save (the append-only file holds every write it acknowledged, up to its last fsync).
    """
    if os.getpid() != own.creator:
        return  # a forked child inherited this object: the server is its parent's
    own.released = True
    try:
        if kill:
            own.signal(signal.SIGKILL)
            own.wait(5)
        elif own.alive():
            prepare_stop(own)
        if own.watchdog.poll() is None and own.watchdog.stdin is not None:
            own.watchdog.stdin.close()  # end of file: the watchdog sends SIGTERM
        else:
            own.signal(signal.SIGTERM)
        if not own.wait(own.grace_s + 5):
            own.signal(signal.SIGKILL)
            own.wait(5)
        try:
            own.watchdog.wait(timeout=5)
        except subprocess.TimeoutExpired:
            terminate(own.watchdog, 1)
        clear_record(own.data_dir, own.socket)
    finally:
        os.close(own.owner_fd)


def bury(own: Ownership, grace_s: float = 1.0) -> None:
    """Reap a server that died on its own and its watchdog, so neither stays a zombie; the
    owner lock stays held. The watchdog exits by itself once the server is gone (closing its
    pipe tells one that has not noticed yet); one that does not within ``grace_s`` is killed."""
    if own.child is not None:
        own.child.wait(timeout=5)
    if own.watchdog.stdin is not None:
        with contextlib.suppress(OSError):
            own.watchdog.stdin.close()
    try:
        own.watchdog.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        own.watchdog.kill()  # a stopped watchdog (SIGSTOP) ends only this way
        own.watchdog.wait(timeout=5)
