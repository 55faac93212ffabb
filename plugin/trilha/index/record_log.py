"""The intent log of graph records ingests, in the unit store's database.

A records file is checked, then logged whole here (its records as JSONL, with the access
defaults they are written with) before the graph is touched: logged is committed. The entry is
cleared once the graph holds every record; one a crash left behind is written into the graph
again by the next repair (:func:`trilha.workspace.writes.replay_records`), so a records ingest
is all of its file or none, as a document's write is (``pending`` in
:mod:`trilha.index.docstore`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trilha.index.sql_store import SQLStore

#: The log's table, made with the unit store's (:class:`~trilha.index.docstore.DocStore`).
SCHEMA = """
CREATE TABLE IF NOT EXISTS pending_records (
    id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, n INTEGER NOT NULL,
    defaults TEXT NOT NULL, records TEXT NOT NULL);
"""


class RecordLog:
    """Logged records ingests, on the unit store's connection and lock."""

    def __init__(self, store: SQLStore) -> None:
        self._db = store._db
        self._lock = store._lock
        self._returning = store.on_server  # psycopg has no lastrowid

    def log(self, name: str, n: int, defaults: str, jsonl: str) -> int:
        """Log the ``n`` records of the file ``name`` (JSONL) and the access ``defaults`` they
        are written with (JSON): the commit point of a records ingest. Returns the entry's id."""
        insert = "INSERT INTO pending_records(name, n, defaults, records) VALUES (?, ?, ?, ?)"
        with self._lock:
            if self._returning:
                row = self._db.execute(insert + " RETURNING id", (name, n, defaults, jsonl))
                return int(row.fetchone()[0])
            cursor = self._db.execute(insert, (name, n, defaults, jsonl))
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
