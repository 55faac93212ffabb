"""A small in-process TTL cache for graph query results (least recently used evicted first)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


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
