"""CLI manners: refusals with exit 2, ``ingest --json``, ``doctor``, read-only commands create
nothing, one-line errors, a closed pipe, and ``--json`` only where it changes the output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trilha.cli.main import main
from trilha.settings import TrilhaSettings
from trilha.types import TextUnit
from trilha.workspace import Workspace


def _corpus(folder: Path, n: int = 3) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"d{i}.md").write_text(f"# Doc {i}\n\nVPN access rule number {i}.\n")
    return folder


def test_ingest_json_reports_refusals_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = _corpus(tmp_path / "docs")
    (docs / "bad.md").write_text("---\ndate: yesterday\n---\nbody\n")
    (docs / "bin.txt").write_bytes(b"\x00\x01\x02")
    code = main(["ingest", "--json", "-w", str(tmp_path / "ws"), str(docs)])
    out, err = capsys.readouterr()
    assert code == 2
    summary = json.loads(out)
    assert {k: summary[k] for k in ("added", "updated", "unchanged", "units_written")} == {
        "added": 3,
        "updated": 0,
        "unchanged": 0,
        "units_written": 3,
    }
    assert summary["refused"] == [
        {
            "file": str((docs / "bad.md").resolve()),
            "reason": "date 'yesterday' is not a date; use YYYY-MM-DD",
        },
        {
            "file": str((docs / "bin.txt").resolve()),
            "reason": "binary file (NUL bytes); only UTF-8 text is ingested",
        },
    ]
    assert "Traceback" not in err


def test_ingest_text_lists_each_refusal_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = _corpus(tmp_path / "docs")
    (docs / "bad.jsonl").write_text('{"doc_id": "j", "text": "ok"}\nnot json\n')
    assert main(["ingest", "-q", "-w", str(tmp_path / "ws"), str(docs)]) == 2
    out, err = capsys.readouterr()
    assert "4 added" in out and "1 refused" in out
    assert f"refused {(docs / 'bad.jsonl').resolve()}:2: not valid JSON" in err
    assert err.strip().endswith("1 refused (see above); fix them and ingest again")


def test_doctor_compares_and_repairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws_dir = tmp_path / "ws"
    assert main(["ingest", "-q", "-w", str(ws_dir), str(_corpus(tmp_path / "docs"))]) == 0
    assert main(["doctor", "-w", str(ws_dir)]) == 0
    assert "consistent" in capsys.readouterr().out
    with Workspace.open(ws_dir, TrilhaSettings(), repair=False, create=True) as ws:
        ghost = TextUnit(unit_id="ghost#0", doc_id="ghost", text="orphan")
        ws.dense.upsert([ghost], ws.embedder.encode_documents(["orphan"]))
    assert main(["doctor", "--json", "-w", str(ws_dir)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["consistent"] is False
    assert report["before"]["dense"]["orphans"] == ["ghost#0"]
    assert report["before"]["units"] == 3 and report["before"]["graph"]["count"] == 3
    assert main(["doctor", "--repair", "-q", "-w", str(ws_dir)]) == 0
    out = capsys.readouterr().out
    assert "orphan ghost#0" in out and "after repair: consistent" in out
    assert main(["doctor", "-w", str(ws_dir)]) == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["query", "anything"],
        ["doctor"],
        ["graph", "topn", "--entity", "X"],
    ],
)
def test_read_only_commands_on_a_mistyped_path_create_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    typo = tmp_path / "tpyo"
    assert main([*argv, "-w", str(typo)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"no trilha workspace at {typo}" in err
    assert not typo.exists()


def test_settings_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRILHA_TOP_K", "-3")
    assert main(["query", "x", "-w", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == "trilha query: error: invalid settings: top_k: input should be greater than 0\n"


@pytest.mark.parametrize(
    ("op", "has_json"),
    [
        ("subgraph", True),
        ("path", True),
        ("topn", True),
        ("mermaid", False),
        ("png", False),
        ("context", False),
        ("records", False),
    ],
)
def test_json_flag_only_where_it_changes_the_output(
    op: str, has_json: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["graph", op, "--help"])
    assert ("--json" in capsys.readouterr().out) is has_json


def test_a_closed_pipe_exits_quietly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(24):  # 24 hits of 900 words: some 150 kB of JSON, more than a pipe holds
        (docs / f"d{i}.md").write_text(f"# Doc {i}\n\n" + "VPN access rule. " * 300)
    env = {**os.environ, "TRILHA_GRAPH_BACKEND": "none"}
    ws = str(tmp_path / "ws")
    monkeypatch.setenv("TRILHA_GRAPH_BACKEND", "none")
    # one unit a document: 24 to encode, not 200 (the pipe is the query's)
    assert main(["ingest", "-q", "-w", ws, str(docs), "--max-words", "900"]) == 0
    cli = [sys.executable, "-m", "trilha.cli.main"]
    # read whole, the output of a command that ends at once (run: no teardown) is all there
    whole = subprocess.run(
        [*cli, "query", "VPN access", "-k", "80", "--json", "-w", ws],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert whole.returncode == 0 and len(json.loads(whole.stdout)["hits"]) == 24
    proc = subprocess.Popen(
        [*cli, "query", "VPN access", "-k", "80", "--json", "-w", ws],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(100)
    proc.stdout.close()  # what `| head -c 100` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_mistakes_found_by_a_new_user_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fresh = tmp_path / "fresh-ws"
    assert main(["ingest", "-q", "-w", str(fresh), str(tmp_path / "no-such-docs")]) == 2
    assert "no-such-docs does not exist" in capsys.readouterr().err
    assert not fresh.exists()  # a wrong path does not leave a workspace behind
    ws = str(tmp_path / "ws")
    assert main(["ingest", "-q", "-w", ws, str(_corpus(tmp_path / "docs"))]) == 0
    capsys.readouterr()
    for argv, says in (
        (["query", "vpn", "-k", "0"], "invalid search request: top_k: input should be greater"),
        (["query", "vpn", "--tags", ""], "tags"),
        (["ingest", "--delete", "nope-doc"], "no document 'nope-doc' in workspace"),
        (["graph", "subgraph", "NOPE"], "no document 'NOPE' in workspace"),
        (["graph", "mermaid", "NOPE"], "no document 'NOPE' in workspace"),
        (["ingest", str(tmp_path / "docs"), "--max-words", "0"], "--max-words must be at least"),
        (["ingest", str(tmp_path / "docs"), "--lang", "zz"], "'zz' is not a language code"),
        (["query", "vpn", "--user", ""], "--user is empty"),
        (["query", "vpn", "--setor", " "], "--setor is empty; give a value or leave"),
        (["query", "vpn", "--tipos-recurso", ","], "tipos_recurso: an empty list matches"),
        (["query", " "], "the query is empty"),
        (["ask", " "], "the question is empty"),
        (["ask", "vpn " * 1001], "shorten it to 4000 or less"),
        (["query", "vpn " * 5001], "the query has 20004 characters; shorten it to 20000"),
        (["context", "vpn " * 1001, "--user", "ana"], "at most 4000 characters"),
        (["query", "vpn", "--lang", " "], "is not a language code"),
        (["query", "vpn", "--lang", "pt-!!"], "is not a language code"),
        (["query", "vpn", "--date-from", ""], "an empty date matches nothing"),
        (
            ["query", "vpn", "--date-from", "2024-01-01", "--date-to", "2020-01-01"],
            "invalid filters: data_inicio",
        ),
    ):
        assert main([*argv, "-w", ws]) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err and "pydantic" not in err, (argv, err)
    assert main(["query", "vpn", "-w", ""]) == 2
    assert "--workspace is empty" in capsys.readouterr().err
    # a language code in capitals is written as documents' codes are, not refused
    found = []
    for code in ("EN", "en"):
        assert main(["query", "vpn", "-w", ws, "--lang", code, "--json"]) == 0
        found.append([h["unit"]["unit_id"] for h in json.loads(capsys.readouterr().out)["hits"]])
    assert found[0] == found[1] != []


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["query", "-k", "abc", "x"], "trilha query: error: argument -k: 'abc' is not an integer"),
        (["ask", "--backend", "bogus", "x"], "trilha ask: error: argument --backend"),
        (["query"], "trilha query: error: the following arguments are required: query"),
        (["query", "x", "--bogus"], "trilha query: error: unrecognized arguments: --bogus"),
    ],
)
def test_usage_errors_are_one_line_naming_the_command(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(says) and "--help)" in err, err
