"""Chunking keeps page, section and heading; ids are stable."""

from __future__ import annotations

from pathlib import Path

import pytest

from trilha.errors import BadRequestError
from trilha.ingest.chunking import chunk_document, content_hash, index_text
from trilha.ingest.loaders import SourceDocument, load_path

MD = """---
doc_id: guide/x
title: Guia X
lang: pt
tags: [a, b]
setor: Operações
date: 2024-05-20
ministro: Silva
---
# Introdução
<!-- page: 1 -->
Primeiro parágrafo da introdução.

## 2.1 Prazos
Os prazos são de dez dias.
<!-- page: 2 -->
Continuação na página dois.

## Outro tópico
Texto final.
"""


def _doc(tmp_path: Path) -> SourceDocument:
    path = tmp_path / "x.md"
    path.write_text(MD, encoding="utf-8")
    return next(load_path(path))


def test_markdown_units_carry_citation_fields(tmp_path: Path) -> None:
    units = chunk_document(_doc(tmp_path))
    got = [(u.unit_id, u.page, u.section, u.heading) for u in units]
    assert got == [
        ("guide/x#0", 1, "1", "Introdução"),
        ("guide/x#1", 1, "2.1", "2.1 Prazos"),
        ("guide/x#2", 2, "2.1", "2.1 Prazos"),
        ("guide/x#3", 2, "1.2", "Outro tópico"),
    ]
    u = units[0]
    assert (u.doc_id, u.title, u.lang, u.tags, u.setor) == (
        "guide/x",
        "Guia X",
        "pt",
        ["a", "b"],
        "Operações",
    )
    assert u.extra == {"ministro": "SILVA"}
    assert u.payload()["date_num"] == 20240520
    assert index_text(units[1]).startswith("Guia X\n2.1 Prazos\n")


def test_chunking_is_deterministic(tmp_path: Path) -> None:
    a, b = chunk_document(_doc(tmp_path)), chunk_document(_doc(tmp_path))
    assert content_hash(a) == content_hash(b)


def test_long_paragraphs_split_under_max_words() -> None:
    text = " ".join(f"Frase número {i} termina aqui." for i in range(100))
    units = chunk_document(SourceDocument(doc_id="d", text=text), max_words=40)
    assert len(units) > 5
    assert all(len(u.text.split()) <= 40 for u in units)
    assert " ".join(u.text for u in units).split() == text.split()


def test_form_feed_pages_in_text() -> None:
    units = chunk_document(SourceDocument(doc_id="t", text="page one\fpage two\fthree"))
    assert [(u.text, u.page) for u in units] == [("page one", 1), ("page two", 2), ("three", 3)]


def test_jsonl_beir_and_trilha_records(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"_id": "b1", "title": "T", "text": "beir body"}\n'
        '{"doc_id": "r1", "text": "record body", "lang": "pt", "tema": "x",'
        ' "resultado": "provido"}\n',
        encoding="utf-8",
    )
    docs = list(load_path(path))
    assert [(d.doc_id, d.source_type, d.whole) for d in docs] == [
        ("b1", "beir", True),
        ("r1", "jsonl", False),
    ]
    unit = chunk_document(docs[1])[0]
    assert (unit.lang, unit.tema, unit.extra) == ("pt", "x", {"resultado": "provido"})


@pytest.mark.parametrize("content", ['{"text": "no id"}\n', "not json\n", "[1, 2]\n"])
def test_bad_jsonl_says_which_line(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"doc_id": "ok", "text": "fine"}\n' + content, encoding="utf-8")
    with pytest.raises(BadRequestError, match=r"bad\.jsonl:2"):
        list(load_path(path))


def test_unsupported_files_and_missing_paths(tmp_path: Path) -> None:
    (tmp_path / "x.pdf").write_bytes(b"%PDF")
    with pytest.raises(BadRequestError, match="unsupported"):
        list(load_path(tmp_path / "x.pdf"))
    with pytest.raises(BadRequestError, match="does not exist"):
        list(load_path(tmp_path / "nope"))


def test_bad_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "b.md"
    path.write_text("---\ntags: [unclosed\n---\nbody\n", encoding="utf-8")
    with pytest.raises(BadRequestError, match="front matter"):
        list(load_path(path))
