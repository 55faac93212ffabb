"""``trilha context`` as a hostile or careless user runs it: bad input is one line with exit 2,
and the job of a good request reaches the graph before the command closes the workspace."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from trilha.cli.main import main
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

RECORDS = [
    {"kind": "node", "label": "User", "id": "bruno.ti", "props": {"visibility": "public"}},
    {
        "kind": "node",
        "label": "Task",
        "id": "t-ropa",
        "props": {
            "title": "Atualizar o ROPA",
            "status": "late",
            "owner_id": "bruno.ti",
            "due_date": "2026-10-15",
            "visibility": "org",
            "org_id": "acme",
        },
    },
    {"kind": "edge", "type": "ASSIGNED_TO", "source": "Task:t-ropa", "target": "User:bruno.ti"},
]
PRINCIPALS = "principals:\n  bruno.ti:\n    org_ids: [acme]\n    hierarchy_level: 1\n"


def _task_ws(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> Path:
    """A closed workspace on embedded FalkorDB: one late task of bruno.ti, and its principal."""
    folder = tmp_path / "ws"
    records = tmp_path / "records.jsonl"
    records.write_text("\n".join(json.dumps(r) for r in RECORDS), encoding="utf-8")
    with Workspace.open(
        folder, TrilhaSettings(graph_backend="falkordb"), embedder=embedder, create=True
    ) as ws:
        ws.ingest_records(records)
    (folder / "principals.yaml").write_text(PRINCIPALS, encoding="utf-8")
    return folder


@pytest.fixture()
def task_ws(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> Path:
    """:func:`_task_ws`, for a test that writes."""
    return _task_ws(tmp_path, embedder)


@pytest.fixture(scope="module")
def refusing_ws(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Path:
    """:func:`_task_ws` once per module, for requests refused before they reach it."""
    return _task_ws(tmp_path_factory.mktemp("refusing"), embedder)


def test_the_job_of_trilha_context_is_mirrored_before_the_workspace_closes(
    task_ws: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TRILHA_GRAPH_BACKEND", "falkordb")
    question = "Quais tarefas estão atrasadas?"
    with caplog.at_level(logging.WARNING):
        assert main(["context", question, "--user", "bruno.ti", "-w", str(task_ws), "--json"]) == 0
    job = json.loads(capsys.readouterr().out)["trace"]["job_id"]
    assert not [r for r in caplog.records if "not mirrored" in r.getMessage()]
    with Workspace.open(task_ws, TrilhaSettings(graph_backend="falkordb"), create=True) as ws:
        assert ws.graph is not None
        rows = ws.graph.store.run(
            "MATCH (j:RetrievalJob {id: $id}) RETURN j.raw_query AS q", {"id": job}
        )
    assert [r["q"] for r in rows] == [question]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["a\x01b", "--user", "bruno.ti"], "request: raw_query holds the control character"),
        (["x", "--user", "bruno.ti", "--conversation", "c" * 300], "request: conversation_id:"),
        (["x", "--user", "  "], "error: --user is empty"),  # refused before any request
    ],
)
def test_bad_input_is_one_line_with_exit_2(
    refusing_ws: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    assert main(["context", *args, "-w", str(refusing_ws), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    line = captured.err.strip()
    assert line.startswith("trilha context: error: ")
    assert said in line and "\n" not in line


def test_the_demo_stories_jobs_are_mirrored_before_the_workspace_closes(
    task_ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from trilha.cli.demo_stories import STORIES, tell_stories

    settings = TrilhaSettings(graph_backend="falkordb")
    (task_ws / "principals.yaml").write_text(
        PRINCIPALS + "  maria.cfo:\n    org_ids: [acme]\n", encoding="utf-8"
    )
    with Workspace.open(task_ws, settings, create=True) as ws:
        tell_stories(ws)
    assert "Seed 004's user stories" in capsys.readouterr().out
    with Workspace.open(task_ws, settings, create=True) as ws:
        assert ws.graph is not None
        rows = ws.graph.store.run("MATCH (j:RetrievalJob) RETURN count(j) AS n")
    assert rows[0]["n"] == len(STORIES)
