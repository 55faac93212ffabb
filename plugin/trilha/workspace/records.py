"""A workspace's records: the small JSON values that say which encoder built its vectors
(:data:`~trilha.workspace.upgrade.ENCODER_FILE`) and which Qdrant collection holds them
(:data:`~trilha.workspace.shared.COLLECTION_FILE`).

They are files in the workspace folder, or, when the unit store is on a PostgreSQL server
(``TRILHA_STORE_URL``), values in that database's ``meta`` (``record:<file name>``), so that
every process sharing the store, whatever its folder, reads the same ones.
"""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path
from typing import Any

from trilha.index.sql_store import SQLStore
from trilha.settings import TrilhaSettings


def read_record(root: Path, settings: TrilhaSettings, name: str) -> dict[str, Any] | None:
    """The record ``name`` of the workspace at ``root``; None when it has none yet."""
    if settings.store_url:
        with closing(SQLStore(settings.store_url, "")) as db:
            text = db.get_meta(f"record:{name}")
    else:
        path = root / name
        text = path.read_text() if path.exists() else None
    return None if text is None else dict(json.loads(text))


def write_record(root: Path, settings: TrilhaSettings, name: str, value: dict[str, Any]) -> None:
    """Write the record ``name`` (a file is replaced atomically)."""
    text = json.dumps(value, indent=2)
    if settings.store_url:
        with closing(SQLStore(settings.store_url, "")) as db:
            db.set_meta(f"record:{name}", text)
        return
    staged = (root / name).with_suffix(".tmp")
    staged.write_text(text)
    staged.replace(root / name)
