"""The intent log of graph records ingests, in the unit store's database.

A records file is checked, then logged whole here (its records as JSONL, with the access
defaults they are written with) before the graph is touched: logged is committed. The entry is
cleared once the graph holds every record; one a crash left behind is written into the graph
again by the next repair (:func:`trilha.workspace.writes.replay_records`), so a records ingest
is all of its file or none, as a document's write is (``pending`` in
:mod:`trilha.index.docstore`).
"""

from __future__ import annotations

import sqlite3
import threading

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending_records (
    id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, n INTEGER NOT NULL,
    defaults TEXT NOT NULL, records TEXT NOT NULL);
"""


class RecordLog:
    """Logged records ingests, on the unit store's connection and lock."""

    def __init__(self, db: sqlite3.Connection, lock: threading.RLock) -> None:
        self._db = db
        self._lock = lock
        with lock:
            db.executescript(_SCHEMA)

    def log(self, name: str, n: int, defaults: str, jsonl: str) -> int:
        """Log the ``n`` records of the file ``name`` (JSONL) and the access ``defaults`` they
        are written with (JSON): the commit point of a records ingest. Returns the entry's id."""
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO pending_records(name, n, defaults, records) VALUES (?, ?, ?, ?)",
                (name, n, defaults, jsonl),
            )
            return int(cursor.lastrowid or 0)

    def pending(self) -> list[tuple[int, str, int]]:
        """``(id, file name, records)`` of the logged ingests the graph may hold in part."""
        with self._lock:
            rows = self._db.execute("SELECT id, name, n FROM pending_records ORDER BY id")
            return [(int(i), str(name), int(n)) for i, name, n in rows]

    def logged(self, entry: int) -> tuple[str, str]:
        """``(defaults JSON, records JSONL)`` of one logged ingest."""
        with self._lock:
            row = self._db.execute(
                "SELECT defaults, records FROM pending_records WHERE id=?", (entry,)
            ).fetchone()
        return ("{}", "") if row is None else (str(row[0]), str(row[1]))

    def clear(self, entry: int) -> None:
        """The graph holds every record of this logged ingest (or it was refused)."""
        with self._lock:
            self._db.execute("DELETE FROM pending_records WHERE id=?", (entry,))
