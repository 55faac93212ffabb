"""Names a package exports, imported from their modules on first use (PEP 562).

A package's ``__init__`` that imports every public name eagerly makes any import below it load
the whole package: ``trilha.graph.build.extract`` loaded the graph's writer, exports and path
search on every search. The package instead maps each name to its module (and names them for
type checkers under ``TYPE_CHECKING``); its ``__getattr__`` calls :func:`attribute`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


def attribute(namespace: dict[str, Any], where: Mapping[str, str], name: str) -> object:
    """``name`` from its module in ``where``, kept in the package's ``namespace`` so the next
    read finds it there; an :class:`AttributeError` for a name the package does not export."""
    module = where.get(name)
    if module is None:
        raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    namespace[name] = value
    return value
