"""Shared helpers: the repository's YAML as data, and a writer for hostile copies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def shipped(folder: str, name: str) -> dict[str, Any]:
    """A shipped YAML file of the repository, parsed."""
    data: dict[str, Any] = yaml.safe_load((ROOT / folder / name).read_text(encoding="utf-8"))
    return data


@pytest.fixture
def write(tmp_path: Path) -> Any:
    """``write(name, data)`` dumps ``data`` (or writes ``str`` as is) and returns the path."""

    def _write(name: str, data: Any) -> Path:
        path = tmp_path / name
        text = data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True)
        path.write_text(text, encoding="utf-8")
        return path

    return _write
