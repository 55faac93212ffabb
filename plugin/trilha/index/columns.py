"""Metadata columns over the rows of an index, and filter evaluation as a boolean mask.

Keyword tests use an inverted index (value -> rows), built lazily per field; range tests use a
float column with NaN for missing values. Masks are cached per predicate, so a repeated filter
costs one dictionary lookup.

An index that grows by segments (:mod:`trilha.index.lexical`) extends its columns the same way
(:meth:`MetaColumns.extended`): each segment's rows keep their own inverted indices and masks,
shared by every later snapshot, so a new snapshot evaluates a filter over its new rows only and
concatenates. Rows deleted since (not ``alive``) match no filter and hold no value.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Mapping, Sequence
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


class _Masks:
    """The masks of the last ``size`` filters used, by the filter's cache key. Shared by the
    search threads (and the snapshots that share a segment): each lookup and each insertion
    holds a lock, so another thread's eviction cannot fall between finding a mask and marking
    it the most recent; a mask is made outside it."""

    def __init__(self, size: int) -> None:
        self._masks: OrderedDict[str, BoolArray] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, expr: FilterExpr, make: Callable[[FilterExpr], BoolArray]) -> BoolArray:
        """The mask of ``expr``, made by ``make`` when it is not kept."""
        key = expr.cache_key()
        with self._lock:
            known = self._masks.get(key)
            if known is not None:
                self._masks.move_to_end(key)
                return known
        known = make(expr)
        with self._lock:
            self._masks[key] = known
            if len(self._masks) > self._size:
                self._masks.popitem(last=False)
        return known


class _Part:
    """The metadata of one segment's rows, with its inverted indices and cached masks."""

    def __init__(self, payloads: Sequence[Mapping[str, Any]], cache_size: int = 128) -> None:
        self.payloads = payloads
        self.n = len(payloads)
        self._inverted: dict[str, dict[Any, npt.NDArray[np.int64]]] = {}
        self._numeric: dict[str, npt.NDArray[np.float64]] = {}
        self._masks = _Masks(cache_size)
        self._keys: frozenset[str] | None = None

    @property
    def keys(self) -> frozenset[str]:
        """Every metadata key some row has (computed once)."""
        if self._keys is None:
            self._keys = frozenset().union(*self.payloads)
        return self._keys

    def _rows_of(self, key: str) -> dict[Any, npt.NDArray[np.int64]]:
        if key not in self._inverted:
            acc: dict[Any, list[int]] = defaultdict(list)
            for row, payload in enumerate(self.payloads):
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
            for row, payload in enumerate(self.payloads):
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

    def mask(self, expr: FilterExpr) -> BoolArray | None:
        """Rows satisfying ``expr``; None when the expression restricts nothing."""
        return None if expr.is_empty() else self._masks.get(expr, self._expr)


class MetaColumns:
    """Metadata of ``n`` rows, answering ``mask(expr)`` with a boolean array of length ``n``
    (rows not ``alive`` never set)."""

    def __init__(self, payloads: Sequence[Mapping[str, Any]], cache_size: int = 128) -> None:
        self._parts: tuple[_Part, ...] = (_Part(payloads, cache_size),)
        self._starts: tuple[int, ...] = (0,)
        self.n = len(payloads)
        #: The rows not deleted (None: every row).
        self.alive: BoolArray | None = None
        self._cache_size = cache_size
        self._masks = _Masks(cache_size)

    def extended(
        self, payloads: Sequence[Mapping[str, Any]], alive: BoolArray | None
    ) -> MetaColumns:
        """These columns with ``payloads``' rows appended and ``alive`` (over every row) the
        rows not deleted: a new value sharing this one's segments (their indices and masks)."""
        out = MetaColumns.__new__(MetaColumns)
        out._parts, out._starts = self._parts, self._starts
        if payloads:
            out._parts = (*self._parts, _Part(payloads, self._cache_size))
            out._starts = (*self._starts, self.n)
        out.n = self.n + len(payloads)
        out.alive = alive
        out._cache_size, out._masks = self._cache_size, _Masks(self._cache_size)
        return out

    def compacted(self) -> MetaColumns:
        """The live rows' metadata in one segment (the payloads are shared, not copied)."""
        if len(self._parts) == 1 and self.alive is None:
            return self
        payloads = [p for part in self._parts for p in part.payloads]
        if self.alive is not None:
            payloads = [payloads[r] for r in np.flatnonzero(self.alive).tolist()]
        return MetaColumns(payloads, self._cache_size)

    @property
    def keys(self) -> frozenset[str]:
        """Every metadata key some row has (a key only deleted rows had stays until the index
        is merged)."""
        return frozenset().union(*(part.keys for part in self._parts))

    def values(self, key: str, mask: BoolArray | None = None) -> list[str]:
        """The distinct text values of ``key`` over the live rows ``mask`` keeps (all: None)."""
        if mask is None:
            mask = self.alive
        elif self.alive is not None:
            mask = mask & self.alive
        found: set[str] = set()
        for part, start in zip(self._parts, self._starts, strict=True):
            found.update(part.values(key, None if mask is None else mask[start : start + part.n]))
        return sorted(found)

    def all_match(self, expr: FilterExpr) -> bool:
        """True when every live row satisfies ``expr`` (an empty expression included)."""
        return self.keeps_all(self.mask(expr))

    def keeps_all(self, mask: BoolArray | None) -> bool:
        """True when ``mask`` (one of :meth:`mask`'s) keeps every live row."""
        if mask is None:
            return True
        return bool(mask.all() if self.alive is None else (mask | ~self.alive).all())

    def mask(self, expr: FilterExpr) -> BoolArray | None:
        """Live rows satisfying ``expr``; None when the expression restricts nothing."""
        if expr.is_empty():
            return None
        if len(self._parts) == 1 and self.alive is None:
            return self._parts[0].mask(expr)
        return self._masks.get(expr, self._joined)

    def _joined(self, expr: FilterExpr) -> BoolArray:
        """Each segment's mask of ``expr``, end to end, without the dead rows."""
        out = np.concatenate([part._masks.get(expr, part._expr) for part in self._parts])
        if self.alive is not None:
            out &= self.alive
        return out
