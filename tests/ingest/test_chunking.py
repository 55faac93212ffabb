"""Chunking keeps page, section and heading; ids are stable."""

from __future__ import annotations

from pathlib import Path

import pytest

from trilha.errors import BadRequestError
from trilha.ingest.chunking import CHARS_PER_WORD, chunk_document, content_hash, index_text
from trilha.ingest.loaders import Refusal, SourceDocument, load_path, split_front_matter

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


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"text": "no id"}\n', "needs 'doc_id'"),
        ("not json\n", "not valid JSON"),
        ("[1, 2]\n", "JSON object"),
        ('{"doc_id": "  ", "text": "x"}\n', "doc_id is empty"),
        ('{"doc_id": "a\\u0000b", "text": "x"}\n', "control characters"),
        ('{"doc_id": "n", "text": 5}\n', "'text' must be a string"),
    ],
)
def test_bad_jsonl_line_is_refused_and_the_rest_loaded(
    tmp_path: Path, content: str, reason: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"doc_id": "ok", "text": "fine"}\n' + content + '{"doc_id": "ok2", "text": "x"}\n',
        encoding="utf-8",
    )
    loaded = list(load_path(path))
    assert [d.doc_id for d in loaded if isinstance(d, SourceDocument)] == ["ok", "ok2"]
    (refusal,) = [r for r in loaded if isinstance(r, Refusal)]
    assert refusal.file == f"{path}:2" and reason in refusal.reason
    assert "\n" not in str(refusal)


def test_unsupported_files_and_missing_paths(tmp_path: Path) -> None:
    (tmp_path / "x.pdf").write_bytes(b"%PDF")
    (refusal,) = load_path(tmp_path / "x.pdf")
    assert isinstance(refusal, Refusal) and "unsupported" in refusal.reason
    with pytest.raises(BadRequestError, match="does not exist"):
        list(load_path(tmp_path / "nope"))


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"---\ntags: [unclosed\n---\nbody\n", "front matter is not valid YAML"),
        (b"---\n- a list\n---\nbody\n", "mapping of fields"),
        (b"---\ndoc_id: ''\n---\nbody\n", "doc_id is empty"),
        (b"---\ndoc_id: [a, b]\n---\nbody\n", "doc_id is a list; give one text or number"),
        (b"---\ndoc_id: true\n---\nbody\n", "doc_id is true/false"),
        (b"---\ndoc_id: x\ntitle: never closed\nbody\n", "front matter opened with '---' is never"),
        (b"caf\xe9 au lait\n", "not UTF-8 (byte 0xe9 on line 1)"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "binary file"),
    ],
)
def test_unreadable_files_are_refused_in_one_line(tmp_path: Path, raw: bytes, reason: str) -> None:
    (tmp_path / "good.md").write_text("fine", encoding="utf-8")
    (tmp_path / "b.md").write_bytes(raw)
    loaded = list(load_path(tmp_path))
    refusals = [r for r in loaded if isinstance(r, Refusal)]
    assert [d.doc_id for d in loaded if isinstance(d, SourceDocument)] == ["good"]
    assert len(refusals) == 1 and refusals[0].file == str((tmp_path / "b.md").resolve())
    assert reason in refusals[0].reason and "\n" not in refusals[0].reason


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ("date: yesterday", "date 'yesterday' is not a date; use YYYY-MM-DD"),
        ("created_at: 2024-13-45", "created_at '2024-13-45' is not a date; use YYYY-MM-DD"),
        ("sensitivity: high", "sensitivity: input should be a valid integer"),
        ("sensitivity: -1", "sensitivity: input should be greater than or equal to 0"),
        ("hierarchy_level: chefe", "hierarchy_level: input should be a valid integer"),
        ("hierarchy_level: true", "hierarchy_level: input should be a valid integer"),
        ("sensitivity: false", "sensitivity: input should be a valid integer"),
        ("visibility: everyone", "visibility 'everyone' is not one of public, org"),
        ("tags: {a: 1}", "tags: input should be a valid list"),
    ],
)
def test_bad_metadata_names_the_field(front: str, message: str) -> None:
    meta, _ = split_front_matter(f"---\n{front}\n---\nbody", "x.md")
    doc = SourceDocument(doc_id="x", text="body", meta=meta)
    with pytest.raises(BadRequestError) as info:
        chunk_document(doc)
    assert str(info.value).startswith(message)


def test_text_without_spaces_is_cut_into_bounded_units() -> None:
    doc = SourceDocument(doc_id="blob", text="x" * 50_000)
    units = chunk_document(doc, max_words=100)
    assert len(units) == 50_000 // (100 * CHARS_PER_WORD) + 1
    assert max(len(u.text) for u in units) <= 100 * CHARS_PER_WORD
    assert "".join(u.text.replace(" ", "").replace("\n", "") for u in units) == "x" * 50_000


def test_chinese_sentences_are_cut_at_sentence_ends() -> None:
    sentence = "图数据库用于存储实体和关系。"
    doc = SourceDocument(doc_id="zh", text=sentence * 300, meta={"lang": "zh"})
    units = chunk_document(doc, max_words=50)
    assert len(units) > 1 and all(len(u.text) <= 50 * CHARS_PER_WORD for u in units)
    assert all(u.text.rstrip().endswith("。") for u in units)


def test_a_utf8_bom_does_not_hide_the_front_matter(tmp_path: Path) -> None:
    (tmp_path / "bom.md").write_bytes(
        b"\xef\xbb\xbf---\ndoc_id: bom\ntitle: T\n---\nBOM text here."
    )
    (doc,) = list(load_path(tmp_path))
    assert isinstance(doc, SourceDocument)
    assert (doc.doc_id, doc.text, doc.meta.get("title")) == ("bom", "BOM text here.", "T")


def test_a_leading_rule_without_fields_is_text() -> None:
    assert split_front_matter("---\nJust a rule, then prose.", "x.md") == (
        {},
        "---\nJust a rule, then prose.",
    )
