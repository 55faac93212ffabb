"""Metadata columns over the rows of an index, and filter evaluation as a boolean mask.

Keyword tests use an inverted index (value -> rows), built lazily per field; range tests use a
float column with NaN for missing values. Masks are cached per predicate, so a repeated filter
costs one dictionary lookup.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from trilha.index.filters import Condition, FilterExpr

BoolArray = npt.NDArray[np.bool_]


def _values(raw: Any) -> tuple[Any, ...]:
    if raw is None:
        return ()
    if isinstance(raw, list | tuple | set):
        return tuple(_comparable(v) for v in raw)
    return (_comparable(raw),)


def _comparable(value: Any) -> Any:
    """The lookup key of a value, matching as Qdrant does: a number equals the same number
    whatever its type (``1 == 1.0``), never a string, and a stored bool equals no filter value."""
    if isinstance(value, bool):
        return (bool, value)
    if isinstance(value, int | float):
        return float(value)
    return value


class MetaColumns:
    """Metadata of ``n`` rows, answering ``mask(expr)`` with a boolean array of length ``n``."""

    def __init__(self, payloads: Sequence[Mapping[str, Any]], cache_size: int = 128) -> None:
        self._payloads = payloads
        self.n = len(payloads)
        self._inverted: dict[str, dict[Any, npt.NDArray[np.int64]]] = {}
        self._numeric: dict[str, npt.NDArray[np.float64]] = {}
        self._cache: OrderedDict[str, BoolArray] = OrderedDict()
        self._cache_size = cache_size
        self._keys: frozenset[str] | None = None

    @property
    def keys(self) -> frozenset[str]:
        """Every metadata key some row has (computed once)."""
        if self._keys is None:
            self._keys = frozenset().union(*self._payloads)
        return self._keys

    def _rows_of(self, key: str) -> dict[Any, npt.NDArray[np.int64]]:
        if key not in self._inverted:
            acc: dict[Any, list[int]] = defaultdict(list)
            for row, payload in enumerate(self._payloads):
                for v in _values(payload.get(key)):
                    acc[v].append(row)
            self._inverted[key] = {v: np.asarray(r, dtype=np.int64) for v, r in acc.items()}
        return self._inverted[key]

    def values(self, key: str, mask: BoolArray | None = None) -> list[str]:
        """The distinct text values of ``key`` over the rows ``mask`` keeps (all: None)."""
        return sorted(
            v
            for v, rows in self._rows_of(key).items()
            if isinstance(v, str) and (mask is None or bool(mask[rows].any()))
        )

    def _numbers(self, key: str) -> npt.NDArray[np.float64]:
        if key not in self._numeric:
            col = np.full(self.n, np.nan)
            for row, payload in enumerate(self._payloads):
                v = payload.get(key)
                if isinstance(v, int | float) and not isinstance(v, bool):
                    col[row] = float(v)
            self._numeric[key] = col
        return self._numeric[key]

    def _match_any(self, key: str, values: Sequence[Any]) -> BoolArray:
        out = np.zeros(self.n, dtype=bool)
        inverted = self._rows_of(key)
        for v in values:
            rows = inverted.get(_comparable(v))
            if rows is not None:
                out[rows] = True
        return out

    def _condition(self, c: Condition) -> BoolArray:
        if c.op in ("eq", "ne", "in", "nin"):
            values = c.value if isinstance(c.value, list) else [c.value]
            hit = self._match_any(c.key, values)
            return ~hit if c.op in ("ne", "nin") else hit
        col = self._numbers(c.key)
        if not isinstance(c.value, int | float):
            raise ValueError(f"range filter on {c.key} needs a number, got {c.value!r}")
        bound = float(c.value)
        with np.errstate(invalid="ignore"):
            if c.op == "gt":
                return col > bound
            if c.op == "gte":
                return col >= bound
            if c.op == "lt":
                return col < bound
            return col <= bound

    def _expr(self, e: FilterExpr) -> BoolArray:
        masks = [self._condition(p) if isinstance(p, Condition) else self._expr(p) for p in e.parts]
        if not masks:
            out = np.ones(self.n, dtype=bool)
        elif e.mode == "and":
            out = np.logical_and.reduce(masks)
        else:
            out = np.logical_or.reduce(masks)
        return ~out if e.negate else out

    def all_match(self, expr: FilterExpr) -> bool:
        """True when every row satisfies ``expr`` (an empty expression included)."""
        mask = self.mask(expr)
        return mask is None or bool(mask.all())

    def mask(self, expr: FilterExpr) -> BoolArray | None:
        """Rows satisfying ``expr``; None when the expression restricts nothing."""
        if expr.is_empty():
            return None
        key = expr.cache_key()
        cached = self._cache.get(key)
        if cached is None:
            cached = self._expr(expr)
            self._cache[key] = cached
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return cached
