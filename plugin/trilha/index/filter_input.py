"""What callers pass as filters, turned into the one :class:`~trilha.index.filters.FilterExpr`.

:func:`coerce_filters` is the single entry: trilha's :class:`~trilha.types.SearchFilters` (or a
dict of its fields) become an AND of their fields (:func:`from_search_filters`); LlamaIndex
``MetadataFilters``, nested ones too, keep their AND / OR / NOT tree
(:func:`from_metadata_filters`). Every condition goes through
:func:`~trilha.index.filters.normalise_condition`, so both forms obey the same rules.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from trilha.errors import BadRequestError
from trilha.index.filters import (
    EMPTY_LIST,
    Condition,
    FilterExpr,
    Op,
    normalise_condition,
    problem_text,
)
from trilha.types import SearchFilters, date_to_int


def _one_or_any(key: str, value: str | list[str] | None) -> Condition | None:
    if value is None:
        return None
    if isinstance(value, list):
        return normalise_condition(key, "in", value)
    return normalise_condition(key, "eq", value)


def from_search_filters(filters: SearchFilters | None) -> FilterExpr:
    """Translate the seed 001/002 filter fields into a :class:`FilterExpr` (AND of fields)."""
    if filters is None:
        return FilterExpr()
    conds: list[Condition | None] = [
        _one_or_any("tags", filters.tags),
        _one_or_any("setor", filters.setor),
        _one_or_any("tema", filters.tema),
        _one_or_any("lang", filters.lang),
        _one_or_any("ministro", filters.ministro),
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


def _one_line(error: ValidationError, unknown_hint: str = "") -> str:
    """A pydantic error as one line: ``field: problem; field: problem``."""
    seen: dict[str, str] = {}
    for err in error.errors():
        field = str(err["loc"][0]) if err["loc"] else ""
        if err["type"] == "extra_forbidden":
            seen.setdefault(field, f"unknown filter field {field!r}{unknown_hint}")
        else:  # a check across fields has no field to name
            seen.setdefault(field, f"{field}: {problem_text(err)}" if field else problem_text(err))
    return "; ".join(seen.values())


def _llama_ops() -> dict[Any, Op]:
    """LlamaIndex's filter operators that map onto one trilha operator."""
    from llama_index.core.vector_stores.types import FilterOperator as F

    return {
        F.EQ: "eq",
        F.NE: "ne",
        F.GT: "gt",
        F.GTE: "gte",
        F.LT: "lt",
        F.LTE: "lte",
        F.IN: "in",
        F.NIN: "nin",
        F.ANY: "in",
        F.CONTAINS: "eq",
    }


def _from_metadata_filter(node: Any, ops: dict[Any, Op]) -> Condition | FilterExpr:
    """One LlamaIndex ``MetadataFilter``; ``all`` becomes an AND of ``eq`` (contains) tests."""
    from llama_index.core.vector_stores.types import FilterOperator

    if node.operator == FilterOperator.ALL:
        values = node.value if isinstance(node.value, list) else [node.value]
        if not values:
            raise BadRequestError(f"filter {node.key} all: {EMPTY_LIST}")
        return FilterExpr(parts=[normalise_condition(node.key, "eq", v) for v in values])
    if node.operator not in ops:
        raise BadRequestError(
            f"filter operator {node.operator.value!r} on {node.key!r} is not supported; use "
            "==, !=, >, >=, <, <=, in, nin, any, all or contains"
        )
    return normalise_condition(node.key, ops[node.operator], node.value)


def _from_metadata_node(node: Any, ops: dict[Any, Op]) -> Condition | FilterExpr:
    """A ``MetadataFilters`` tree node: a group keeps its AND / OR / NOT, a leaf is converted."""
    from llama_index.core.vector_stores.types import (
        FilterCondition,
        MetadataFilter,
        MetadataFilters,
    )

    if isinstance(node, MetadataFilters):
        cond = node.condition or FilterCondition.AND
        parts = [_from_metadata_node(f, ops) for f in node.filters]
        if cond == FilterCondition.NOT:
            return FilterExpr(mode="and", parts=parts, negate=True)
        return FilterExpr(mode="or" if cond == FilterCondition.OR else "and", parts=parts)
    if not isinstance(node, MetadataFilter):
        raise BadRequestError(f"unsupported filter object: {type(node).__name__}")
    return _from_metadata_filter(node, ops)


def from_metadata_filters(filters: Any) -> FilterExpr:
    """Translate LlamaIndex ``MetadataFilters`` (nested too) into a :class:`FilterExpr`."""
    result = _from_metadata_node(filters, _llama_ops())
    return result if isinstance(result, FilterExpr) else FilterExpr(parts=[result])


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
        except ValidationError as e:
            fields = ", ".join(SearchFilters.model_fields)
            raise BadRequestError(f"invalid filters: {_one_line(e, f'; use {fields}')}") from e
    if type(filters).__name__ == "MetadataFilters":
        return from_metadata_filters(filters)
    raise BadRequestError(
        f"filters must be SearchFilters, a dict of its fields or MetadataFilters, "
        f"not {type(filters).__name__}"
    )
