"""The Python API as a careless or hostile caller uses it: what is not a request, a workspace
whose principals file is not a file, an orchestrator used after close(). Each is one TrilhaError
line, never a TypeError, OSError or RuntimeError."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.errors import BadRequestError, TrilhaError, WorkspaceError
from trilha.orchestrate import Orchestrator
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

REQUEST = {"user_id": "ana", "conversation_id": "c", "raw_query": "Quais tarefas estão atrasadas?"}
PRINCIPALS = "principals:\n  ana:\n    org_ids: [acme]\n"


@pytest.fixture()
def bare_ws(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> Iterator[Workspace]:
    """An empty workspace without a graph, whose one principal is ``ana``."""
    ws = Workspace.open(
        tmp_path / "ws", TrilhaSettings(graph_backend="none"), embedder=embedder, create=True
    )
    (ws.path / "principals.yaml").write_text(PRINCIPALS, encoding="utf-8")
    yield ws
    ws.close()


def test_an_empty_workspace_without_graph_still_gives_a_bundle_with_a_warning(
    bare_ws: Workspace,
) -> None:
    orchestrator = Orchestrator(bare_ws)
    bundle = orchestrator.retrieve({**REQUEST, "depth": "D2", "max_tokens": 5})
    orchestrator.close()
    assert bundle.context_items == [] and bundle.tokens_estimated == 0
    assert any("no graph" in w for w in bundle.trace.warnings)


def test_retrieve_after_close_is_a_workspace_error(bare_ws: Workspace) -> None:
    orchestrator = Orchestrator(bare_ws)
    orchestrator.retrieve(REQUEST)
    orchestrator.close()
    with pytest.raises(WorkspaceError, match="this orchestrator is closed; make a new"):
        orchestrator.retrieve(REQUEST)


@pytest.mark.parametrize("request_value", ["Quais tarefas?", None, ["ana"]])
def test_a_request_that_is_not_a_mapping_is_a_bad_request(
    bare_ws: Workspace, request_value: object
) -> None:
    orchestrator = Orchestrator(bare_ws)
    with pytest.raises(BadRequestError, match="a mapping of its fields"):
        orchestrator.retrieve(request_value)  # type: ignore[arg-type]


def test_a_principals_file_that_is_a_folder_is_one_trilha_error(bare_ws: Workspace) -> None:
    principals = bare_ws.path / "principals.yaml"
    principals.unlink()
    principals.mkdir()
    with pytest.raises(TrilhaError, match=r"principals\.yaml: "):
        Orchestrator(bare_ws).retrieve(REQUEST)


def test_stored_text_cannot_drive_the_terminal_trilha_context_prints_on(
    bare_ws: Workspace,
) -> None:
    from trilha.cli.render import render_bundle

    orchestrator = Orchestrator(bare_ws)
    orchestrator.memory.record_turn("ana", "c", "user", "\x1b[2J\x1b]0;pwned\x07tarefas atrasadas")
    bundle = orchestrator.retrieve({**REQUEST, "depth": "D0"})
    orchestrator.close()
    assert [i.text for i in bundle.context_items] == [
        "user: \x1b[2J\x1b]0;pwned\x07tarefas atrasadas"
    ]  # the bundle keeps the text as stored; only the terminal rendering escapes it
    shown = render_bundle(bundle)
    assert "\x1b" not in shown and "\x07" not in shown
    assert "user: \\x1b[2J\\x1b]0;pwned\\x07tarefas atrasadas" in shown


def test_principals_are_read_once_and_again_when_the_file_changes(bare_ws: Workspace) -> None:
    orchestrator = Orchestrator(bare_ws)
    assert orchestrator.principal_for("ana").org_ids == ["acme"]
    (bare_ws.path / "principals.yaml").write_text(
        PRINCIPALS + "  bia:\n    org_ids: [beta, gamma]\n", encoding="utf-8"
    )
    assert orchestrator.principal_for("bia").org_ids == ["beta", "gamma"]
    (bare_ws.path / "principals.yaml").unlink()
    with pytest.raises(BadRequestError, match="this workspace has no users"):
        orchestrator.principal_for("ana")
    orchestrator.close()
