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
``salience``/``weight`` in 0–1, ``peso`` a number or alto/medio/baixo). For named labels (Entity,
Category, Tag, Criterio) the id is the name; ``props.name`` defaults to it. Every error names its
line (JSONL) or item (JSON), all of them at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
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


def split_ref(ref: str) -> tuple[str, str]:
    """``'Task:t1'`` → ``('Task', 't1')``; the label must be allowed and the id non-empty."""
    label, sep, raw = ref.partition(":")
    if not sep or not raw:
        raise BadRequestError(f"node reference {ref!r} must look like '<Label>:<id>'")
    return check_label(label), raw


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


def parse_records(items: Iterable[tuple[str, Any]]) -> list[NodeRecord | EdgeRecord]:
    """Validate ``(where, data)`` pairs; one :class:`BadRequestError` lists every bad one."""
    records: list[NodeRecord | EdgeRecord] = []
    errors: list[str] = []
    for where, data in items:
        if isinstance(data, BadRequestError):
            errors.append(f"{where}: {data}")
            continue
        try:
            records.append(validate_record(data))
        except BadRequestError as e:
            errors.append(f"{where}: {e}")
    if errors:
        more = f"\n(and {len(errors) - _MAX_ERRORS} more)" if len(errors) > _MAX_ERRORS else ""
        raise BadRequestError("invalid graph records:\n" + "\n".join(errors[:_MAX_ERRORS]) + more)
    return records


def _jsonl_items(text: str) -> Iterable[tuple[str, Any]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield f"line {number}", json.loads(line)
        except json.JSONDecodeError as e:
            yield f"line {number}", BadRequestError(f"invalid JSON: {e.msg} at column {e.colno}")


def loads_records(text: str, *, jsonl: bool = True) -> list[NodeRecord | EdgeRecord]:
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


def load_records(path: Path) -> list[NodeRecord | EdgeRecord]:
    """Records from a ``.jsonl`` file, or a ``.json`` file holding a list."""
    text = Path(path).read_text(encoding="utf-8")
    return loads_records(text, jsonl=Path(path).suffix.lower() != ".json")


def dump_records(records: Iterable[NodeRecord | EdgeRecord], path: Path) -> None:
    """Write records as JSONL."""
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(r.model_dump_json() + "\n")
