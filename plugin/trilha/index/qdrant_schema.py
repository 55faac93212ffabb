"""What both Qdrant backends share: point ids, the indexed payload fields, the filter compiler.

The ``local``/``server`` backend (:mod:`trilha.index.qdrant`) and the in-process one
(:mod:`trilha.index.qdrant_edge`) store the same points: the id is the UUID5 of the
``unit_id``, the payload the unit's flat metadata, with a payload index on each field below.
:func:`compile_filter` builds either library's filter from one
:class:`~trilha.index.filters.FilterExpr`, so both run the same predicate; a backend's
:class:`FilterCompiler` compiles each :func:`~trilha.index.filters.sealed` expression (a
principal's visibility rule) once and reuses it in every search.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from typing import Any

from trilha.index.filters import Condition, FilterExpr

_NAMESPACE = uuid.UUID("6f1c3e9a-2b7d-4c8e-9a51-0d3f7b2e4c16")
#: Payload fields given a payload index (keyword / integer).
KEYWORD_FIELDS = (
    "unit_id",
    "doc_id",
    "tags",
    "lang",
    "setor",
    "tema",
    "ministro",
    "tipo_recurso",
    "resultado",
    "visibility",
    "owner_id",
    "org_id",
    "project_id",
    "acl",
)
INTEGER_FIELDS = ("date_num", "sensitivity", "hierarchy_level")


def point_id(unit_id: str) -> str:
    """The Qdrant point id of a unit."""
    return str(uuid.uuid5(_NAMESPACE, unit_id))


def compile_filter(expr: FilterExpr, m: Any) -> Any:
    """Compile a :class:`FilterExpr` with a Qdrant models namespace ``m``.

    ``m`` provides ``Filter``, ``FieldCondition``, ``MatchValue``, ``MatchAny`` and ``Range``
    (qdrant-client's ``models`` and qdrant-edge share these shapes). Keys are expected to have
    passed :func:`~trilha.index.filters.check_keys`. Numbers are matched by value through
    ranges, so ``1`` and ``1.0`` are the same number (as in the BM25 columns) and never a string.
    """
    return FilterCompiler(m, size=0).compile(expr)


class FilterCompiler:
    """:func:`compile_filter` for one backend, keeping the native form of up to ``size``
    sealed expressions (least recently used dropped first)."""

    def __init__(self, m: Any, size: int = 256) -> None:
        self._m = m
        self._size = size
        self._memo: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def compile(self, expr: FilterExpr) -> Any:
        """The native filter of ``expr``; sealed parts come from the memo after their first use."""
        key = expr.content_key
        if key is None or self._size <= 0:
            return self._build(expr)
        with self._lock:
            native = self._memo.get(key)
            if native is not None:
                self._memo.move_to_end(key)
                return native
        native = self._build(expr)
        with self._lock:
            self._memo[key] = native
            if len(self._memo) > self._size:
                self._memo.popitem(last=False)
        return native

    def _build(self, expr: FilterExpr) -> Any:
        m = self._m
        parts = [
            _condition(p, m) if isinstance(p, Condition) else self.compile(p) for p in expr.parts
        ]
        inner = m.Filter(must=parts) if expr.mode == "and" else m.Filter(should=parts)
        return m.Filter(must_not=[inner]) if expr.negate else inner


def _condition(c: Condition, m: Any) -> Any:
    if c.op in ("gt", "gte", "lt", "lte"):
        return m.FieldCondition(key=c.key, range=m.Range(**{c.op: c.value}))
    values = c.value if isinstance(c.value, list) else [c.value]
    strings = [v for v in values if isinstance(v, str)]
    numbers = [v for v in values if not isinstance(v, str)]
    tests = [m.FieldCondition(key=c.key, range=m.Range(gte=v, lte=v)) for v in numbers]
    if len(strings) == 1:
        tests.append(m.FieldCondition(key=c.key, match=m.MatchValue(value=strings[0])))
    elif strings:
        tests.append(m.FieldCondition(key=c.key, match=m.MatchAny(any=strings)))
    match = tests[0] if len(tests) == 1 else m.Filter(should=tests)
    return m.Filter(must_not=[match]) if c.op in ("ne", "nin") else match
