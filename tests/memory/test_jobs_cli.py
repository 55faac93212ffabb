"""``trilha jobs stats``: the job log's statistics as text and JSON, from the SQLite file alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.memory.jobs_helpers import PLAN, job
from trilha.cli.main import main
from trilha.memory.jobs import JobLog


@pytest.fixture
def ws(tmp_path: Path) -> str:
    """A workspace folder holding only the synthetic job log."""
    log = JobLog.in_workspace(tmp_path / "ws")
    for i in range(len(PLAN)):
        log.record(job(i, "ana" if i % 2 == 0 else "bia"))
    log.close()
    return str(tmp_path / "ws")


def test_json_is_the_job_stats(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jobs", "stats", "-w", ws, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["jobs"], data["success_rate"]) == (20, 0.8)
    assert (data["mean_latency_ms"], data["p95_latency_ms"]) == (10.5, 19)
    assert data["errors_by_strategy"]["graph_only"] == 4
    assert data["by_intent"]["factual"] == 8
    assert data["recurring_patterns"][0] == {
        "pattern": "lgpd",
        "count": 6,
        "users": 2,
        "example": "LGPD?",
    }


def test_since_keeps_the_later_jobs(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jobs", "stats", "-w", ws, "--json", "--since", "2025-06-02T09:10:00Z"]) == 0
    assert json.loads(capsys.readouterr().out)["jobs"] == 10
    assert main(["jobs", "stats", "-w", ws, "--json", "--since", "2025-06-02T06:10-03:00"]) == 0
    assert json.loads(capsys.readouterr().out)["jobs"] == 10
    assert main(["jobs", "stats", "-w", ws, "--json", "--since", "2025-06-03"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["jobs"] == 0
    assert "no retrieval jobs recorded" in captured.err


def test_text_report(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jobs", "stats", "-w", ws]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        "retrieval jobs: 20",
        "success rate: 80.0% (16 ok, 4 failed)",
        "latency: mean 10.5 ms, P95 19 ms",
    ]
    assert lines[3].startswith("by strategy: graph_only 8 (4 failed), hybrid_semantic_graph 4")
    assert "recurring query patterns:" in lines
    assert "  6x by 2 user(s) [lgpd] e.g. 'LGPD?'" in lines


def test_an_empty_or_missing_log_is_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    assert main(["jobs", "stats", "-w", str(missing)]) == 0
    assert "no retrieval jobs recorded" in capsys.readouterr().out
    assert not missing.exists()  # reading creates nothing
    JobLog.in_workspace(tmp_path / "empty").close()
    assert main(["jobs", "stats", "-w", str(tmp_path / "empty")]) == 0
    assert "no retrieval jobs recorded" in capsys.readouterr().out


def test_a_bad_since_is_one_line_and_exit_2(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jobs", "stats", "-w", ws, "--since", "last tuesday"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("trilha jobs: error: --since 'last tuesday' is not an ISO date")
    assert "\n" not in err
