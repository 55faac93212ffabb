"""Cut a document into TextUnits that keep page, section and heading.

Markdown headings open sections (numbered ``1``, ``1.2``... unless the heading starts with its own
number); ``<!-- page: N -->`` lines and form feeds move to a new page; paragraphs are packed into
units of at most ``max_words`` words and ``7 × max_words`` characters (a longer paragraph is split
on sentence ends, then between words, then inside a word). Units never
straddle a heading or a page break, so their citation is exact.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from pydantic import ValidationError

from trilha.errors import BadRequestError, one_line
from trilha.index.filters import fold_case
from trilha.index.language import document_language, written_code
from trilha.ingest.loaders import UNIT_FIELDS, SourceDocument
from trilha.types import TextUnit

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_PAGE = re.compile(r"^\s*<!--\s*page:?\s*(\d+)\s*-->\s*$", re.IGNORECASE)
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)[.)]?\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])")
#: A unit holds at most ``max_words`` words and ``max_words * CHARS_PER_WORD`` characters, so
#: text without spaces (CJK, a dump of base64) is still cut into bounded units.
CHARS_PER_WORD = 7


@dataclass
class _Block:
    text: str
    page: int | None
    section: str | None
    heading: str | None


@dataclass
class _Cursor:
    page: int | None = None
    counters: list[int] = field(default_factory=lambda: [0] * 6)
    section: str | None = None
    heading: str | None = None

    def open_heading(self, level: int, text: str) -> None:
        self.counters[level - 1] += 1
        for i in range(level, 6):
            self.counters[i] = 0
        numbered = _NUMBERED.match(text)
        if numbered:
            self.section = numbered.group(1)
        else:
            first = next((i for i, c in enumerate(self.counters) if c), level - 1)
            self.section = ".".join(str(c) for c in self.counters[first:level])
        self.heading = text


def _blocks(text: str, markdown: bool) -> Iterator[_Block]:
    has_pages = "\f" in text or any(_PAGE.match(line) for line in text.split("\n"))
    cur = _Cursor(page=1 if has_pages else None)
    para: list[str] = []

    def flush() -> Iterator[_Block]:
        body = " ".join(line.strip() for line in para).strip()
        para.clear()
        if body:
            yield _Block(body, cur.page, cur.section, cur.heading)

    for raw_line in text.replace("\r\n", "\n").split("\n"):  # splitlines() eats \f
        for i, line in enumerate(raw_line.split("\f")):
            if i > 0:
                yield from flush()
                cur.page = (cur.page or 1) + 1
            page = _PAGE.match(line)
            heading = _HEADING.match(line) if markdown else None
            if page:
                yield from flush()
                cur.page = int(page.group(1))
            elif heading:
                yield from flush()
                cur.open_heading(len(heading.group(1)), heading.group(2))
            elif not line.strip():
                yield from flush()
            else:
                para.append(line)
    yield from flush()


def _chars(words: list[str]) -> int:
    return sum(map(len, words)) + max(len(words) - 1, 0)


def _words(sentence: str, max_chars: int) -> list[str]:
    """Whitespace words, a word longer than ``max_chars`` (text without spaces) cut in slices."""
    out: list[str] = []
    for w in sentence.split():
        out.extend(w[i : i + max_chars] for i in range(0, len(w), max_chars))
    return out


def _split_long(text: str, max_words: int, max_chars: int) -> list[str]:
    """Pieces of at most ``max_words`` words and ``max_chars`` characters, cut at sentence ends
    where possible, else between words, else (a text without spaces) inside a word."""
    if len(text) <= max_chars and len(text.split()) <= max_words:
        return [text]
    pieces: list[str] = []
    current: list[str] = []

    def fits(words: list[str]) -> bool:
        return len(words) <= max_words and _chars(words) <= max_chars

    for sentence in _SENTENCE_END.split(text):
        sw = _words(sentence, max_chars)
        if current and not fits(current + sw):
            pieces.append(" ".join(current))
            current = []
        for word in sw:  # a sentence longer than a unit: packed word by word
            if current and not fits([*current, word]):
                pieces.append(" ".join(current))
                current = []
            current.append(word)
    if current:
        pieces.append(" ".join(current))
    return pieces


def _packed(blocks: Iterator[_Block], max_words: int) -> Iterator[_Block]:
    max_chars = max_words * CHARS_PER_WORD
    pending: _Block | None = None
    for block in blocks:
        for piece in _split_long(block.text, max_words, max_chars):
            b = _Block(piece, block.page, block.section, block.heading)
            if (
                pending is not None
                and (pending.page, pending.section) == (b.page, b.section)
                and len(pending.text.split()) + len(piece.split()) <= max_words
                and len(pending.text) + 1 + len(piece) <= max_chars
            ):
                pending = _Block(
                    pending.text + "\n" + piece, pending.page, pending.section, pending.heading
                )
            else:
                if pending is not None:
                    yield pending
                pending = b
    if pending is not None:
        yield pending


#: Fields a source cannot set: trilha derives them (ids, positions, the stored date).
_DERIVED = (set(TextUnit.model_fields) - set(UNIT_FIELDS)) | {"date_num"}


def _unit_fields(
    doc: SourceDocument, defaults: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    known: dict[str, Any] = dict(defaults)
    extra: dict[str, Any] = {}
    for key, value in doc.meta.items():
        if key in UNIT_FIELDS:
            known[key] = value
        elif key not in _DERIVED:
            extra[key] = value
    if isinstance(known.get("tags"), str):
        known["tags"] = [t.strip() for t in known["tags"].split(",") if t.strip()]
    for key in ("created_at", "date"):
        if key in known and known[key] is not None and not isinstance(known[key], str):
            known[key] = str(known[key])
    for key, value in list(extra.items()):
        if isinstance(value, dict):
            extra[key] = json.dumps(value, sort_keys=True, default=str)
        elif isinstance(value, date | datetime):
            extra[key] = value.isoformat()
        elif isinstance(value, list):
            extra[key] = [str(v) for v in value]
        extra[key] = fold_case(key, extra[key])  # stored as filters compare it (ministro)
    return known, extra


#: The smallest ``max_words`` a unit may have.
MIN_WORDS = 20


def _language(known: Mapping[str, Any], text: str, langs: Mapping[str, int]) -> str:
    """The ``lang`` the document or the ingest gives, written as the detector writes codes;
    else the detected one, or the collection's most frequent language (``langs``' top) when
    the detector is unsure (:func:`~trilha.index.language.document_language`)."""
    if known.get("lang"):
        return written_code(known["lang"])
    main = max(langs, key=langs.__getitem__) if langs else None
    return document_language(f"{known.get('title') or ''}\n{text}", main)


def chunk_document(
    doc: SourceDocument,
    max_words: int = 180,
    defaults: Mapping[str, Any] | None = None,
    langs: Mapping[str, int] | None = None,
) -> list[TextUnit]:
    """TextUnits of a document, with ids ``<doc_id>#<ordinal>``. ``defaults`` give unit fields
    (the workspace's access defaults, the language an ingest forces) that the document's own
    metadata overrides; a document whose language neither sets is detected (:func:`_language`;
    ``langs``: how many units of the collection each language has)."""
    if max_words < MIN_WORDS:
        raise BadRequestError(f"max_words must be at least {MIN_WORDS}")
    known, extra = _unit_fields(doc, defaults or {})
    known["lang"] = _language(known, doc.text, langs or {})
    base = dict(known, doc_id=doc.doc_id, source_type=doc.source_type, extra=extra)
    try:  # the metadata is checked once, even for a document with no text
        TextUnit(unit_id=f"{doc.doc_id}#0", text="", **base)
    except ValidationError as e:
        raise BadRequestError(one_line(e)) from e
    if doc.pieces is not None:
        return _piece_units(doc, base, defaults or {})
    if doc.whole:
        body = doc.text.strip()
        blocks: list[_Block] = (
            [_Block(body, None, None, None)] if body or known.get("title") else []
        )
    else:
        blocks = list(_packed(_blocks(doc.text, doc.source_type == "markdown"), max_words))
    return [
        TextUnit(
            unit_id=f"{doc.doc_id}#{i}",
            ordinal=i,
            text=b.text,
            page=b.page,
            section=b.section,
            heading=b.heading,
            **base,
        )
        for i, b in enumerate(blocks)
    ]


def _piece_units(
    doc: SourceDocument, base: dict[str, Any], defaults: Mapping[str, Any]
) -> list[TextUnit]:
    """One unit per piece that arrived chunked, under its own id, its metadata over the
    document's and checked as the document's is; pieces without text are dropped."""
    assert doc.pieces is not None
    units: list[TextUnit] = []
    for piece in (p for p in doc.pieces if p.text.strip()):
        own = doc.model_copy(update={"meta": {**doc.meta, **piece.meta}})
        known, extra = _unit_fields(own, defaults)
        known["lang"] = written_code(known["lang"]) if known.get("lang") else base["lang"]
        fields = dict(base, **known, extra=extra)
        try:
            units.append(
                TextUnit(unit_id=piece.unit_id, ordinal=len(units), text=piece.text, **fields)
            )
        except ValidationError as e:
            raise BadRequestError(f"node {piece.unit_id!r}: {one_line(e)}") from e
    return units


def index_text(unit: TextUnit) -> str:
    """What is embedded and BM25-tokenised: title, heading (when new) and text."""
    parts = [unit.title or ""]
    if unit.heading and unit.heading != unit.title:
        parts.append(unit.heading)
    parts.append(unit.text)
    return "\n".join(p for p in parts if p)


def content_hash(units: list[TextUnit]) -> str:
    """Fingerprint of a document's units (text and metadata)."""
    h = hashlib.sha256()
    for u in units:
        h.update(u.model_dump_json().encode())
    return h.hexdigest()
