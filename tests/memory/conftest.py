"""Memory fixtures: a fixed clock, and a store in the test's folder or on a PostgreSQL server
(every test of the store's contract runs on both)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from trilha.memory.store import MEMORY_FILE, MemoryStore

T0 = datetime(2025, 6, 2, 9, 0, tzinfo=UTC)


class StepClock:
    """A clock that moves one minute per reading, from :data:`T0`."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


@pytest.fixture(params=["sqlite", "postgres"])
def memory_at(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where a new memory database is: ``<tmp>/ws/memory.sqlite``, or a new PostgreSQL
    database."""
    if request.param == "postgres":
        return str(request.getfixturevalue("store_url"))
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws" / MEMORY_FILE


@pytest.fixture
def memory(memory_at: Path | str) -> Iterator[MemoryStore]:
    """An empty store with a :class:`StepClock`."""
    store = MemoryStore(memory_at, clock=StepClock())
    yield store
    store.close()
