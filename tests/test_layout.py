"""The package's real layout rules: no import cycles, and a public ``__all__`` that is true.

Import cycles: the graph is read from the source with :mod:`ast`: an edge ``a -> b`` for each
``import`` in ``a`` that is not inside a function (the module body, ``if``/``try``/``with``
blocks, class bodies, and ``if TYPE_CHECKING:`` blocks too: a type-only import still ties two
modules together, and mypy and every reader follow it). ``from p import x`` points at ``p.x``
when that is a module, else at ``p``. A cycle is a strongly connected component of two or more
modules. Imports inside functions (lazy ones) are allowed to close a circle.

``__all__``: every name a module lists there exists, and every name the README, the guides
(docs/), the notebooks and the tests import from ``trilha`` or ``trilha.llamaindex`` is listed.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "plugin" / "trilha"

#: Cycles that exist today; each is a set of module names, with who breaks it. Remove an entry
#: once its cycle is broken (the test fails on an entry that no longer matches a cycle).
KNOWN_CYCLES: list[frozenset[str]] = []

#: The modules users import names from; those names must be in the module's ``__all__``.
PUBLIC = ("trilha", "trilha.llamaindex")


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


MODULES = module_names()


def _eager(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements outside functions: those that run on import, and type-only ones."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            yield from _eager(node.body)
            yield from _eager(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _eager(block)
            for handler in node.handlers:
                yield from _eager(handler.body)
        elif isinstance(node, ast.ClassDef | ast.With):
            yield from _eager(node.body)


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_pkg: bool) -> Iterator[str]:
    """The dotted names an import may load: ``p`` and each ``p.x`` of ``from p import x``."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        anchor = module.split(".") if is_pkg else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base]) if base else ".".join(anchor)
    yield base
    yield from (f"{base}.{alias.name}" for alias in node.names)


def _edges(node: ast.Import | ast.ImportFrom, module: str, is_pkg: bool) -> set[str]:
    """Modules of the package an import loads: ``p.x`` when ``x`` is a submodule, else ``p``."""
    names = MODULES
    if isinstance(node, ast.Import):
        return {t for t in _targets(node, module, is_pkg) if t in names}
    base, *subs = _targets(node, module, is_pkg)
    submodules = {s for s in subs if s in names}
    named = len(submodules) < len(subs) and base in names
    return submodules | ({base} if named else set())


def import_graph(lazy: bool = False) -> dict[str, set[str]]:
    """``module -> modules of the package it imports`` outside functions (``lazy``: anywhere)."""
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = (
            [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
            if lazy
            else list(_eager(tree.body))
        )
        graph[name] = set().union(*(_edges(n, name, is_pkg) for n in nodes)) - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of two or more modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_reader_sees_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [frozenset({"a", "b", "c"})]


def test_reads_imports_outside_functions_type_only_ones_included() -> None:
    source = """
import top
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    import typed
try:
    import tried
except ImportError:
    import fallback
class C:
    import in_class
def f():
    import lazy
"""
    names = {alias.name for node in _eager(ast.parse(source).body) for alias in node.names}
    assert names == {"top", "TYPE_CHECKING", "typed", "tried", "fallback", "in_class"}
    graph, lazy = import_graph(), import_graph(lazy=True)
    # the factory in dense imports its backends inside a function
    assert "trilha.index.filters" in graph["trilha.index.qdrant"]
    assert not graph["trilha.index.dense"] & {"trilha.index.qdrant"}
    assert "trilha.index.qdrant" in lazy["trilha.index.dense"]


def test_no_import_cycles() -> None:
    found = set(cycles(import_graph()))
    unexpected = found - set(KNOWN_CYCLES)
    assert not unexpected, f"import cycles: {[sorted(c) for c in unexpected]}"
    stale = set(KNOWN_CYCLES) - found
    assert not stale, f"known cycles that are gone; drop them: {[sorted(c) for c in stale]}"


def test_the_dense_index_modules_form_no_cycle_even_lazily() -> None:
    """Counting imports inside functions too, the dense index and its backends form no circle."""
    graph = import_graph(lazy=True)
    index = {m: graph[m] & set(graph) for m in graph if m.startswith("trilha.index.")}
    assert cycles(index) == []


def _declares_all(path: Path) -> bool:
    return any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        for node in ast.parse(path.read_text(encoding="utf-8")).body
    )


@pytest.mark.parametrize(
    "name", sorted(name for name, path in MODULES.items() if _declares_all(path))
)
def test_every_name_in_all_exists(name: str) -> None:
    module = importlib.import_module(name)
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it lacks: {missing}"
    assert len(set(module.__all__)) == len(module.__all__), f"{name}.__all__ repeats a name"


def _sources() -> Iterator[str]:
    """Python source: the README's and the guides' Python examples, the notebooks' builder, the
    tests."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        yield from re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    for folder in ("notebooks", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path.read_text(encoding="utf-8")


def imported_public_names() -> dict[str, set[str]]:
    """``{public module: names imported from it}`` across :func:`_sources`."""
    found: dict[str, set[str]] = {module: set() for module in PUBLIC}
    for source in _sources():
        try:
            tree = ast.parse(source)
        except SyntaxError:  # a README fragment that is not a whole program
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in found and not node.level:
                found[node.module] |= {alias.name for alias in node.names}
    return found


def test_names_users_import_are_public() -> None:
    imported = imported_public_names()
    assert "Workspace" in imported["trilha"] and "TrilhaRetriever" in imported["trilha.llamaindex"]
    for module, names in imported.items():
        unlisted = names - set(importlib.import_module(module).__all__)
        assert not unlisted, f"imported from {module} but not in its __all__: {sorted(unlisted)}"
