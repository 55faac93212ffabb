"""A records ingest is all of its file or none: kill -9 part-way, then doctor and readers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trilha.cli.main import main
from trilha.errors import BadRequestError
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

TASKS = 3000

#: The real CLI in a child that kills itself (SIGKILL) when the graph writer sends its
#: ``nth`` statement batch: the Task and Project nodes are written, the edges are not.
_CHILD = """
import os, signal, sys
import trilha.graph.build.writer as writer
from trilha.cli.main import main
real, countdown = writer.write_rows, [int(sys.argv[3])]
def dying(*args, **kwargs):
    countdown[0] -= 1
    if countdown[0] == 0:
        os.kill(os.getpid(), signal.SIGKILL)  # a real kill -9, at a chosen point
    return real(*args, **kwargs)
writer.write_rows = dying
main(["ingest", "-q", "-w", sys.argv[1], "--records", sys.argv[2]])
"""


def _records(path: Path) -> Path:
    lines = [{"kind": "node", "label": "Project", "id": "p1", "props": {"title": "Atlas"}}]
    for i in range(TASKS):
        lines.append({"kind": "node", "label": "Task", "id": f"t{i}", "props": {"title": f"T{i}"}})
        lines.append({"kind": "edge", "type": "BELONGS_TO", "source": f"Task:t{i}",
                      "target": "Project:p1"})  # fmt: skip
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def _counts(ws: Workspace) -> tuple[int, int]:
    graph = ws.require_graph()
    tasks = graph.store.run("MATCH (t:Task) RETURN count(t) AS n")[0]["n"]
    edges = graph.store.run("MATCH (:Task)-[r:BELONGS_TO]->(:Project) RETURN count(r) AS n")
    return int(tasks), int(edges[0]["n"])


def _kill_mid_way(ws: Path, records: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # the writer's row writes: the Task nodes, the Project node, then the edges
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ws), str(records), "3"], env=env, check=False
    )
    assert child.returncode == -9


def test_kill_9_during_a_records_ingest_is_reported_and_finished_by_doctor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = _records(tmp_path / "tasks.jsonl")
    _kill_mid_way(tmp_path / "ws", records)
    capsys.readouterr()
    assert main(["doctor", "-w", str(tmp_path / "ws")]) == 1
    report = capsys.readouterr().out
    assert f"interrupted records ingest: {records} ({2 * TASKS + 1} records)" in report
    assert "NOT consistent" in report
    assert main(["doctor", "--repair", "-w", str(tmp_path / "ws")]) == 0
    assert "after repair: consistent" in capsys.readouterr().out
    with Workspace.open(tmp_path / "ws", TrilhaSettings()) as ws:
        assert _counts(ws) == (TASKS, TASKS)
        assert ws.check().consistent


def test_a_reader_after_the_kill_sees_the_whole_file(tmp_path: Path) -> None:
    records = _records(tmp_path / "tasks.jsonl")
    _kill_mid_way(tmp_path / "ws", records)
    with Workspace.open(tmp_path / "ws", TrilhaSettings()) as ws:  # repairs on open
        assert _counts(ws) == (TASKS, TASKS)
        assert not ws.store.records.pending()


def test_a_refused_records_file_leaves_no_intent_behind(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind":"node","label":"Task","id":"t1","props":{"visibility":"nobody"}}\n')
    with Workspace.open(tmp_path / "ws", TrilhaSettings(), create=True) as ws:
        with pytest.raises(BadRequestError):
            ws.ingest_records(bad)
        assert not ws.store.records.pending()
        assert _counts(ws) == (0, 0)
        assert ws.check().consistent


def _title(ws: Workspace) -> str:
    rows = ws.require_graph().store.run("MATCH (t:Task {id: 't1'}) RETURN t.title AS title")
    return str(rows[0]["title"])


def test_an_older_unfinished_records_ingest_never_lands_over_a_newer_one(tmp_path: Path) -> None:
    """A records ingest the graph failed part-way stays logged; the next ingest finishes it
    first, so a later repair cannot write the old file over the new one."""
    line = {"kind": "node", "label": "Task", "id": "t1", "props": {"title": "old"}}
    newer = tmp_path / "new.jsonl"
    newer.write_text(json.dumps({**line, "props": {"title": "new"}}) + "\n", encoding="utf-8")
    with Workspace.open(tmp_path / "ws", TrilhaSettings(), create=True) as ws:
        ws.store.records.log("old.jsonl", 1, "{}", json.dumps(line))  # left by a failed ingest
        ws.ingest_records(newer)
        assert _title(ws) == "new" and not ws.store.records.pending()
    with Workspace.open(tmp_path / "ws", TrilhaSettings()) as ws:  # repairs on open
        assert _title(ws) == "new"
