"""Bolt backend: Neo4j 5, ArcadeDB or any Bolt server, through the official ``neo4j`` driver.

Reads run in read transactions (a server that enforces access modes rejects writes there);
writes run as auto-commit queries, so one ``UNWIND`` batch is one transaction.
"""

from __future__ import annotations

import logging
from typing import Any, cast

from trilha.errors import BackendUnavailableError, requires_extra
from trilha.graph.stores.base import Params, Row, check_params, plain
from trilha.graph.stores.dialect import CYPHER, Dialect

logger = logging.getLogger(__name__)


class BoltGraphStore:
    """A :class:`~trilha.graph.stores.base.GraphStore` over a Bolt server.

    ``timeout_s`` bounds connecting; ``max_retry_s`` bounds the driver's retries of transient
    failures in read transactions (0 fails at once).
    """

    def __init__(
        self,
        url: str,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        *,
        timeout_s: float = 30.0,
        max_retry_s: float = 5.0,
        dialect: Dialect = CYPHER,
    ) -> None:
        with requires_extra("graph", "the Bolt graph backend"):
            import neo4j
        self._neo4j = neo4j
        auth = (user, password or "") if user else None
        self._driver = neo4j.GraphDatabase.driver(
            url,
            auth=auth,
            connection_timeout=timeout_s,
            connection_acquisition_timeout=timeout_s,
            max_transaction_retry_time=max_retry_s,
        )
        self._database = database
        self._dialect = dialect
        self._closed = False

    @property
    def name(self) -> str:
        """Backend name."""
        return "bolt"

    @property
    def dialect(self) -> Dialect:
        """Neo4j 5 Cypher (ArcadeDB speaks it too)."""
        return self._dialect

    def server_agent(self) -> str:
        """The server's agent string, e.g. ``'Neo4j/5.26.0 compatible (ArcadeDB 26.10.2)'``."""
        try:
            return str(self._driver.get_server_info().agent)
        except Exception as e:
            raise BackendUnavailableError(f"Bolt server unreachable: {e}") from e

    def run(
        self, cypher: str, params: Params | None = None, *, timeout_s: float | None = None
    ) -> list[Row]:
        """Run a read query in a read transaction (``timeout_s`` is the transaction timeout)."""
        values = check_params(params)
        text = cypher

        @self._neo4j.unit_of_work(timeout=timeout_s)
        def work(tx: Any) -> list[Row]:
            return [plain(record.data()) for record in tx.run(text, values)]

        return cast(list[Row], self._call(lambda s: s.execute_read(work)))

    def write(self, cypher: str, params: Params | None = None) -> list[Row]:
        """Run a write query as one auto-commit transaction."""
        values = check_params(params)
        text = cypher
        return cast(list[Row], self._call(lambda s: [plain(r.data()) for r in s.run(text, values)]))

    def _call(self, fn: Any) -> Any:
        if self._closed:
            raise BackendUnavailableError("the Bolt store is closed")
        try:
            with self._driver.session(database=self._database) as session:
                return fn(session)
        except (self._neo4j.exceptions.Neo4jError, self._neo4j.exceptions.DriverError) as e:
            raise BackendUnavailableError(f"Bolt query failed: {e}") from e
        except OSError as e:
            raise BackendUnavailableError(f"Bolt server unreachable: {e}") from e

    def close(self) -> None:
        """Close the driver. Idempotent."""
        if not self._closed:
            self._closed = True
            self._driver.close()
