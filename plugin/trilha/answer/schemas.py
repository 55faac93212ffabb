"""UC09's node schemas (seed 000), shipped as ``uc09_schemas.json`` and checked with
``jsonschema``'s draft 2020-12 validator, compiled once per process.

A payload that breaks its node's schema is a defect inside trilha, not the caller's: it raises
:class:`SchemaViolation`, which names the node, the side (input or output) and the first problem.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import files
from typing import Any, Literal

from jsonschema import Draft202012Validator

Side = Literal["input", "output"]


class SchemaViolation(RuntimeError):
    """A node's payload does not match seed 000's schema."""


@lru_cache(maxsize=1)
def _validators() -> dict[tuple[str, str], Draft202012Validator]:
    data = json.loads((files("trilha.answer") / "uc09_schemas.json").read_text(encoding="utf-8"))
    out = {}
    for node, sides in data["nodes"].items():
        for side, schema in sides.items():
            Draft202012Validator.check_schema(schema)
            out[(node, side)] = Draft202012Validator(schema)
    return out


def schema_of(node: str, side: Side) -> dict[str, Any]:
    """The JSON Schema of ``node``'s ``side``, as the seed gives it."""
    return dict(_validators()[(node, side)].schema)


def check(node: str, side: Side, payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` when it matches ``node``'s ``side`` schema; else :class:`SchemaViolation`."""
    error = next(iter(_validators()[(node, side)].iter_errors(payload)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise SchemaViolation(f"UC09 {node} {side} breaks seed 000's schema at {where}: "
                              f"{error.message}")  # fmt: skip
    return payload
