"""The graph store contract every backend implements, and the helpers built only on it.

A :class:`GraphStore` runs parametrised Cypher. Backends: embedded or remote FalkorDB
(:mod:`trilha.graph.stores.falkordb`), any Bolt server such as Neo4j or ArcadeDB
(:mod:`trilha.graph.stores.bolt`), and any LlamaIndex ``PropertyGraphStore``
(:mod:`trilha.graph.stores.llamaindex`). Results are lists of plain dicts (str, numbers, bools,
None, lists and dicts): queries project graph objects to maps themselves, so no driver type
leaks out.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from trilha.errors import BackendUnavailableError, BadRequestError
from trilha.graph.stores.dialect import Dialect, index_statement

logger = logging.getLogger(__name__)

Params = Mapping[str, Any]
Row = dict[str, Any]

#: The properties trilha indexes: every label's ``id`` plus the Chunk's ``doc_id``.
INDEXED: tuple[tuple[str, str], ...] = (
    ("Doc", "id"),
    ("Chunk", "id"),
    ("Chunk", "doc_id"),
    ("Entity", "id"),
    ("Category", "id"),
    ("Tag", "id"),
    ("Criterio", "id"),
    ("Fato", "id"),
    ("Prova", "id"),
    ("Task", "id"),
    ("Project", "id"),
    ("User", "id"),
    ("Org", "id"),
)


@runtime_checkable
class GraphStore(Protocol):
    """Something that runs parametrised Cypher against one graph."""

    @property
    def name(self) -> str:
        """Backend name for logs and reports ('falkordb', 'bolt', ...)."""
        ...

    @property
    def dialect(self) -> Dialect:
        """How this backend spells the non-portable statements."""
        ...

    def run(
        self, cypher: str, params: Params | None = None, *, timeout_s: float | None = None
    ) -> list[Row]:
        """Run a read query; one dict per row. Raises :class:`BackendUnavailableError`."""
        ...

    def write(self, cypher: str, params: Params | None = None) -> list[Row]:
        """Run a write query; rows it returns, if any. Raises :class:`BackendUnavailableError`."""
        ...

    def close(self) -> None:
        """Release connections (and stop an embedded server). Idempotent."""
        ...


def check_params(params: Params | None) -> dict[str, Any]:
    """A plain-dict copy of ``params``; rejects NUL characters and non-finite floats.

    Neither can be stored by every backend (FalkorDB truncates its parameter header at NUL).
    """
    out = dict(params or {})
    for key, value in out.items():
        _check_value(key, value)
    return out


def _check_value(key: str, value: Any) -> None:
    if isinstance(value, str) and "\x00" in value:
        raise BadRequestError(f"parameter {key!r} contains a NUL character")
    if isinstance(value, float) and not math.isfinite(value):
        raise BadRequestError(f"parameter {key!r} is not a finite number: {value!r}")
    if isinstance(value, Mapping):
        for k, v in value.items():
            _check_value(f"{key}.{k}", v)
    elif isinstance(value, list | tuple):
        for v in value:
            _check_value(key, v)


def plain(value: Any) -> Any:
    """Driver values to plain Python: ordered dicts to dicts, tuples to lists, recursively."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def batched(rows: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """Consecutive slices of at most ``size`` rows."""
    for start in range(0, len(rows), max(1, size)):
        yield rows[start : start + size]


def write_rows(
    store: GraphStore,
    cypher: str,
    rows: Sequence[Any],
    *,
    batch_size: int = 2000,
    extra: Params | None = None,
) -> int:
    """Run ``cypher`` (which must ``UNWIND $rows``) once per batch; returns the rows sent."""
    for chunk in batched(rows, batch_size):
        store.write(cypher, {**(extra or {}), "rows": list(chunk)})
    return len(rows)


def ensure_indexes(store: GraphStore, indexed: Iterable[tuple[str, str]] = INDEXED) -> None:
    """Create the range indexes trilha's lookups use; existing ones are left alone."""
    for label, prop in indexed:
        try:
            store.write(index_statement(store.dialect, label, prop))
        except BackendUnavailableError as e:
            text = str(e).lower()
            if not any(marker in text for marker in store.dialect.index_exists_markers):
                raise
            logger.debug("index on %s.%s already exists", label, prop)


def write_returning(
    store: GraphStore, cypher: str, rows: Sequence[Any], batch_size: int = 2000
) -> set[str]:
    """Run a batched write whose rows return ``id`` (``UNWIND $rows``); the ids returned."""
    ids: set[str] = set()
    for chunk in batched(rows, batch_size):
        ids.update(r["id"] for r in store.write(cypher, {"rows": list(chunk)}))
    return ids
