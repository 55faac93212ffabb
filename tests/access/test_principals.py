"""principals.yaml, --user and --as-principal: who asks, from the CLI and files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trilha.access.directory import find_principal, load_principal_file, load_principals
from trilha.cli.main import main
from trilha.errors import BadRequestError


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_principals_file_loads_and_names_bad_keys(tmp_path: Path) -> None:
    good = _write(
        tmp_path / "p.yaml",
        "principals:\n  ana: {org_ids: [acme], clearance: 2}\n  bia: {}\n",
    )
    found = load_principals(good)
    assert found["ana"].user_id == "ana" and found["ana"].clearance == 2
    assert found["bia"].org_ids == []
    bad = _write(tmp_path / "bad.yaml", "principals:\n  ana: {clearence: 2}\n")
    with pytest.raises(BadRequestError, match=r"bad.yaml: principals.ana: clearence"):
        load_principals(bad)
    worse = _write(tmp_path / "worse.yaml", "principals: [ana]\n")
    with pytest.raises(BadRequestError, match="expected a 'principals:' mapping"):
        load_principals(worse)
    broken = _write(tmp_path / "broken.yaml", "principals:\n  ana: {org_ids: [acme\n")
    with pytest.raises(BadRequestError, match="not valid YAML at line"):
        load_principals(broken)


def test_unknown_user_and_missing_file_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(BadRequestError, match=r"has no principals\.yaml"):
        find_principal(tmp_path, "ana")
    _write(tmp_path / "principals.yaml", "principals:\n  ana: {}\n")
    with pytest.raises(BadRequestError, match=r"user 'zed' is not in .*known users: ana"):
        find_principal(tmp_path, "zed")
    assert find_principal(str(tmp_path), "ana").user_id == "ana"  # a folder named as text too
    as_file = _write(tmp_path / "me.json", json.dumps({"user_id": "me", "roles": ["it"]}))
    assert load_principal_file(as_file).roles == ["it"]


def test_cli_query_as_a_user(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "pub.md", "---\ndoc_id: pub\n---\nThe vpn guide for everyone.\n")
    _write(
        corpus / "memo.md",
        "---\ndoc_id: memo\nvisibility: org\norg_id: acme\nsensitivity: 1\n---\n"
        "The vpn budget memo for acme.\n",
    )
    ws = str(tmp_path / "ws")
    assert main(["ingest", "-q", "-w", ws, str(corpus)]) == 0
    _write(
        tmp_path / "ws" / "principals.yaml", "principals:\n  ana: {org_ids: [acme], clearance: 1}\n"
    )
    capsys.readouterr()

    def docs(*extra: str) -> set[str]:
        assert main(["query", "-w", ws, "vpn", "--json", *extra]) == 0
        return {h["unit"]["doc_id"] for h in json.loads(capsys.readouterr().out)["hits"]}

    assert docs() == {"pub"}
    assert docs("--user", "ana") == {"pub", "memo"}
    me = _write(tmp_path / "me.yaml", "user_id: x\norg_ids: [acme]\n")
    assert docs("--as-principal", str(me)) == {"pub"}  # clearance 0: the memo is sensitivity 1
    assert main(["query", "-w", ws, "vpn", "--user", "zed"]) == 2
    err = capsys.readouterr().err
    assert "user 'zed' is not in" in err and len(err.strip().splitlines()) == 1
    assert main(["query", "-w", ws, "vpn", "--user", "ana", "--as-principal", str(me)]) == 2
    assert "not both" in capsys.readouterr().err
