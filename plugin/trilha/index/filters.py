"""One filter model, translated to each index's native form.

:class:`FilterExpr` is a small boolean tree of conditions on unit metadata. It is built from
trilha's :class:`~trilha.types.SearchFilters` or from LlamaIndex ``MetadataFilters`` and compiled
to a Qdrant ``Filter`` (dense side) and to a boolean row mask (lexical side), so both indices
apply the very same predicate inside their search.

Semantics, identical on both sides: on a list field (``tags``) ``eq`` means "contains" and
``in`` means "contains any"; ``ne``/``nin`` also match units that lack the field; ranges compare
numbers (dates are compared as ``YYYYMMDD`` integers in ``date_num``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from trilha.errors import BadRequestError
from trilha.types import SearchFilters, date_to_int

Op = Literal["eq", "ne", "in", "nin", "gt", "gte", "lt", "lte"]
KEYWORD_OPS = ("eq", "ne", "in", "nin")
RANGE_OPS = ("gt", "gte", "lt", "lte")
#: Metadata keys whose values are dates; they are compared through ``date_num``.
DATE_KEYS = frozenset({"date", "created_at", "date_num", "updated_at"})

Value = str | int | float | bool


class Condition(BaseModel):
    """``key op value``: one test on a unit's metadata."""

    key: str = Field(description="Metadata field name.")
    op: Op = Field(description="Comparison operator.")
    value: Value | list[Value] = Field(description="Operand; a list for 'in' and 'nin'.")


class FilterExpr(BaseModel):
    """Conditions and nested expressions joined by AND or OR, optionally negated."""

    mode: Literal["and", "or"] = Field("and", description="How the parts combine.")
    parts: list[Condition | FilterExpr] = Field(default_factory=list, description="Operands.")
    negate: bool = Field(False, description="NOT of the whole expression.")

    def is_empty(self) -> bool:
        """True when the expression restricts nothing."""
        return not self.parts

    def cache_key(self) -> str:
        """A stable string identifying the predicate."""
        return self.model_dump_json()


def _one_or_any(key: str, value: str | list[str] | None) -> Condition | None:
    if value is None:
        return None
    if isinstance(value, list):
        return Condition(key=key, op="in", value=list(value))
    return Condition(key=key, op="eq", value=value)


def from_search_filters(filters: SearchFilters | None) -> FilterExpr:
    """Translate the seed 001/002 filter fields into a :class:`FilterExpr` (AND of fields)."""
    if filters is None:
        return FilterExpr()
    conds: list[Condition | None] = [
        _one_or_any("tags", filters.tags),
        _one_or_any("setor", filters.setor),
        _one_or_any("tema", filters.tema),
        _one_or_any("lang", filters.lang),
        _one_or_any("ministro", filters.ministro.upper() if filters.ministro else None),
        _one_or_any("tipo_recurso", filters.tipos_recurso),
        _one_or_any("resultado", filters.resultado),
        _one_or_any("doc_id", filters.doc_ids),
    ]
    lo, hi = date_to_int(filters.data_inicio), date_to_int(filters.data_fim)
    if lo is not None:
        conds.append(Condition(key="date_num", op="gte", value=lo))
    if hi is not None:
        conds.append(Condition(key="date_num", op="lte", value=hi))
    if filters.max_sensitivity is not None:
        conds.append(Condition(key="sensitivity", op="lte", value=filters.max_sensitivity))
    return FilterExpr(parts=[c for c in conds if c is not None])


def normalise_condition(key: str, op: Op, value: Any) -> Condition:
    """Validate one condition, mapping date keys onto ``date_num``."""
    if op in ("in", "nin"):
        if not isinstance(value, list | tuple) or not value:
            raise BadRequestError(f"filter {key} {op} needs a non-empty list, got {value!r}")
        value = list(value)
    elif isinstance(value, list | tuple):
        raise BadRequestError(f"filter {key} {op} needs a single value, got a list")
    if key in DATE_KEYS:
        try:
            value = (
                [date_to_int(v) for v in value]
                if isinstance(value, list)
                else date_to_int(
                    value if not isinstance(value, int) or value > 10**7 else str(value)
                )
            )
        except ValueError as e:
            raise BadRequestError(f"filter on {key}: {e}") from e
        key = "date_num"
    if op in RANGE_OPS and not isinstance(value, int | float):
        raise BadRequestError(f"filter {key} {op} needs a number or a date, got {value!r}")
    return Condition(key=key, op=op, value=value)


def from_metadata_filters(filters: Any) -> FilterExpr:
    """Translate LlamaIndex ``MetadataFilters`` (nested too) into a :class:`FilterExpr`."""
    from llama_index.core.vector_stores.types import (
        FilterCondition,
        FilterOperator,
        MetadataFilter,
        MetadataFilters,
    )

    ops: dict[Any, Op] = {
        FilterOperator.EQ: "eq",
        FilterOperator.NE: "ne",
        FilterOperator.GT: "gt",
        FilterOperator.GTE: "gte",
        FilterOperator.LT: "lt",
        FilterOperator.LTE: "lte",
        FilterOperator.IN: "in",
        FilterOperator.NIN: "nin",
        FilterOperator.ANY: "in",
        FilterOperator.CONTAINS: "eq",
    }

    def convert(node: Any) -> Condition | FilterExpr:
        if isinstance(node, MetadataFilters):
            cond = node.condition or FilterCondition.AND
            parts = [convert(f) for f in node.filters]
            if cond == FilterCondition.NOT:
                return FilterExpr(mode="and", parts=parts, negate=True)
            return FilterExpr(mode="or" if cond == FilterCondition.OR else "and", parts=parts)
        if not isinstance(node, MetadataFilter):
            raise BadRequestError(f"unsupported filter object: {type(node).__name__}")
        if node.operator == FilterOperator.ALL:
            values = node.value if isinstance(node.value, list) else [node.value]
            return FilterExpr(parts=[normalise_condition(node.key, "eq", v) for v in values])
        if node.operator not in ops:
            raise BadRequestError(
                f"filter operator {node.operator.value!r} on {node.key!r} is not supported; use "
                "==, !=, >, >=, <, <=, in, nin, any, all or contains"
            )
        return normalise_condition(node.key, ops[node.operator], node.value)

    result = convert(filters)
    return result if isinstance(result, FilterExpr) else FilterExpr(parts=[result])


def combine(*exprs: FilterExpr | None) -> FilterExpr:
    """AND of several expressions, skipping empty ones."""
    parts: list[Condition | FilterExpr] = [e for e in exprs if e is not None and not e.is_empty()]
    if len(parts) == 1 and isinstance(parts[0], FilterExpr):
        return parts[0]
    return FilterExpr(parts=parts)


def coerce_filters(filters: Any) -> FilterExpr | None:
    """Accept SearchFilters, a dict of its fields, LlamaIndex MetadataFilters or a FilterExpr."""
    if filters is None:
        return None
    if isinstance(filters, FilterExpr):
        return filters
    if isinstance(filters, SearchFilters):
        return from_search_filters(filters)
    if isinstance(filters, dict):
        try:
            return from_search_filters(SearchFilters.model_validate(filters))
        except ValueError as e:
            raise BadRequestError(f"invalid filters: {e}") from e
    if type(filters).__name__ == "MetadataFilters":
        return from_metadata_filters(filters)
    raise BadRequestError(
        f"filters must be SearchFilters, a dict of its fields or MetadataFilters, "
        f"not {type(filters).__name__}"
    )
