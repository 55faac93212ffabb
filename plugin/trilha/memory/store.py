"""The memory store: conversation turns per user, conversation and project, in SQLite.

By default it lives in the workspace, in ``<workspace>/memory.sqlite`` (:data:`MEMORY_FILE`),
next to the retrieval job log (:class:`~trilha.memory.jobs.JobLog`). The connection, its lock,
WAL journaling and the ``meta`` table are :class:`~trilha.index.sql_store.SQLStore`'s; the
schema version is kept in ``meta`` under ``turns_schema``.

With a :class:`TurnMirror` (:class:`~trilha.memory.graph.GraphMemoryMirror`), every turn
written is also written to the graph as a private ``:Memory`` node (a failure there is logged,
the turn stays in SQLite).

Turns are personal: every read takes the ``user_id`` whose turns it returns, and there is no
read without one. What another user said never comes back, whatever the conversation or project
named.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from trilha.errors import BadRequestError, WorkspaceError
from trilha.index.sql_store import SQLStore, shown
from trilha.memory.context import RecentContext, pack
from trilha.memory.turns import Clock, Turn, check_name, make_turn, read_turns, stamp, utc_now

#: The memory database's file name inside a workspace.
MEMORY_FILE = "memory.sqlite"
#: Version of the ``turns`` table; a store refuses a file written by a newer trilha.
TURNS_SCHEMA = 1
#: Candidate turns per memory class that :meth:`MemoryStore.get_recent_context` considers.
RECENT_WINDOW = 50

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, turn_id TEXT UNIQUE NOT NULL, user_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL, project_id TEXT, role TEXT NOT NULL, text TEXT NOT NULL,
    created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS turns_user ON turns(user_id, created_at);
CREATE INDEX IF NOT EXISTS turns_conversation ON turns(user_id, conversation_id, created_at);
"""
_COLUMNS = "turn_id, user_id, conversation_id, project_id, role, text, created_at"
_INSERT = (
    f"INSERT INTO turns ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(turn_id) DO NOTHING"
)


def memory_at(root: Path, store_url: str | None) -> Path | str:
    """Where the memory of the workspace at ``root`` lives: the PostgreSQL database of
    ``TRILHA_STORE_URL`` when the workspace's store is there, else ``root``'s
    :data:`MEMORY_FILE`."""
    return store_url if store_url else Path(root) / MEMORY_FILE


def workspace_memory(folder: Path | str, store_url: str | None = None) -> Path | str:
    """:func:`memory_at` for a library caller naming only the workspace ``folder``: its store's
    database is ``store_url``, else ``TRILHA_STORE_URL``'s, as when the workspace opens; a file
    in the folder (made if missing) when there is none."""
    if store_url is None:
        from trilha.settings import TrilhaSettings

        store_url = TrilhaSettings().store_url
    at = memory_at(Path(folder), store_url)
    if isinstance(at, Path):
        at.parent.mkdir(parents=True, exist_ok=True)
    return at


@contextmanager
def opening(path: Path | str) -> Iterator[None]:
    """Opening the memory database at ``path``: SQLite's refusal (not a database, a folder, no
    permission, a table of another shape) becomes one :class:`WorkspaceError` line."""
    try:
        yield
    except sqlite3.DatabaseError as e:
        raise WorkspaceError(
            f"{path}: cannot be opened as trilha's memory database ({e}); move the file aside "
            "(a new one is made) or restore it from a backup"
        ) from e


def check_schema(store: SQLStore, key: str, version: int) -> None:
    """Record ``version`` under ``key`` in ``meta``; refuse a file made by a newer schema."""
    found = store.get_meta(key)
    if found is not None and int(found) > version:
        raise WorkspaceError(
            f"{shown(store.path)}: {key} {found} is newer than this trilha reads ({version}); "
            "upgrade trilha"
        )
    if found is None:
        store.set_meta(key, str(version))


def _row(t: Turn) -> tuple[str | None, ...]:
    return (
        t.turn_id,
        t.user_id,
        t.conversation_id,
        t.project_id,
        t.role,
        t.text,
        stamp(t.created_at),
    )


def _turn(row: Sequence[Any]) -> Turn:
    keys = ("turn_id", "user_id", "conversation_id", "project_id", "role", "text", "created_at")
    return Turn.model_validate(dict(zip(keys, row, strict=True)))


class TurnMirror(Protocol):
    """Where new turns are copied too (:class:`~trilha.memory.graph.GraphMemoryMirror`)."""

    def write(self, turns: Sequence[Turn]) -> str | None:
        """Copy ``turns``; None, or the warning of a copy that failed (logged by the mirror)."""
        ...


class MemoryStore(SQLStore):
    """Conversation turns in the SQLite file at ``path``; ``clock`` stamps new turns."""

    def __init__(
        self, path: Path | str, *, clock: Clock = utc_now, mirror: TurnMirror | None = None
    ) -> None:
        with opening(path):
            super().__init__(path, _SCHEMA)
            check_schema(self, "turns_schema", TURNS_SCHEMA)
        self.clock = clock
        self.mirror = mirror

    @classmethod
    def in_workspace(
        cls,
        folder: Path | str,
        *,
        clock: Clock = utc_now,
        mirror: TurnMirror | None = None,
        store_url: str | None = None,
    ) -> MemoryStore:
        """The store of the workspace at ``folder``: beside its unit store on PostgreSQL
        (``store_url``, else ``TRILHA_STORE_URL``), else in the folder (created if missing)."""
        return cls(workspace_memory(folder, store_url), clock=clock, mirror=mirror)

    def _insert(self, turns: Sequence[Turn]) -> int:
        rows = [_row(t) for t in turns]
        with self._lock, self._transaction():
            added = self._db.executemany(_INSERT, rows).rowcount if rows else 0
        if self.mirror is not None and turns:
            self.mirror.write(turns)  # a failure is logged by the mirror; SQLite is the truth
        return added

    def record_turn(
        self,
        user_id: str,
        conversation_id: str,
        role: Literal["user", "assistant"],
        text: str,
        *,
        project_id: str | None = None,
        created_at: datetime | None = None,
    ) -> Turn:
        """Store one turn (stamped by the clock unless ``created_at`` is given); returns it."""
        data: dict[str, Any] = {
            "user_id": user_id,
            "conversation_id": conversation_id,
            "role": role,
            "text": text,
            "project_id": project_id,
        }
        if created_at is not None:
            data["created_at"] = created_at
        turn = make_turn(data, self.clock)
        self._insert([turn])
        return turn

    def import_turns(self, path: Path) -> int:
        """Store the turns of a JSONL file (:mod:`trilha.memory.turns` gives its form), all
        checked before any is written; returns how many were new (a ``turn_id`` already stored
        is skipped, so importing a file twice adds nothing)."""
        return self._insert(read_turns(Path(path), self.clock))

    def _select(self, where: str, params: Sequence[Any], limit: int) -> list[Turn]:
        query = (
            f"SELECT {_COLUMNS} FROM turns WHERE {where} ORDER BY created_at DESC, seq DESC LIMIT ?"
        )
        with self._lock:
            rows = self._db.execute(query, (*params, max(0, limit))).fetchall()
        return [_turn(r) for r in rows]

    def turns(
        self,
        user_id: str,
        *,
        conversation_id: str | None = None,
        project_id: str | None = None,
        limit: int = 50,
    ) -> list[Turn]:
        """``user_id``'s turns, newest first, of one conversation and/or project if named."""
        where, params = ["user_id = ?"], [check_name(user_id, "user_id")]
        for column, value in (("conversation_id", conversation_id), ("project_id", project_id)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        return self._select(" AND ".join(where), params, limit)

    def get_recent_context(
        self,
        user_id: str,
        *,
        project_id: str | None = None,
        conversation_id: str | None = None,
        max_tokens: int,
    ) -> RecentContext:
        """``user_id``'s recent turns within ``max_tokens`` (:func:`~trilha.memory.context.pack`):
        the turns of ``conversation_id`` first, then the user's turns in other conversations,
        of ``project_id`` when given; at most :data:`RECENT_WINDOW` candidates of each."""
        if max_tokens < 0:
            raise BadRequestError(f"max_tokens is {max_tokens}; give 0 or more tokens")
        user = check_name(user_id, "user_id")
        working = (
            self.turns(user, conversation_id=conversation_id, limit=RECENT_WINDOW)
            if conversation_id is not None
            else []
        )
        where, params = ["user_id = ?"], [user]
        if conversation_id is not None:
            where.append("conversation_id <> ?")
            params.append(conversation_id)
        if project_id is not None:
            where.append("project_id = ?")
            params.append(project_id)
        earlier = self._select(" AND ".join(where), params, RECENT_WINDOW)
        return pack(working, earlier, max_tokens)
