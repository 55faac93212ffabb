"""The package's size limits (issue 8): modules ≤ 300 lines, functions ≤ 40, classes ≤ 200.

An exception is named, with its reason, in the README's "Size limits" section as a list item
that starts with the code path: ``- `trilha/cli/parser.py` (412 lines): ...`` for a module,
``- `trilha/x.py::name` ...`` for a function or class. A listed exception that is back under
its limit must leave the list, so the list stays true.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "plugin"
LIMITS = {"module": 300, "function": 40, "class": 200}


def offenders() -> dict[str, str]:
    """``{code path: kind and size}`` of everything over its limit."""
    found: dict[str, str] = {}
    for file in sorted((PACKAGE / "trilha").rglob("*.py")):
        rel = file.relative_to(PACKAGE).as_posix()
        source = file.read_text(encoding="utf-8")
        lines = len(source.splitlines())
        if lines > LIMITS["module"]:
            found[rel] = f"module of {lines} lines"
        for node in ast.walk(ast.parse(source)):
            kind = (
                "function"
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                else "class"
                if isinstance(node, ast.ClassDef)
                else None
            )
            if kind is None:
                continue
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            if size > LIMITS[kind]:
                found[f"{rel}::{node.name}"] = f"{kind} of {size} lines"
    return found


def listed_exceptions() -> set[str]:
    """Code paths listed in the README's "Size limits" section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^#+ Size limits\n(.*?)(?=^#|\Z)", text, re.S | re.M)
    assert section, "README.md has no 'Size limits' section"
    return set(re.findall(r"^- `([^`]+)`", section.group(1), re.M))


def test_everything_over_a_limit_is_a_named_exception() -> None:
    unnamed = {path: what for path, what in offenders().items() if path not in listed_exceptions()}
    assert not unnamed, f"over the size limits and not named in README's Size limits: {unnamed}"


def test_every_named_exception_is_still_over_its_limit() -> None:
    stale = listed_exceptions() - set(offenders())
    assert not stale, f"README's Size limits names what is back under its limit: {sorted(stale)}"
