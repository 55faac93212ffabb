"""The cached, logged call every graph read of the service goes through, and values read from the
graph kept while the graph is unchanged (:class:`GraphMemo`); both keep them in the result
cache's :class:`~trilha.retrieve.cache.TTLCache`.

A :class:`GraphMemo` is keyed by the graph's generation (:attr:`GraphService.generation
<trilha.graph.service.GraphService.generation>`, bumped by every write made through the
service), so a write makes every earlier value unreachable at once; a TTL bounds how long a value
lives anyway (writes another process makes to a shared server are not counted). A key must name
everything the value depends on besides the graph: the statement and every parameter, the
caller's visibility parameters included, so that one principal's value is never served to
another (:func:`memo_key`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel

from trilha.access import Principal
from trilha.access.compiled import POLICIES
from trilha.graph.log import RetrievalLog
from trilha.retrieve.cache import TTLCache

V = TypeVar("V")
R = TypeVar("R", bound=BaseModel)


class CachedReads:
    """Graph reads cached by operation, arguments and the principal's
    :func:`~trilha.access.scope_key` (never its attributes), each logged when there is a log."""

    def __init__(self, cache: TTLCache[BaseModel], log: RetrievalLog | None = None) -> None:
        self.cache = cache
        self.log = log

    def call(
        self,
        op: str,
        args: dict[str, Any],
        principal: Principal | None,
        run: Callable[[], R],
        count: Callable[[R], int],
    ) -> R:
        """``run()`` once per (``op``, ``args``, the principal's scope key) while cached; a copy of
        the result either way; logged with ``count(result)``."""
        scope = POLICIES.get(principal or Principal.anonymous()).scope_key
        key = json.dumps(
            {"op": op, **args, "scope": scope}, sort_keys=True, ensure_ascii=False, default=str
        )
        start = time.perf_counter()
        cached = self.cache.get(key)
        if cached is not None:
            result = cast(R, cached.model_copy(deep=True))
        else:
            result = run()
            self.cache.put(key, result.model_copy(deep=True))
        if self.log is not None:
            query = json.loads(key)
            self.log.append(
                query, count(result), (time.perf_counter() - start) * 1000, cached is not None
            )
        return result

    def clear(self) -> None:
        """Forget every cached result (a write happened)."""
        self.cache.clear()


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
