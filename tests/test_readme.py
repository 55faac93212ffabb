"""The README's LlamaIndex block runs as written, in a folder holding a small ``docs/``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _block(after: str) -> str:
    """The first ```python block after the line starting with ``after``."""
    text = README.read_text(encoding="utf-8")
    start = text.index(after)
    match = re.search(r"```python\n(.*?)```", text[start:], re.DOTALL)
    assert match is not None
    return match.group(1)


def test_the_llamaindex_block_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "recurso.md").write_text(
        "---\nlang: pt\n---\n# Recurso\n\nO prazo de recurso é de quinze dias úteis.\n"
    )
    (docs / "ferias.md").write_text("# Férias\n\nAs férias são marcadas com trinta dias.\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRILHA_GRAPH_BACKEND", "none")
    exec(compile(_block("Inside LlamaIndex"), "README.md", "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    assert str(docs / "recurso.md") in out and "[False, False]" in out
