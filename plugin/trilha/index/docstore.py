"""The unit store: SQLite in the workspace, the source of truth the other indices derive from.

It records each document's content hash (so unchanged re-ingests are skipped) and origin (the
file it came from, so two files cannot claim one ``doc_id``), every unit with its metadata and
lexical tokens, and a generation counter bumped on every change, which the lexical index compares
with its own to know whether it is current (the connection, transactions and the counter are
:class:`~trilha.index.sqlite_store.SQLiteStore`'s). Units only ever get new rows (``row`` is
never reused) and a trigger logs every row deleted or rewritten in the ``dropped`` table, so the
lexical index catches up by reading the rows past its newest and the log past its last entry
(:meth:`DocStore.changes`), never every unit.

The ``pending`` table is the ingest's intent log: a document is marked before the derived indices
(dense, graph) are touched and cleared once they all agree with this store, so a workspace that
finds marks when it opens knows exactly which documents a crash may have left half-written.
A graph records file is logged the same way, whole (:attr:`DocStore.records`,
:class:`~trilha.index.record_log.RecordLog`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from trilha.index.record_log import RecordLog
from trilha.index.sqlite_store import SQLiteStore
from trilha.types import TextUnit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
    doc_id TEXT PRIMARY KEY, content_hash TEXT NOT NULL, n_units INTEGER NOT NULL,
    source_ref TEXT, updated_at TEXT DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE IF NOT EXISTS units (
    row INTEGER PRIMARY KEY AUTOINCREMENT, unit_id TEXT UNIQUE NOT NULL, doc_id TEXT NOT NULL,
    body TEXT NOT NULL, tokens TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS units_doc ON units(doc_id);
CREATE TABLE IF NOT EXISTS pending (doc_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS dropped (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, row INTEGER NOT NULL, rewritten INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS units_deleted AFTER DELETE ON units
    BEGIN INSERT INTO dropped(row, rewritten) VALUES (old.row, 0); END;
CREATE TRIGGER IF NOT EXISTS units_rewritten AFTER UPDATE ON units
    BEGIN INSERT INTO dropped(row, rewritten) VALUES (old.row, 1); END;
"""


class StoreChanges(NamedTuple):
    """What changed in the units since a position of the store (:meth:`DocStore.changes`)."""

    generation: int
    #: The deletion log's last entry.
    seq: int
    #: Entries up to this one were pruned from the log (:meth:`DocStore.prune_log`).
    pruned: int
    #: A unit was rewritten in place (a migration, new tokens) since the position.
    rewritten: bool
    #: The rows deleted since the position.
    deleted: list[int]
    #: ``(row, unit json, tokens)`` of the units past the position's row, in store order.
    added: list[tuple[int, str, str]]
    #: ``(row, unit json)`` of the units up to the position's row, when asked for.
    kept: list[tuple[int, str]]


class DocStore(SQLiteStore):
    """Documents and units of one workspace, in ``<workspace>/units.sqlite``."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, _SCHEMA)
        self.records = RecordLog(self._db, self._lock)  # the intent log of records ingests
        columns = {r[1] for r in self._db.execute("PRAGMA table_info(docs)")}
        if "origin" not in columns:  # workspaces made before origins were recorded
            self._db.execute("ALTER TABLE docs ADD COLUMN origin TEXT")
        indexes = {r[1] for r in self._db.execute("PRAGMA index_list(docs)")}
        if "docs_origin" not in indexes:  # ids by file (doc_ids_from), added later too
            self._db.execute("CREATE INDEX docs_origin ON docs(origin)")

    # -- documents ------------------------------------------------------------------------
    def doc_hash(self, doc_id: str) -> str | None:
        """Content hash recorded for a document, or None if it is unknown."""
        with self._lock:
            row = self._db.execute(
                "SELECT content_hash FROM docs WHERE doc_id=?", (doc_id,)
            ).fetchone()
        return None if row is None else str(row[0])

    def doc_ids(self) -> list[str]:
        """All document ids."""
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT doc_id FROM docs ORDER BY doc_id")]

    def doc_origin(self, doc_id: str) -> str | None:
        """The file a document was loaded from (None when unknown or not recorded)."""
        with self._lock:
            row = self._db.execute("SELECT origin FROM docs WHERE doc_id=?", (doc_id,)).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def doc_ids_from(self, origin: str) -> list[str]:
        """The documents loaded from the file ``origin``, first written first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT doc_id FROM docs WHERE origin=? ORDER BY rowid", (origin,)
            )
            return [r[0] for r in rows]

    def unit_ids_of(self, doc_id: str) -> list[str]:
        """Unit ids of one document."""
        with self._lock:
            rows = self._db.execute(
                "SELECT unit_id FROM units WHERE doc_id=? ORDER BY row", (doc_id,)
            )
            return [r[0] for r in rows]

    def replace_doc(
        self,
        doc_id: str,
        content_hash: str,
        source_ref: str | None,
        units: Sequence[TextUnit],
        tokens: Sequence[list[str]],
        origin: str | None = None,
    ) -> None:
        """Atomically replace a document's units (insert when new)."""
        with self._lock, self._transaction():
            self._db.execute("DELETE FROM units WHERE doc_id=?", (doc_id,))
            self._db.executemany(
                "INSERT INTO units(unit_id, doc_id, body, tokens) VALUES (?, ?, ?, ?)",
                [
                    (u.unit_id, doc_id, u.model_dump_json(), " ".join(t))
                    for u, t in zip(units, tokens, strict=True)
                ],
            )
            self._db.execute(
                "INSERT OR REPLACE INTO docs(doc_id, content_hash, n_units, source_ref, "
                "origin) VALUES (?, ?, ?, ?, ?)",
                (doc_id, content_hash, len(units), source_ref, origin),
            )
            self._bump()

    def delete_doc(self, doc_id: str) -> int:
        """Remove a document and its units; returns how many units went."""
        with self._lock, self._transaction():
            n = self._db.execute("DELETE FROM units WHERE doc_id=?", (doc_id,)).rowcount
            gone = self._db.execute("DELETE FROM docs WHERE doc_id=?", (doc_id,)).rowcount
            if n or gone:
                self._bump()
        return int(n)

    # -- intent log -----------------------------------------------------------------------
    def mark_pending(self, doc_ids: Sequence[str]) -> None:
        """Record that these documents' derived indices are about to change."""
        with self._lock:
            self._db.executemany(
                "INSERT OR IGNORE INTO pending VALUES (?)", [(d,) for d in doc_ids]
            )

    def clear_pending(self, doc_ids: Sequence[str]) -> None:
        """The derived indices of these documents agree with the store again."""
        with self._lock:
            self._db.executemany("DELETE FROM pending WHERE doc_id=?", [(d,) for d in doc_ids])

    def pending_docs(self) -> list[str]:
        """Documents whose last write may have been interrupted."""
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT doc_id FROM pending ORDER BY doc_id")]

    # -- units ----------------------------------------------------------------------------
    def count(self) -> int:
        """Number of units."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM units").fetchone()[0])

    def languages(self) -> Counter[str]:
        """How many units each ``lang`` (as stored) has."""
        query = "SELECT json_extract(body, '$.lang'), COUNT(*) FROM units GROUP BY 1"
        with self._lock:
            return Counter({str(lang): int(n) for lang, n in self._db.execute(query) if lang})

    def retokenize(self, tokenize: Callable[[TextUnit], list[str]], version: str) -> int:
        """Recompute every unit's stored tokens when they were made by another tokenizer
        version (one transaction; the generation is bumped so the lexical index rebuilds).
        Returns how many units were re-tokenised (0 when the version already matches)."""
        with self._lock:
            if self.get_meta("tokenizer") == version:
                return 0
            rows = self._db.execute("SELECT unit_id, body FROM units").fetchall()
            updates = [
                (" ".join(tokenize(TextUnit.model_validate_json(body))), uid) for uid, body in rows
            ]
            with self._transaction():
                self._db.executemany("UPDATE units SET tokens=? WHERE unit_id=?", updates)
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('tokenizer', ?)", (version,))
                if updates:
                    self._bump()
        return len(updates)

    def migrate(self, key: str, version: str, fix: Callable[[str], str]) -> list[str] | None:
        """Rewrite every unit's stored JSON body with ``fix`` once per ``version`` of ``key``
        (one transaction; the generation is bumped). Returns the ids of the units ``fix``
        changed, or None when the store was already at this version."""
        with self._lock:
            if self.get_meta(key) == version:
                return None
            rows = self._db.execute("SELECT unit_id, body FROM units").fetchall()
            updates = [(new, uid) for uid, body in rows if (new := fix(body)) != body]
            with self._transaction():
                self._db.executemany("UPDATE units SET body=? WHERE unit_id=?", updates)
                self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, version))
                if updates:
                    self._bump()
        return [uid for _, uid in updates]

    def unit_ids(self) -> set[str]:
        """Every unit id."""
        with self._lock:
            return {r[0] for r in self._db.execute("SELECT unit_id FROM units")}

    def units_of(self, doc_ids: Sequence[str]) -> list[TextUnit]:
        """The units of these documents, in document order."""
        out: list[TextUnit] = []
        with self._lock:
            for doc_id in doc_ids:
                rows = self._db.execute(
                    "SELECT body FROM units WHERE doc_id=? ORDER BY row", (doc_id,)
                )
                out.extend(TextUnit.model_validate_json(body) for (body,) in rows)
        return out

    def iter_rows(self) -> Iterable[tuple[str, str, str]]:
        """(unit_id, unit json, tokens) of every unit in insertion order."""
        with self._lock:
            rows = self._db.execute("SELECT unit_id, body, tokens FROM units ORDER BY row")
            return list(rows)

    def changes(self, row: int, seq: int, kept: bool = False) -> StoreChanges:
        """In one read (one state of the store): the units past ``row``, the rows deleted since
        the deletion log's entry ``seq`` and, with ``kept``, the units up to ``row``. Every
        delete or in-place update of a unit is logged by a trigger, so a lexical index reads
        only what changed since the position it reflects."""
        with self._lock, self._transaction():
            meta = dict(self._db.execute(
                "SELECT key, value FROM meta WHERE key IN ('generation', 'dropped_pruned')"
            ).fetchall())  # fmt: skip
            last = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name='dropped'")
            logged = self._db.execute(
                "SELECT row, rewritten FROM dropped WHERE seq > ? ORDER BY seq", (seq,)
            ).fetchall()
            added = self._db.execute(
                "SELECT row, body, tokens FROM units WHERE row > ? ORDER BY row", (row,)
            ).fetchall()
            held = self._db.execute(
                "SELECT row, body FROM units WHERE row <= ? ORDER BY row", (row,)
            ).fetchall() if kept else []  # fmt: skip
            newest = last.fetchone()
        return StoreChanges(
            generation=int(meta.get("generation") or 0),
            seq=int(newest[0]) if newest else 0,
            pruned=int(meta.get("dropped_pruned") or 0),
            rewritten=any(r for _, r in logged),
            deleted=[r for r, _ in logged],
            added=added,
            kept=held,
        )

    def prune_log(self, seq: int) -> None:
        """Forget the deletion log's entries up to ``seq`` (a position no reader starts from)."""
        with self._lock, self._transaction():
            self._db.execute("DELETE FROM dropped WHERE seq <= ?", (seq,))
            self._db.execute(
                "INSERT INTO meta VALUES ('dropped_pruned', ?) ON CONFLICT(key) DO UPDATE SET "
                "value = MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
                (str(seq),),
            )

    def get(self, unit_ids: Sequence[str]) -> dict[str, TextUnit]:
        """Units by id (missing ids are left out)."""
        out: dict[str, TextUnit] = {}
        with self._lock:
            for start in range(0, len(unit_ids), 500):
                chunk = list(unit_ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                for uid, body in self._db.execute(
                    f"SELECT unit_id, body FROM units WHERE unit_id IN ({marks})", chunk
                ):
                    out[uid] = TextUnit.model_validate(json.loads(body))
        return out
