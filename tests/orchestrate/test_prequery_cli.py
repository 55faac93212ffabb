"""``trilha prequery``: one question as lines or JSON, the labelled-set evaluation, the LLM when
a key is configured, and named graph nodes with ``--workspace``/``--user``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trilha.cli.main import main
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.settings import TrilhaSettings
from trilha.testing.groq_server import GroqTestServer, json_reply
from trilha.workspace import Workspace

NOW = "2025-06-11T09:30:00-03:00"
LABELLED = Path(__file__).with_name("prequery_labelled.jsonl")


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GROQ_API_KEY", "TRILHA_GROQ_API_KEY", "TRILHA_GROQ_BASE_URL", "TRILHA_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["prequery", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_of_one_question(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "O que deveríamos priorizar esta semana?", "--json", "--now", NOW)
    data = json.loads(out)
    assert code == 0 and data["retrieval_intent"] == "strategic"
    assert data["time_horizon"] == {"name": "this_week", "start": "2025-06-09", "end": "2025-06-15"}
    assert data["classifier"] == "heuristic" and data["trace"][0]["step"] == "heuristic"


def test_human_lines(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "Which tasks are overdue?", "--now", NOW)
    assert code == 0
    assert out.splitlines()[:3] == [
        "intent: procedural (heuristic, confidence 1.00)",
        "focus: Task",
        "time horizon: all_time",
    ]


def test_eval_prints_accuracy_per_intent_and_split(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--eval", str(LABELLED), "--json")
    data = json.loads(out)
    assert code == 0 and set(data) >= {"all", "holdout", "tune"}
    assert data["all"]["overall"]["total"] >= 120
    assert all(a["correct"] / a["total"] >= 0.9 for a in data["all"]["per_intent"].values())
    code, out, _ = run(capsys, "--eval", str(LABELLED))
    assert "[holdout]" in out and "  strategic " in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "give the question TEXT or --eval FILE"),
        (("x", "--eval", "f.jsonl"), "give the question TEXT or --eval FILE"),
        (("x", "--now", "yesterday"), "--now 'yesterday' is not an ISO date/time"),
        (("--eval", "missing.jsonl"), "missing.jsonl: cannot read the labelled file"),
        (("  ",), "the question is empty"),
    ],
)
def test_errors_are_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_the_llm_runs_when_a_key_is_configured(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = {"retrieval_intent": "organizational", "time_horizon": "next_30d"}
    with GroqTestServer(lambda request: json_reply(answer)) as server:
        monkeypatch.setenv("TRILHA_GROQ_API_KEY", "test")
        monkeypatch.setenv("TRILHA_GROQ_BASE_URL", server.base_url)
        _, out, _ = run(capsys, "Which tasks are overdue?", "--json", "--now", NOW)
        data = json.loads(out)
        assert (data["classifier"], data["retrieval_intent"]) == ("llm", "organizational")
        assert data["time_horizon"]["end"] == "2025-07-11"
        _, out, _ = run(capsys, "Which tasks are overdue?", "--json", "--no-llm")
        assert json.loads(out)["classifier"] == "heuristic"
        assert len(server.requests) == 1


def test_named_nodes_only_those_the_user_sees(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    folder = tmp_path / "ws"
    records = tmp_path / "records.jsonl"
    records.write_text(
        json.dumps({"kind": "node", "label": "Project", "id": "p-atlas", "props": {
            "title": "Atlas", "visibility": "private", "owner_id": "ana"}}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    with Workspace.open(folder, TrilhaSettings(), embedder=embedder, create=True) as ws:
        ws.ingest_records(records)
    (folder / "principals.yaml").write_text("principals:\n  ana: {}\n  bob: {}\n")
    question = "Quais tarefas do projeto Atlas estão atrasadas?"
    for user, expected in (("ana", ["Project:p-atlas", None]), ("bob", [None, None])):
        code, out, _ = run(capsys, question, "-w", str(folder), "--user", user, "--json")
        focus = [e["node_id"] for e in json.loads(out)["focus_entities"]]
        assert code == 0 and focus == expected, user
