"""A workspace whose ``memory.sqlite`` is not a memory database: one WorkspaceError line saying
what to do (exit 2 on the command line), never SQLite's bare exception."""

from __future__ import annotations

from pathlib import Path

import pytest

from trilha.cli.main import main
from trilha.errors import WorkspaceError
from trilha.memory import MEMORY_FILE, JobLog, MemoryStore


def _garbage(folder: Path) -> Path:
    path = folder / MEMORY_FILE
    path.write_text("not a database, only text " * 40, encoding="utf-8")
    return path


@pytest.mark.parametrize("store", [MemoryStore, JobLog])
def test_a_file_that_is_not_sqlite_is_a_workspace_error(
    tmp_path: Path, store: type[MemoryStore] | type[JobLog]
) -> None:
    path = _garbage(tmp_path)
    with pytest.raises(WorkspaceError) as caught:
        store(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: cannot be opened as trilha's memory database")
    assert "move the file aside" in message and "\n" not in message


def test_a_folder_in_its_place_is_a_workspace_error(tmp_path: Path) -> None:
    (tmp_path / MEMORY_FILE).mkdir()
    with pytest.raises(WorkspaceError, match="cannot be opened as trilha's memory database"):
        MemoryStore(tmp_path / MEMORY_FILE)


def test_a_table_of_another_shape_is_a_workspace_error(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / MEMORY_FILE
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE turns (something TEXT)")
    with pytest.raises(WorkspaceError, match="cannot be opened as trilha's memory database"):
        MemoryStore(path)


def test_jobs_stats_on_it_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _garbage(tmp_path)
    assert main(["jobs", "stats", "-w", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("trilha jobs: error: ") and "memory database" in err
    assert "internal error" not in err and "\n" not in err
