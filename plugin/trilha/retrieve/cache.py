"""Stage 1, the result cache (seed 002, F9): a search asked again within the TTL is answered from
memory, or from Redis shared by several processes (``TRILHA_REDIS_URL``).

The key hashes everything a result depends on: the query (Unicode NFC, whitespace collapsed),
every resolved search parameter (filters, strategy, weights, sides, graph boost, ``top_k``...),
rerank and how many it keeps, the caller's whole principal (user, organisations, projects, roles,
level, clearance: the visibility scope), the workspace, its encoder and its index generation —
an ingest, a deletion or a graph write moves the generation, so no result outlives the data it
came from. Two callers share an entry only when every one of those is equal.

A Redis that is down or slow degrades to no cache, with the warning in the result's trace.
In-process entries live in a :class:`TTLCache` (least recently used evicted first), the one TTL
cache of the package: the graph reads keep theirs in it too (:mod:`trilha.graph.read.cache`).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar

from trilha.errors import requires_extra
from trilha.types import SearchResult, StageTrace

if TYPE_CHECKING:
    from trilha.retrieve.plan import SearchPlan

V = TypeVar("V")
#: Prefix of every key this cache writes (in Redis, too).
PREFIX = "trilha:result:"
#: Seconds a Redis call may take before the cache is skipped for that search.
REDIS_TIMEOUT_S = 0.25


class CacheUnavailable(Exception):
    """The cache could not be read or written (the search goes on without it)."""


class ResultStore(Protocol):
    """Where cached results live: serialised results by key, each kept for the store's TTL."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, value: str) -> None: ...


def normalise_query(text: str) -> str:
    """The query as the key sees it: NFC, runs of whitespace as one space, no outer spaces."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def cache_key(plan: SearchPlan, scope: dict[str, Any]) -> str:
    """The key of one planned search; ``scope`` holds the workspace, encoder, generations and
    reranker."""
    body = {
        "query": normalise_query(plan.query),
        "params": plan.model_dump(mode="json", exclude=_HOW | {"query", "principal"}),
        "principal": plan.principal.model_dump(mode="json"),
        "how": [plan.rerank, plan.keep, plan.expand],
        "scope": scope,
    }
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
    return PREFIX + digest


#: Fields of a plan the key lists under ``how``: rerank, how many it keeps, expansion.
_HOW = {"rerank", "keep", "expand"}


class TTLCache(Generic[V]):
    """At most ``max_size`` entries, each valid for ``ttl_s`` seconds of ``clock``."""

    def __init__(
        self, ttl_s: float = 60.0, max_size: int = 256, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl_s, self.max_size, self._clock = ttl_s, max_size, clock
        self._data: OrderedDict[str, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        """The cached value, or None when absent or expired."""
        with self._lock:
            hit = self._data.get(key)
            if hit is None:
                return None
            if self._clock() - hit[0] > self.ttl_s:
                del self._data[key]
                return None
            self._data.move_to_end(key)
            return hit[1]

    def put(self, key: str, value: V) -> None:
        """Store ``value``; evicts the least recently used entry when full."""
        if self.ttl_s <= 0 or self.max_size <= 0:
            return
        with self._lock:
            self._data[key] = (self._clock(), value)
            self._data.move_to_end(key)
            while len(self._data) > self.max_size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        """Forget everything (after a write)."""
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


class MemoryStore:
    """In-process entries, each kept ``ttl_s``; the least recently used go first past
    ``max_entries`` (a :class:`TTLCache`)."""

    def __init__(
        self,
        ttl_s: float = 180.0,
        max_entries: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._entries: TTLCache[str] = TTLCache(ttl_s, max_entries, clock)

    def get(self, key: str) -> str | None:
        return self._entries.get(key)

    def put(self, key: str, value: str) -> None:
        self._entries.put(key, value)


class RedisStore:
    """Entries in a Redis server, each kept ``ttl_s`` (``SET … PX``: Redis expires them)."""

    def __init__(self, url: str, ttl_s: float = 180.0, timeout_s: float = REDIS_TIMEOUT_S) -> None:
        with requires_extra("redis", "the shared result cache (TRILHA_REDIS_URL)"):
            import redis

        self.url = url
        self._ttl_ms = max(1, int(ttl_s * 1000))
        self._errors: tuple[type[Exception], ...] = (redis.RedisError, OSError)
        self._client = redis.Redis.from_url(
            url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
        )

    def get(self, key: str) -> str | None:
        try:
            value = self._client.get(key)
        except self._errors as e:
            raise CacheUnavailable(f"Redis at {self.url}: {e}") from e
        return value.decode("utf-8") if isinstance(value, bytes) else value

    def put(self, key: str, value: str) -> None:
        try:
            self._client.set(key, value, px=self._ttl_ms)
        except self._errors as e:
            raise CacheUnavailable(f"Redis at {self.url}: {e}") from e


class Lookup(NamedTuple):
    """One cache lookup: the cached result (None on a miss), its latency, any store trouble."""

    result: SearchResult | None
    latency_ms: float
    warning: str | None = None


class ResultCache:
    """Looks searches up in a :class:`ResultStore` and keeps their results there."""

    def __init__(self, store: ResultStore) -> None:
        self.store = store

    @classmethod
    def of(cls, ttl_s: float, entries: int, redis_url: str | None) -> ResultCache | None:
        """The configured cache: None when ``ttl_s`` is 0, Redis when a URL is given."""
        if ttl_s <= 0:
            return None
        if redis_url:
            return cls(RedisStore(redis_url, ttl_s))
        return cls(MemoryStore(ttl_s, entries))

    def read(self, key: str) -> tuple[str | None, float, str | None]:
        """The text kept under ``key`` (None on a miss), the lookup's milliseconds, and why the
        store could not be read (None when it could)."""
        start = time.perf_counter()
        try:
            value = self.store.get(key)
        except CacheUnavailable as e:
            return None, _ms(start), f"result cache unavailable ({e})"
        return value, _ms(start), None

    def write(self, key: str, value: str) -> str | None:
        """Keep ``value`` under ``key``; why it could not be kept (None when it was)."""
        try:
            self.store.put(key, value)
        except CacheUnavailable as e:
            return f"result cache unavailable ({e})"
        return None

    def fetch(self, key: str) -> Lookup:
        """The cached result of ``key``; a hit's trace says ``cache_hit`` and has one stage,
        ``cache`` (the stages that made it ran for an earlier caller)."""
        value, latency, trouble = self.read(key)
        if value is None:
            return Lookup(None, latency, trouble and f"{trouble}; searched without it")
        result = SearchResult.model_validate_json(value)
        result.trace.cache_hit = True
        result.trace.stages = [
            StageTrace(name="cache", latency_ms=latency, count=len(result.hits), note="hit")
        ]
        return Lookup(result, latency)

    def keep(
        self, key: str, result: SearchResult, lookup: Lookup, store: bool = True
    ) -> SearchResult:
        """Keep ``result`` under ``key`` (unless not ``store``); returns a copy with the missed
        lookup as its first stage (``result`` is not changed)."""
        warning = lookup.warning
        if warning is None and store:
            trouble = self.write(key, result.model_dump_json())
            warning = trouble and f"{trouble}; the result was not kept"
        stage = StageTrace(name="cache", latency_ms=lookup.latency_ms, count=0, note="miss")
        warnings = result.trace.warnings if warning is None else [*result.trace.warnings, warning]
        update = {"stages": [stage, *result.trace.stages], "warnings": warnings}
        return result.model_copy(update={"trace": result.trace.model_copy(update=update)})


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0
