"""Memory fixtures: a fixed clock and a store in the test's folder."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from trilha.memory.store import MemoryStore

T0 = datetime(2025, 6, 2, 9, 0, tzinfo=UTC)


class StepClock:
    """A clock that moves one minute per reading, from :data:`T0`."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemoryStore]:
    """An empty store in ``<tmp>/ws/memory.sqlite`` with a :class:`StepClock`."""
    store = MemoryStore.in_workspace(tmp_path / "ws", clock=StepClock())
    yield store
    store.close()
