"""The BEIR loader: what it reads and the errors that say what is missing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from trilha.errors import BadRequestError
from trilha.eval.beir import load_beir


def _write(
    folder: Path, corpus: bool = True, queries: bool = True, qrels: str | None = None
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if corpus:
        rows = [{"_id": "d1", "title": "T", "text": "alpha"}, {"_id": "d2", "text": "beta"}]
        (folder / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    if queries:
        rows = [{"_id": "10", "text": "ten"}, {"_id": "2", "text": "two"}]
        (folder / "queries.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    if qrels is not None:
        (folder / "qrels").mkdir(exist_ok=True)
        (folder / "qrels" / "test.tsv").write_text(qrels)
    return folder


QRELS = "query-id\tcorpus-id\tscore\n10\td1\t1\n2\td2\t2\n"


def test_loads_queries_in_natural_order_and_skips_the_header(tmp_path: Path) -> None:
    ds = load_beir(_write(tmp_path / "mini", qrels=QRELS))
    assert ds.name == "mini"
    assert [q.query_id for q in ds.queries] == ["2", "10"]
    assert ds.qrels == {"10": {"d1": 1}, "2": {"d2": 2}}
    assert ds.corpus_size() == 2
    docs = list(ds.documents())
    assert [d.doc_id for d in docs] == ["d1", "d2"]
    assert docs[0].meta["title"] == "T" and docs[1].meta["title"] is None


@pytest.mark.parametrize(
    ("kwargs", "missing"),
    [
        ({"corpus": False, "qrels": QRELS}, "corpus.jsonl"),
        ({"queries": False, "qrels": QRELS}, "queries.jsonl"),
        ({"qrels": None}, "qrels/test.tsv"),
    ],
)
def test_a_missing_file_is_named(tmp_path: Path, kwargs: dict[str, object], missing: str) -> None:
    folder = _write(tmp_path / "bad", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(BadRequestError, match=re.escape(f"{missing} is missing")):
        load_beir(folder)


def test_a_split_without_known_queries_is_an_error(tmp_path: Path) -> None:
    folder = _write(tmp_path / "orphan", qrels="99\td1\t1\n")
    with pytest.raises(BadRequestError, match=r"no query of qrels/test\.tsv"):
        load_beir(folder)


def test_another_split_is_looked_up_by_name(tmp_path: Path) -> None:
    folder = _write(tmp_path / "split", qrels=QRELS)
    with pytest.raises(BadRequestError, match=r"qrels/train\.tsv is missing"):
        load_beir(folder, split="train")
