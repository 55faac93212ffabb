"""``trilha load``: the report's arithmetic, and a short real run against ``trilha serve``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trilha.cli.main import main
from trilha.eval.load import Sample, demo_calls, is_error, report


def test_report_percentiles_windows_and_errors() -> None:
    samples = [Sample(float(i), "/v1/retrieve", 200, float(i + 1), i % 10 == 0) for i in range(100)]
    samples += [
        Sample(50.0, "/graphrag/path", 503, 5.0, False),
        Sample(10.0, "/v1/context", 0, 1.0, False),
    ]
    out = report(samples, duration_s=100.0, clients=4, kill_at_s=40.0)
    assert out["requests"] == 102 and out["throughput_rps"] == 1.0
    assert out["errors"] == 1  # the transport failure; the graph's 503 after the kill is by design
    retrieve = out["routes"]["/v1/retrieve"]
    assert retrieve["p50_ms"] == pytest.approx(50.5) and retrieve["degraded"] == 10
    assert out["first_window"]["count"] == 32 and out["last_window"]["count"] == 30
    assert out["after_kill"]["/graphrag/path"]["statuses"] == {"503": 1}


def test_a_graph_503_before_the_kill_or_on_another_route_is_an_error() -> None:
    assert is_error(Sample(5.0, "/graphrag/path", 503, 1.0, False), graph_down_since=10.0)
    assert is_error(Sample(50.0, "/v1/retrieve", 503, 1.0, False), graph_down_since=10.0)
    assert not is_error(Sample(50.0, "/v1/retrieve", 409, 1.0, False), graph_down_since=None)


def test_demo_calls_cover_the_three_families() -> None:
    calls = demo_calls(["q1", "q2"], ["d1"], ["A", "B", "C"])
    assert len(calls["/v1/retrieve"]) == 2 and len(calls["/v1/context"]) == 2
    paths = [c.path for c in calls["/graphrag"]]
    assert paths.count("/graphrag/path") == 2 and "/graphrag/subgraph" in paths


def test_load_runs_against_a_served_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRILHA_GRAPH_BACKEND", "none")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# VPN\n\nThe VPN client must be updated monthly.\n", "utf-8")
    ws = str(tmp_path / "ws")
    assert main(["ingest", "-q", "-w", ws, str(docs)]) == 0
    out = tmp_path / "load.json"
    args = ["load", "-w", ws, "--clients", "3", "--duration", "3", "--out", str(out)]
    assert main(args) == 0
    data = json.loads(out.read_text())
    assert data["errors"] == 0 and data["requests"] > 0 and data["cache"] is False
    assert data["routes"]["/v1/retrieve"]["statuses"].keys() == {"200"}
    assert {"python_p50_ms", "http_p50_ms", "service_p50_ms"} <= set(data["overhead"])
    assert 0 < data["overhead"]["service_p50_ms"] < data["overhead"]["http_p50_ms"]
    assert "3 clients (think 0 ms), 3 s:" in capsys.readouterr().out
