"""Retrieval log (seed 003 §6): one JSON line per graph call.

Fields: ``timestamp`` (ISO 8601, UTC, milliseconds), ``query`` (the operation and its
arguments), ``result_count``, ``latency_ms``, ``cache_hit``. Appends are thread-safe; the folder
is created on the first write.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, JsonValue


class RetrievalLogEntry(BaseModel):
    """One logged graph call."""

    timestamp: str = Field(description="When the call finished, ISO 8601 UTC.")
    query: dict[str, JsonValue] = Field(description="'op' plus the call's arguments.")
    result_count: int = Field(description="Nodes, path nodes, items or boosted units returned.")
    latency_ms: float = Field(description="Wall time of the call in milliseconds.")
    cache_hit: bool = Field(description="True when the result came from the cache.")


def now_iso() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RetrievalLog:
    """Appends :class:`RetrievalLogEntry` lines to a JSONL file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def append(
        self, query: dict[str, JsonValue], result_count: int, latency_ms: float, cache_hit: bool
    ) -> RetrievalLogEntry:
        """Write one line; returns the entry written."""
        entry = RetrievalLogEntry(
            timestamp=now_iso(),
            query=query,
            result_count=result_count,
            latency_ms=round(latency_ms, 3),
            cache_hit=cache_hit,
        )
        line = json.dumps(entry.model_dump(), ensure_ascii=False)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(line + "\n")
        return entry

    def read(self) -> list[RetrievalLogEntry]:
        """Every entry written so far (empty when the file does not exist)."""
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return [RetrievalLogEntry.model_validate_json(line) for line in lines if line.strip()]
