"""A SQLite database of one workspace: the connection, its lock, transactions, and the ``meta``
table of workspace-level values with the generation counter.

:class:`~trilha.index.docstore.DocStore` builds its tables on it. One connection is shared by
the workspace's threads under one re-entrant lock; WAL journaling lets readers go on while a
transaction writes. Statements run in autocommit unless inside :meth:`SQLiteStore._transaction`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_META = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"


class SQLiteStore:
    """The database at ``path`` with ``schema`` (statements run once, idempotently) and ``meta``."""

    def __init__(self, path: Path, schema: str) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_META + schema)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One SQLite transaction: committed when the block ends, rolled back if it raises
        (callers hold ``self._lock``)."""
        self._db.execute("BEGIN")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def get_meta(self, key: str) -> str | None:
        """A workspace-level value (model id, generation...)."""
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Store a workspace-level value."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    @property
    def generation(self) -> int:
        """Bumped on every change of the stored data (:meth:`_bump`)."""
        return int(self.get_meta("generation") or 0)

    @property
    def graph_generation(self) -> int:
        """Bumped on every write of graph records or a graph rebuild (:meth:`bump_graph`)."""
        return int(self.get_meta("graph_generation") or 0)

    def generations(self) -> tuple[int, int]:
        """``(generation, graph_generation)`` in one read (what a read-only follower polls)."""
        with self._lock:
            rows = dict(
                self._db.execute(
                    "SELECT key, value FROM meta WHERE key IN ('generation', 'graph_generation')"
                ).fetchall()
            )
        return int(rows.get("generation") or 0), int(rows.get("graph_generation") or 0)

    def bump_graph(self) -> None:
        """Count one write to the graph (what the graph boost reads changed)."""
        with self._lock:
            self._db.execute(
                "INSERT INTO meta VALUES ('graph_generation', '1') ON CONFLICT(key) DO UPDATE "
                "SET value = CAST(value AS INTEGER) + 1"
            )

    def _bump(self) -> None:
        """Count one change (callers hold ``self._lock``, usually inside a transaction)."""
        self._db.execute(
            "INSERT INTO meta VALUES ('generation', '1') ON CONFLICT(key) DO UPDATE SET "
            "value = CAST(value AS INTEGER) + 1"
        )
