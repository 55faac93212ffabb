"""Tool-call arguments built from a tool's advertised JSON schema alone, as a model builds them.

A model sees a tool as its OpenAI spec (``BaseTool.metadata.to_openai_tool()``): a name, a
description and the JSON schema of its parameters. :func:`arguments` fills that schema the way a
plain model would answer a question with it: a required text argument gets the user's question,
a required list of text gets ``[question]``, a required number its minimum (or 1), an enum its
first value; every optional argument gets the schema's default. Known values can be given by
argument name (``values``), as a model would take them from the conversation. Nothing here
looks at a Python signature: a tool whose function disagrees with its schema fails when called
with these arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: A tool as a model is shown it: ``BaseTool.metadata.to_openai_tool()``.
ToolSpec = dict[str, Any]


def spec_name(spec: ToolSpec) -> str:
    """The tool name of an OpenAI tool spec."""
    return str(spec["function"]["name"])


def parameters(spec: ToolSpec) -> dict[str, Any]:
    """The JSON schema of a spec's parameters."""
    return dict(spec["function"].get("parameters") or {})


def arguments(
    spec: ToolSpec, question: str, values: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The arguments of a call to the tool of ``spec`` about ``question`` (see the module)."""
    schema = parameters(spec)
    required = set(schema.get("required", ()))
    defs = schema.get("$defs", {})
    out: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        if values and name in values:
            out[name] = values[name]
        elif name in required:
            out[name] = _fill(_resolve(prop, defs), question, defs)
        elif "default" in prop:
            out[name] = prop["default"]
    return out


def _resolve(prop: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """``prop`` with a ``$ref`` replaced by its definition, and the first non-null branch of
    an ``anyOf`` taken."""
    if "$ref" in prop:
        prop = defs[str(prop["$ref"]).rsplit("/", 1)[-1]]
    branches = [b for b in prop.get("anyOf", ()) if b.get("type") != "null"]
    return _resolve(branches[0], defs) if branches else prop


def _fill(prop: dict[str, Any], question: str, defs: Mapping[str, Any]) -> Any:
    """A value of a required property's type."""
    if "enum" in prop:
        return prop["enum"][0]
    kind = prop.get("type")
    if kind == "string":
        return question
    if kind == "array":
        return [_fill(_resolve(prop.get("items", {}), defs), question, defs)]
    if kind in ("integer", "number"):
        return prop.get("minimum", prop.get("exclusiveMinimum", 0) + 1)
    if kind == "boolean":
        return False
    if kind == "object":
        return {}
    raise ValueError(f"no value for a property of type {kind!r}: {prop}")
