"""Values read from the graph, kept while the graph is unchanged: keyed by the graph's
generation (:attr:`GraphService.generation <trilha.graph.service.GraphService.generation>`,
bumped by every write made through the service), so a write makes every earlier value
unreachable at once; a TTL bounds how long a value lives anyway (writes another process makes to
a shared server are not counted).

A key must name everything the value depends on besides the graph: the statement and every
parameter, the caller's visibility parameters included, so that one principal's value is never
served to another (:func:`memo_key`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from trilha.graph.read.cache import TTLCache

V = TypeVar("V")


def memo_key(*parts: str, params: Mapping[str, Any] | None = None) -> str:
    """A key of ``parts`` and ``params`` (sorted, as JSON: equal mappings, equal keys)."""
    body = json.dumps(dict(params or {}), sort_keys=True, default=str)
    return json.dumps([*parts, body])


class GraphMemo(Generic[V]):
    """``compute()``'s value per key and graph generation, for at most ``ttl_s`` seconds."""

    def __init__(
        self,
        generation: Callable[[], int],
        *,
        ttl_s: float = 60.0,
        max_size: int = 64,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.generation = generation
        self._cache: TTLCache[V] = TTLCache(ttl_s, max_size, clock)

    def get(self, key: str, compute: Callable[[], V]) -> V:
        """The value of ``key`` at the graph's current generation, computed when missing (it
        is kept only if no write happened while it was computed)."""
        before = self.generation()
        full = f"{before}:{key}"
        value = self._cache.get(full)
        if value is None:
            value = compute()
            if self.generation() == before:
                self._cache.put(full, value)
        return value
