"""Integer and number options take plain digits: ``true``, ``1_0``, `` 5``, other scripts'
digits, ``nan`` or ``inf`` are refused in one line naming the option, with exit 2, before any
workspace is opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from trilha.cli.main import main
from trilha.encode.sentence_transformers import SentenceTransformerEmbedder
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace

REFUSED = [
    (["query", "x", "-k", "true"], "-k"),
    (["query", "x", "-k", "1_0"], "-k"),
    (["query", "x", "-k", " 5"], "-k"),
    (["query", "x", "--max-sensitivity", "\u0663"], "--max-sensitivity"),  # Arabic-Indic 3
    (["graph", "topn", "--limit", "True"], "--limit"),
    (["features", "--limit", "5.0"], "--limit"),
    (["load", "--duration", "nan"], "--duration"),
    (["load", "--duration", "inf"], "--duration"),
]


@pytest.mark.parametrize("argv,option", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_loose_numbers_are_refused_naming_the_option(
    argv: list[str], option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*argv, "-w", str(tmp_path / "none")])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"argument {option}" in err, err


def test_plain_numbers_still_parse() -> None:
    from trilha.cli.main import build_parser

    args = build_parser().parse_args(["load", "--duration", "1.5e1", "--clients", "-3"])
    assert (args.duration, args.clients) == (15.0, -3)
    assert build_parser().parse_args(["query", "x", "-k", "+7"]).k == 7


def test_an_unknown_agent_is_refused_naming_the_known_ones(
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TRILHA_GRAPH_BACKEND", "none")
    folder = tmp_path / "ws"
    settings = TrilhaSettings(graph_backend="none")
    Workspace.open(folder, settings, embedder=embedder, create=True).close()
    (folder / "principals.yaml").write_text("principals:\n  ana: {clearance: 1}\n", "utf-8")
    argv = ["context", "budget?", "--user", "ana", "-w", str(folder), "--agent"]
    assert main([*argv, "nosuch"]) == 2
    line = capsys.readouterr().err
    assert line.startswith("trilha context: error: --agent 'nosuch'") and line.count("\n") == 1
    assert "knowledge, task, user" in line
