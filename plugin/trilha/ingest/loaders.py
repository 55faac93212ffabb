"""Loaders: Markdown (with optional front matter), plain text and JSONL into SourceDocuments.

JSONL rows are either BEIR corpus rows (``_id``, ``title``, ``text``) or trilha records
(``doc_id``, ``text`` and any F1 metadata field; unknown fields go to ``extra``).
Markdown and text files may start with a ``---`` YAML front matter block holding the same
metadata fields (a UTF-8 byte-order mark before it is dropped; a block that opens with a field
but never closes is refused, a lone leading ``---`` rule is text). Pages are marked with
``<!-- page: N -->`` lines or form feeds.

Loading never stops at a bad file: :func:`load_path` yields a :class:`Refusal` (the file, or
``file:line`` for JSONL, and one line saying what is wrong and what to do) in place of each
document it cannot read, and goes on with the rest.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from trilha.errors import BadRequestError
from trilha.ingest.reading import read_text

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
    "org_id",
    "project_id",
    "acl",
    "hierarchy_level",
    "created_at",
    "date",
    "source_ref",
)
SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".jsonl": "jsonl"}
#: The suffixes read, as refusals name them.
_READ = ", ".join(SUFFIXES)


class _FrontMatterLoader(yaml.SafeLoader):
    """YAML's safe loader, but dates stay text: trilha validates them itself, with a message
    that names the field (YAML would raise a bare ``month must be in 1..12``)."""


_FrontMatterLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class Piece(BaseModel):
    """A unit that arrived chunked (a LlamaIndex node from a node parser): indexed as it is."""

    unit_id: str = Field(min_length=1, description="The unit's id (the node's id), kept.")
    text: str = Field(description="The unit's text, not chunked again.")
    meta: dict[str, Any] = Field(
        default_factory=dict, description="Its own metadata, over the document's."
    )


class SourceDocument(BaseModel):
    """A whole document before chunking."""

    doc_id: str = Field(min_length=1, description="Stable document id.")
    text: str = Field(description="Body (Markdown or plain text).")
    source_type: str = Field("text", description="'markdown', 'text', 'jsonl' or 'beir'.")
    meta: dict[str, Any] = Field(default_factory=dict, description="F1 metadata and extras.")
    whole: bool = Field(False, description="Index as one unit, without chunking (BEIR).")
    origin: str | None = Field(
        None,
        description="The absolute path of the file it was loaded from; two files may not share "
        "a doc_id. None for documents built in code.",
    )
    line: int | None = Field(None, description="Line of the file (JSONL rows).")
    pieces: list[Piece] | None = Field(
        None,
        description="Units that arrived chunked, in order: one unit each, with its own id and "
        "metadata; ``text`` (their text joined) then only tells the language. None: trilha "
        "chunks ``text``.",
    )
    named_by_path: bool = Field(
        False,
        description="The doc_id is the file's path under the folder ingested (the file sets "
        "none): a file already held under another such id keeps that one.",
    )

    @property
    def where(self) -> str:
        """How refusals name this document: ``file``, ``file:line`` or ``doc_id``."""
        if self.origin is None:
            return f"document {self.doc_id!r}"
        return self.origin if self.line is None else f"{self.origin}:{self.line}"


@dataclass(frozen=True)
class Refusal:
    """A document (or file) that was not ingested, and why."""

    file: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"


Loaded = SourceDocument | Refusal


#: A text that opens with '---' and a ``key: value`` line: front matter, closed or not.
_FIELD_LINE = re.compile(r"---[ \t]*\r?\n[ \t]*[A-Za-z_][\w-]*[ \t]*:")


def split_front_matter(raw: str, origin: str) -> tuple[dict[str, Any], str]:
    """(front-matter dict, body) of a text starting with a ``---`` YAML block."""
    if not raw.startswith("---"):
        return {}, raw
    end = raw.find("\n---", 3)
    if end < 0:
        if _FIELD_LINE.match(raw):
            raise BadRequestError(
                f"{origin}: front matter opened with '---' is never closed; end it with a "
                "'---' line"
            )
        return {}, raw
    try:
        meta = yaml.load(raw[3:end], Loader=_FrontMatterLoader) or {}  # a SafeLoader
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or "syntax error"
        raise BadRequestError(
            f"{origin}: front matter is not valid YAML ({problem}{where}); fix the block "
            "between the '---' lines"
        ) from e
    if not isinstance(meta, dict):
        raise BadRequestError(f"{origin}: front matter must be a mapping of fields (key: value)")
    body = raw[end + 4 :]
    return meta, body.lstrip("\n")


def _doc_id(raw: Any, origin: str) -> str:
    if isinstance(raw, (list, tuple, set, dict, bool)):
        kind = "true/false" if isinstance(raw, bool) else f"a {type(raw).__name__}"
        raise BadRequestError(f"{origin}: doc_id is {kind}; give one text or number")
    doc_id = str(raw).strip() if raw is not None else ""
    if not doc_id:
        raise BadRequestError(f"{origin}: doc_id is empty; give the document an id or drop it")
    if any(ord(c) < 32 or ord(c) == 127 for c in doc_id):
        raise BadRequestError(f"{origin}: doc_id {doc_id!r} has control characters; remove them")
    return doc_id


def _file_document(path: Path, root: Path, source_type: str) -> SourceDocument:
    origin = str(path)
    meta, body = split_front_matter(read_text(path), origin)
    if not _encodable(meta):  # YAML's "\ud800" escapes
        raise BadRequestError(
            f"{origin}: front matter holds an unpaired surrogate escape; fix that string"
        )
    rel = path.relative_to(root) if path != root else Path(path.name)
    named_by_path = "doc_id" not in meta
    raw_id = rel.with_suffix("").as_posix() if named_by_path else meta.pop("doc_id")
    meta.setdefault("source_ref", origin)
    return SourceDocument(
        named_by_path=named_by_path,
        doc_id=_doc_id(raw_id, origin),
        text=body,
        source_type=source_type,
        meta=meta,
        origin=origin,
    )


def _jsonl_documents(path: Path) -> Iterator[Loaded]:
    try:
        lines = read_text(path).split("\n")
    except BadRequestError as e:
        yield Refusal(str(path), str(e).removeprefix(f"{path}: "))
        return
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{line_no}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            yield Refusal(where, f"not valid JSON ({e.msg}, column {e.colno})")
            continue
        if not isinstance(row, dict):
            yield Refusal(where, "each line must be a JSON object")
            continue
        if ("\\ud" in line or "\\uD" in line) and not _encodable(row):
            yield Refusal(where, "an unpaired surrogate escape (\\ud800-\\udfff); fix that string")
            continue
        try:
            yield _jsonl_row(row, where).model_copy(update={"origin": str(path), "line": line_no})
        except BadRequestError as e:
            yield Refusal(where, str(e).removeprefix(f"{where}: "))


def _jsonl_row(row: dict[str, Any], origin: str) -> SourceDocument:
    if "_id" in row:  # BEIR corpus row
        meta = row.get("metadata") or {}
        if not isinstance(meta, dict):
            raise BadRequestError(f"{origin}: 'metadata' must be a JSON object")
        meta = dict(meta)
        meta["title"] = row.get("title") or None
        return SourceDocument(
            doc_id=_doc_id(row["_id"], origin),
            text=_text(row.get("text", ""), origin),
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
        doc_id=_doc_id(row["doc_id"], origin),
        text=_text(row["text"], origin),
        source_type="jsonl",
        meta=meta,
    )


def _encodable(value: Any) -> bool:
    """Whether every string of ``value`` can be written as UTF-8 (no lone surrogate)."""
    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(value: Any, origin: str) -> str:
    if not isinstance(value, str):
        raise BadRequestError(f"{origin}: 'text' must be a string, not {type(value).__name__}")
    return value


def list_files(path: Path, exclude: Iterable[Path] = ()) -> list[Path]:
    """The files :func:`load_path` reads under ``path``, sorted; folders in ``exclude`` (the
    workspace itself, say) and hidden folders are skipped."""
    if not path.exists():
        raise BadRequestError(f"{path} does not exist; check the path")
    if not path.is_dir():
        return [path]
    skip = {p.resolve() for p in exclude}
    found: list[Path] = []
    for folder, dirs, names in os.walk(path):
        here = Path(folder)
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and (here / d).resolve() not in skip
        )
        found.extend(here / n for n in names if Path(n).suffix.lower() in SUFFIXES)
    return sorted(found)


def load_path(path: Path, exclude: Iterable[Path] = ()) -> Iterator[Loaded]:
    """Documents from a file or, recursively, a folder (by suffix: .md, .txt, .jsonl).

    Paths are resolved first, so ``corpus``, ``./corpus/`` and ``/abs/corpus`` give the same
    documents (ids relative to the folder, ``source_ref`` absolute). A file that cannot be read
    becomes a :class:`Refusal` and loading goes on."""
    path = Path(path).expanduser().resolve() if Path(path).exists() else Path(path)
    files = list_files(path, exclude)
    root = path if path.is_dir() else path.parent
    if path.is_dir() and not files:
        yield Refusal(str(path), f"no file to read here; trilha reads {_READ} files")
    for file in files:
        kind = SUFFIXES.get(file.suffix.lower())
        if kind is None:
            yield Refusal(str(file), "unsupported file type; use .md, .txt or .jsonl")
        elif kind == "jsonl":
            yield from _jsonl_documents(file)
        else:
            try:
                yield _file_document(file, root, kind)
            except BadRequestError as e:
                yield Refusal(str(file), str(e).removeprefix(f"{file}: "))
