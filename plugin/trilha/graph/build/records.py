"""Explicit graph records: nodes and edges given as data (JSONL or a JSON list).

One record per line (JSONL) or one element per list item (JSON)::

    {"kind": "node", "label": "Task", "id": "t1", "props": {"status": "late", "owner_id": "u1"}}
    {"kind": "node", "label": "Criterio", "id": "Dano moral", "props": {"peso": "alto"}}
    {"kind": "edge", "type": "BELONGS_TO", "source": "Task:t1", "target": "Project:p1"}
    {"kind": "edge", "type": "HAS_CRITERIO", "source": "Doc:r1", "target": "Criterio:Dano moral"}

Rules: ``label`` and ``type`` come from the model's allow-lists; ``source``/``target`` are
``"<Label>:<id>"`` (split at the first colon) with labels the relationship type accepts; ``props``
keys are identifiers (``id`` and ``origin`` are reserved) and values are scalars, lists of
scalars or null; per-label fields are type-checked (``hierarchy_level`` an int >= 0,
``salience``/``weight`` in 0–1, ``peso`` a number or alto/medio/baixo). Ids, the ids inside
references and ``props.name`` must hold some visible text and no control character (NUL, tab,
newline...); other string values may not hold NUL. For named labels (Entity, Category, Tag,
Criterio) the id is the name; ``props.name`` defaults to it. Every error names its line (JSONL)
or item (JSON), all of them at once, in one message, before anything is written.

A workspace also refuses records that would invent documents: a ``Doc`` or ``Chunk`` node or edge
end that the workspace does not hold (:func:`check_known`).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from trilha.errors import BadRequestError
from trilha.graph.model import (
    EDGE_SPECS,
    NODE_SPECS,
    EdgeProps,
    PropValue,
    check_label,
    check_prop_name,
    check_rel_type,
)

_RESERVED = frozenset({"id", "origin"})
_MAX_ERRORS = 20
_BAD_CATEGORIES = frozenset({"Cc", "Cs"})  # control characters, lone surrogates


class NodeRecord(BaseModel):
    """An explicit node."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["node"] = Field("node", description="Record kind.")
    label: str = Field(description="Node label from the model's allow-list.")
    id: str = Field(min_length=1, description="Node id (the name, for named labels).")
    props: dict[str, PropValue] = Field(default_factory=dict, description="Node properties.")


class EdgeRecord(BaseModel):
    """An explicit relationship between two nodes given as ``'<Label>:<id>'``."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["edge"] = Field("edge", description="Record kind.")
    type: str = Field(description="Relationship type from the model's allow-list.")
    source: str = Field(description="Start node, '<Label>:<id>'.")
    target: str = Field(description="End node, '<Label>:<id>'.")
    props: dict[str, PropValue] = Field(default_factory=dict, description="Edge properties.")

    def endpoints(self) -> tuple[tuple[str, str], tuple[str, str]]:
        """``((source_label, source_id), (target_label, target_id))``."""
        return split_ref(self.source), split_ref(self.target)


GraphRecord = Annotated[NodeRecord | EdgeRecord, Field(discriminator="kind")]
_ADAPTER: TypeAdapter[NodeRecord | EdgeRecord] = TypeAdapter(GraphRecord)


class RecordList(list[NodeRecord | EdgeRecord]):
    """Records in file order, with where each came from (``'line 3'``, ``'item 2'``)."""

    def __init__(self, items: Iterable[tuple[str, NodeRecord | EdgeRecord]] = ()) -> None:
        pairs = list(items)
        super().__init__(r for _, r in pairs)
        self.locations: list[str] = [where for where, _ in pairs]


def locate(records: Sequence[NodeRecord | EdgeRecord]) -> list[str]:
    """Where each record came from: a :class:`RecordList`'s locations, else ``'record N'``."""
    found = getattr(records, "locations", None)
    if isinstance(found, list) and len(found) == len(records):
        return [str(w) for w in found]
    return [f"record {i}" for i in range(1, len(records) + 1)]


def check_text(what: str, value: str) -> str:
    """``value`` when it holds visible text and no control character; else
    :class:`BadRequestError` naming ``what``."""
    for i, ch in enumerate(value):
        if unicodedata.category(ch) in _BAD_CATEGORIES:
            raise BadRequestError(
                f"{what} holds control character U+{ord(ch):04X} at position {i}; remove it"
            )
    if not value.strip():
        raise BadRequestError(f"{what} is empty; give it some visible text")
    return value


def split_ref(ref: str) -> tuple[str, str]:
    """``'Task:t1'`` → ``('Task', 't1')``; the label must be allowed and the id visible text
    without control characters."""
    label, sep, raw = ref.partition(":")
    if not sep or not raw:
        raise BadRequestError(f"node reference {ref!r} must look like '<Label>:<id>'")
    return check_label(label), check_text(f"the id of {label}", raw)


def _check_props(props: dict[str, Any], model: type[BaseModel]) -> None:
    for key in props:
        check_prop_name(key)
        if key in _RESERVED:
            raise BadRequestError(f"property {key!r} is reserved")
    try:
        model.model_validate(props)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BadRequestError(f"props.{where}: {first['msg']}") from e


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _storable(key: str, value: Any) -> None:
    """Strings the stores cannot hold: NUL (FalkorDB cuts its parameters there), surrogates."""
    for v in value if isinstance(value, list) else [value]:
        if isinstance(v, str) and any(c == "\x00" or "\ud800" <= c <= "\udfff" for c in v):
            raise BadRequestError(f"props.{key} holds a NUL or a lone surrogate; remove it")


def _check_values(data: Any) -> None:
    props = data.get("props") if isinstance(data, dict) else None
    if not isinstance(props, dict):
        return
    for key, value in props.items():
        if not (
            _scalar(value)
            or (isinstance(value, list) and all(_scalar(v) and v is not None for v in value))
        ):
            raise BadRequestError(f"props.{key}: values must be scalars or lists of scalars")
        _storable(str(key), value)
    if isinstance(props.get("name"), str):
        check_text("props.name", props["name"])


def validate_record(data: Any) -> NodeRecord | EdgeRecord:
    """Parse and check one record; raises :class:`BadRequestError` saying what is wrong."""
    _check_values(data)
    try:
        record = _ADAPTER.validate_python(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = [str(p) for p in first["loc"]]
        where = ".".join(loc[1:] if loc and loc[0] in ("node", "edge") else loc) or "record"
        raise BadRequestError(f"{where}: {first['msg']}") from e
    if isinstance(record, NodeRecord):
        check_text("id", record.id)
        _check_props(record.props, NODE_SPECS[check_label(record.label)].props)
        return record
    spec = EDGE_SPECS[check_rel_type(record.type)]
    (s_label, _), (t_label, _) = record.endpoints()
    if s_label not in spec.sources or t_label not in spec.targets:
        raise BadRequestError(
            f"{record.type} goes from {sorted(spec.sources)} to {sorted(spec.targets)}, "
            f"not from {s_label} to {t_label}"
        )
    _check_props(record.props, EdgeProps)
    return record


def refuse(errors: Sequence[str], what: str = "invalid graph records") -> None:
    """Raise one :class:`BadRequestError` listing ``errors`` on one line (if there are any)."""
    if errors:
        more = f" (and {len(errors) - _MAX_ERRORS} more)" if len(errors) > _MAX_ERRORS else ""
        raise BadRequestError(f"{what}: " + "; ".join(errors[:_MAX_ERRORS]) + more)


def parse_records(items: Iterable[tuple[str, Any]]) -> RecordList:
    """Validate ``(where, data)`` pairs; one :class:`BadRequestError` lists every bad one."""
    records: list[tuple[str, NodeRecord | EdgeRecord]] = []
    errors: list[str] = []
    for where, data in items:
        if isinstance(data, BadRequestError):
            errors.append(f"{where}: {data}")
            continue
        try:
            records.append((where, validate_record(data)))
        except BadRequestError as e:
            errors.append(f"{where}: {e}")
    refuse(errors)
    return RecordList(records)


def check_records(records: Sequence[NodeRecord | EdgeRecord]) -> None:
    """Validate records again (they may have been built in code, not parsed); one
    :class:`BadRequestError` lists every bad one."""
    errors = []
    for where, r in zip(locate(records), records, strict=True):
        try:
            validate_record(r.model_dump())
        except BadRequestError as e:
            errors.append(f"{where}: {e}")
    refuse(errors)


def _ends(r: NodeRecord | EdgeRecord) -> list[tuple[str, str, str]]:
    if isinstance(r, NodeRecord):
        return [("node", r.label, r.id)]
    (sl, si), (tl, ti) = r.endpoints()
    return [("source", sl, si), ("target", tl, ti)]


def check_known(
    records: Sequence[NodeRecord | EdgeRecord],
    known_docs: Collection[str] | None,
    known_units: Collection[str] | None,
) -> None:
    """Refuse records naming a Doc not in ``known_docs`` or a Chunk not in ``known_units``
    (None: not checked), so that no record invents a document; one error lists them all."""
    known = {"Doc": known_docs, "Chunk": known_units}
    what = {"Doc": "document", "Chunk": "unit"}
    errors = []
    for where, r in zip(locate(records), records, strict=True):
        for end, label, raw in _ends(r):
            ids = known.get(label)
            if ids is not None and raw not in ids:
                errors.append(
                    f"{where}: {end} {label}:{raw} is not a {what[label]} of this workspace "
                    "(ingest it first or fix the id)"
                )
    refuse(errors, "graph records refused")


def _jsonl_items(text: str) -> Iterable[tuple[str, Any]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield f"line {number}", json.loads(line)
        except json.JSONDecodeError as e:
            yield f"line {number}", BadRequestError(f"invalid JSON: {e.msg} at column {e.colno}")


def loads_records(text: str, *, jsonl: bool = True) -> RecordList:
    """Records from JSONL text (or, with ``jsonl=False``, a JSON list)."""
    if jsonl:
        return parse_records(_jsonl_items(text))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadRequestError(f"invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from e
    if not isinstance(data, list):
        raise BadRequestError("a JSON records file must hold a list of records")
    return parse_records((f"item {i}", d) for i, d in enumerate(data, start=1))


def load_records(path: Path) -> RecordList:
    """Records from a ``.jsonl`` file, or a ``.json`` file holding a list; errors name the
    file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise BadRequestError(f"{path}: not UTF-8 text (byte {e.start}); save it as UTF-8") from e
    except OSError as e:
        raise BadRequestError(f"{path}: cannot read the records file ({e.strerror})") from e
    try:
        return loads_records(text, jsonl=path.suffix.lower() != ".json")
    except BadRequestError as e:
        raise BadRequestError(f"{path}: {e}") from e


def dump_records(records: Iterable[NodeRecord | EdgeRecord], path: Path) -> None:
    """Write records as JSONL."""
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(r.model_dump_json() + "\n")
