"""No import cycles among trilha's modules (module-level imports; lazy ones are allowed).

The graph is read from the source with :mod:`ast`: an edge ``a -> b`` for each ``import`` that
runs when ``a`` is imported (the module body, ``if``/``try`` blocks and class bodies, but not
function bodies nor ``if TYPE_CHECKING:`` blocks). ``from p import x`` points at ``p.x`` when
that is a module, else at ``p``. A cycle is a strongly connected component of two or more
modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import trilha

PACKAGE = Path(trilha.__file__).parent

#: Cycles that exist today outside this test's reach; each is a set of module names. Remove an
#: entry once its cycle is broken (the test fails on an entry that no longer matches a cycle).
KNOWN_CYCLES: list[frozenset[str]] = []


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


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _eager(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements that run when the module is imported."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
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
    """``module -> modules of the package it imports`` at module level (``lazy``: anywhere)."""
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


def test_reads_module_level_imports_only() -> None:
    graph, lazy = import_graph(), import_graph(lazy=True)
    # the backends share qdrant_schema; the factory in dense imports them inside a function
    assert "trilha.index.qdrant_schema" in graph["trilha.index.qdrant"]
    assert "trilha.index.qdrant_schema" in graph["trilha.index.qdrant_edge"]
    assert "trilha.index.qdrant_edge" not in graph["trilha.index.dense"]
    assert "trilha.index.qdrant_edge" in lazy["trilha.index.dense"]
    # an "if TYPE_CHECKING:" import is not a module-level one
    assert "trilha.graph.service" not in graph["trilha.retrieve.kg"]


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
