"""Adapter: any LlamaIndex ``PropertyGraphStore`` with ``structured_query`` as a GraphStore.

``Neo4jPropertyGraphStore`` and ``FalkorDBPropertyGraphStore`` both implement
``structured_query(query, param_map)``; this lets trilha's queries run through a store the user
already configured. Create the Neo4j one with ``refresh_schema=False`` (no APOC needed).
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from trilha.errors import BackendUnavailableError
from trilha.graph.stores.base import Params, Row, check_params, plain
from trilha.graph.stores.dialect import CYPHER, FALKORDB, Dialect

logger = logging.getLogger(__name__)


class StructuredQueryStore(Protocol):
    """The part of LlamaIndex's ``PropertyGraphStore`` this adapter uses."""

    def structured_query(self, query: str, param_map: dict[str, Any] | None = None) -> Any:
        """Run Cypher with parameters."""
        ...


def guess_dialect(store: object) -> Dialect:
    """FalkorDB's dialect for a store whose class name says FalkorDB, else Neo4j 5 Cypher."""
    return FALKORDB if "falkor" in type(store).__name__.lower() else CYPHER


class LlamaIndexGraphStore:
    """A :class:`~trilha.graph.stores.base.GraphStore` over a LlamaIndex property graph store."""

    def __init__(self, pg_store: StructuredQueryStore, dialect: Dialect | None = None) -> None:
        self._store = pg_store
        self._dialect = dialect or guess_dialect(pg_store)
        self._closed = False

    @property
    def name(self) -> str:
        """``'llamaindex:<StoreClass>'``."""
        return f"llamaindex:{type(self._store).__name__}"

    @property
    def dialect(self) -> Dialect:
        """The wrapped backend's dialect."""
        return self._dialect

    def run(
        self, cypher: str, params: Params | None = None, *, timeout_s: float | None = None
    ) -> list[Row]:
        """Run a query through ``structured_query`` (timeouts are the wrapped store's own)."""
        if self._closed:
            raise BackendUnavailableError(f"{self.name} is closed")
        try:
            result = self._store.structured_query(cypher, param_map=check_params(params))
        except BackendUnavailableError:
            raise
        except Exception as e:  # the wrapped stores raise their drivers' errors
            raise BackendUnavailableError(f"{self.name} query failed: {e}") from e
        return _rows(result, self.name)

    def write(self, cypher: str, params: Params | None = None) -> list[Row]:
        """Run a write query through ``structured_query``."""
        return self.run(cypher, params)

    def close(self) -> None:
        """Close the wrapped store when it has a ``close()``. Idempotent."""
        if self._closed:
            return
        self._closed = True
        close = getattr(self._store, "close", None)
        if callable(close):
            close()


def _rows(result: Any, name: str) -> list[Row]:
    if result is None:
        return []
    if isinstance(result, list) and all(isinstance(r, dict) for r in result):
        return [plain(r) for r in result]
    raise BackendUnavailableError(
        f"{name}.structured_query returned {type(result).__name__}, expected a list of dicts"
    )
