"""Loaders: Markdown (with optional front matter), plain text and JSONL into SourceDocuments.

JSONL rows are either BEIR corpus rows (``_id``, ``title``, ``text``) or trilha records
(``doc_id``, ``text`` and any F1 metadata field; unknown fields go to ``extra``).
Markdown and text files may start with a ``---`` YAML front matter block holding the same
metadata fields. Pages are marked with ``<!-- page: N -->`` lines or form feeds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from trilha.errors import BadRequestError

#: Metadata fields a source may set; anything else is kept in ``extra``.
UNIT_FIELDS = (
    "title",
    "tags",
    "setor",
    "tema",
    "lang",
    "sensitivity",
    "owner_id",
    "visibility",
    "hierarchy_level",
    "created_at",
    "date",
    "source_ref",
)
SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".jsonl": "jsonl"}


class SourceDocument(BaseModel):
    """A whole document before chunking."""

    doc_id: str = Field(min_length=1, description="Stable document id.")
    text: str = Field(description="Body (Markdown or plain text).")
    source_type: str = Field("text", description="'markdown', 'text', 'jsonl' or 'beir'.")
    meta: dict[str, Any] = Field(default_factory=dict, description="F1 metadata and extras.")
    whole: bool = Field(False, description="Index as one unit, without chunking (BEIR).")


def split_front_matter(raw: str, origin: str) -> tuple[dict[str, Any], str]:
    """(front-matter dict, body) of a text starting with a ``---`` YAML block."""
    if not raw.startswith("---"):
        return {}, raw
    end = raw.find("\n---", 3)
    if end < 0:
        return {}, raw
    try:
        meta = yaml.safe_load(raw[3:end]) or {}
    except yaml.YAMLError as e:
        raise BadRequestError(f"{origin}: front matter is not valid YAML: {e}") from e
    if not isinstance(meta, dict):
        raise BadRequestError(f"{origin}: front matter must be a mapping of fields")
    body = raw[end + 4 :]
    return meta, body.lstrip("\n")


def _file_document(path: Path, root: Path, source_type: str) -> SourceDocument:
    meta, body = split_front_matter(path.read_text(encoding="utf-8"), str(path))
    rel = path.relative_to(root) if path != root else Path(path.name)
    doc_id = str(meta.pop("doc_id", rel.with_suffix("").as_posix()))
    meta.setdefault("source_ref", str(path))
    return SourceDocument(doc_id=doc_id, text=body, source_type=source_type, meta=meta)


def _jsonl_documents(path: Path) -> Iterator[SourceDocument]:
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise BadRequestError(f"{path}:{line_no}: not valid JSON: {e.msg}") from e
            if not isinstance(row, dict):
                raise BadRequestError(f"{path}:{line_no}: each line must be a JSON object")
            yield _jsonl_row(row, f"{path}:{line_no}")


def _jsonl_row(row: dict[str, Any], origin: str) -> SourceDocument:
    if "_id" in row:  # BEIR corpus row
        meta = dict(row.get("metadata") or {})
        meta["title"] = row.get("title") or None
        return SourceDocument(
            doc_id=str(row["_id"]),
            text=str(row.get("text", "")),
            source_type="beir",
            meta=meta,
            whole=True,
        )
    if "doc_id" not in row or "text" not in row:
        raise BadRequestError(
            f"{origin}: a record needs 'doc_id' and 'text' (or BEIR's '_id', 'title', 'text')"
        )
    meta = {k: v for k, v in row.items() if k not in ("doc_id", "text")}
    return SourceDocument(
        doc_id=str(row["doc_id"]), text=str(row["text"]), source_type="jsonl", meta=meta
    )


def load_path(path: Path) -> Iterator[SourceDocument]:
    """Documents from a file or, recursively, a folder (by suffix: .md, .txt, .jsonl)."""
    if not path.exists():
        raise BadRequestError(f"{path} does not exist")
    files = (
        sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES)
        if path.is_dir()
        else [path]
    )
    root = path if path.is_dir() else path.parent
    for file in files:
        kind = SUFFIXES.get(file.suffix.lower())
        if kind is None:
            raise BadRequestError(f"{file}: unsupported file type; use .md, .txt or .jsonl")
        if kind == "jsonl":
            yield from _jsonl_documents(file)
        else:
            yield _file_document(file, root, kind)
