"""One filter model, translated to each index's native form.

:class:`FilterExpr` is a small boolean tree of conditions on unit metadata. It is built from
trilha.s :class:`~trilha.types.SearchFilters` (or a dict of its fields) or from LlamaIndex
``MetadataFilters`` (:mod:`trilha.index.filter_input`) and compiled to a Qdrant ``Filter``
(dense side) and to a boolean row mask (lexical side), so both indices apply the very same
predicate inside their search.

Semantics, identical on both sides: on a list field (``tags``) ``eq`` means "contains" and
``in`` means "contains any"; ``ne``/``nin`` also match units that lack the field; ranges compare
numbers (dates are compared as ``YYYYMMDD`` integers in ``date_num``).

Rules that hold whichever way a filter is written:

* **Keys.** A key must be a field units have: one of :data:`FIXED_KEYS` (the fields of
  :meth:`~trilha.types.TextUnit.payload`, ``date_num`` and the domain fields ``SearchFilters``
  names) or a metadata field present in the corpus. It must be a plain name (letters, digits,
  ``_``, ``-``): Qdrant reads ``.`` and ``[]`` as a path into nested payloads, where BM25 would
  look for a flat column. :func:`check_keys` refuses any other key; the searcher calls it once
  for both sides.
* **Case.** Values of :data:`CASE_INSENSITIVE_KEYS` (``ministro``) are stored upper-cased
  (ingest does it) and :func:`fold_case` upper-cases them in every :class:`Condition`, so
  ``fux``, ``Fux`` and ``FUX`` match the same units. Every other key compares exactly.
* **Types.** Numbers match by value (``1`` equals ``1.0``) and never a string (``"1"``);
  true/false is not a filter value (Qdrant backends disagree on whether ``True`` is ``1``).
* **Lists.** ``in``/``nin`` (and ``any``/``all``, ``SearchFilters`` lists) need at least one
  value: an empty list is refused, never read as "nothing" or "everything".
* **Languages.** A ``lang`` value must be a language code and is written as documents' codes
  are (:func:`~trilha.index.language.written_code`: ``PT`` -> ``pt``; ``klingon`` is refused).
  A code without a region stands for its whole family: the searcher widens ``pt`` to every
  ``pt-…`` code the corpus holds (:func:`widen_languages`), while ``pt-BR`` matches only itself.
* **Blanks.** An empty or blank string is refused as a value: it would match nothing.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Callable, Collection, Iterator
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from trilha.errors import BadRequestError
from trilha.index.language import primary_code, written_code
from trilha.types import TextUnit, date_to_int

Op = Literal["eq", "ne", "in", "nin", "gt", "gte", "lt", "lte"]
KEYWORD_OPS = ("eq", "ne", "in", "nin")
RANGE_OPS = ("gt", "gte", "lt", "lte")
#: Metadata keys whose values are dates; they are compared through ``date_num``.
DATE_KEYS = frozenset({"date", "created_at", "date_num", "updated_at"})
#: Keys whose values are language codes (written as documents' codes are; a bare code is a family).
LANGUAGE_KEYS = frozenset({"lang"})
#: Keys whose string values are compared case-insensitively (both stored and asked upper-cased).
CASE_INSENSITIVE_KEYS = frozenset({"ministro"})
#: Keys filterable in every workspace: the unit payload and the fields SearchFilters names.
FIXED_KEYS = (frozenset(TextUnit.model_fields) - {"text", "extra"}) | {
    "date_num",
    "ministro",
    "tipo_recurso",
    "resultado",
}

Value = str | int | float
EMPTY_LIST = "an empty list matches nothing; give at least one value or drop the condition"


def fold_case(key: str, value: Any) -> Any:
    """``value`` as stored and compared under ``key``: strings (also inside lists) upper-cased
    for :data:`CASE_INSENSITIVE_KEYS`, anything else unchanged."""
    if key not in CASE_INSENSITIVE_KEYS:
        return value
    if isinstance(value, str):
        return value.upper()
    if isinstance(value, list):
        return [v.upper() if isinstance(v, str) else v for v in value]
    return value


class Condition(BaseModel):
    """``key op value``: one test on a unit's metadata (values follow :func:`fold_case`)."""

    key: str = Field(description="Metadata field name.")
    op: Op = Field(description="Comparison operator.")
    value: Value | list[Value] = Field(description="Operand; a non-empty list for 'in', 'nin'.")

    @field_validator("value", mode="before")
    @classmethod
    def _folded_and_non_empty(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, list) and not value:
            raise ValueError(EMPTY_LIST)
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, bool) for v in values):
            # bool is an int to pydantic and to qdrant-edge, a bool to BM25 and local Qdrant
            raise ValueError("filter values are strings or numbers, not true/false")
        if any(isinstance(v, str) and not v.strip() for v in values):
            raise ValueError("an empty value matches nothing; give a value or drop the condition")
        key = info.data.get("key", "")
        if key in LANGUAGE_KEYS:
            written = [written_code(v) for v in values]
            return written if isinstance(value, list) else written[0]
        return fold_case(key, value)


class FilterExpr(BaseModel):
    """Conditions and nested expressions joined by AND or OR, optionally negated."""

    mode: Literal["and", "or"] = Field("and", description="How the parts combine.")
    parts: list[Condition | FilterExpr] = Field(default_factory=list, description="Operands.")
    negate: bool = Field(False, description="NOT of the whole expression.")
    _content_key: str | None = PrivateAttr(None)

    @property
    def content_key(self) -> str | None:
        """The digest of a :func:`sealed` expression's content (None for others): compilers
        may keep its native form under this key and reuse it wherever it appears."""
        return self._content_key

    def is_empty(self) -> bool:
        """True when the expression restricts nothing."""
        return not self.parts

    def cache_key(self) -> str:
        """A stable string identifying the predicate."""
        return self.model_dump_json()

    def conditions(self) -> Iterator[Condition]:
        """Every condition of the tree, depth first."""
        for part in self.parts:
            if isinstance(part, Condition):
                yield part
            else:
                yield from part.conditions()


def sealed(expr: FilterExpr) -> FilterExpr:
    """A copy of ``expr`` carrying the digest of its content (:attr:`FilterExpr.content_key`).

    For an expression that is built once and used in many searches (a principal's visibility
    rule): each index compiles it once and reuses the native form, also inside larger
    expressions. A sealed expression must not be changed afterwards.
    """
    copy = expr.model_copy(deep=True)
    copy._content_key = hashlib.sha256(copy.cache_key().encode()).hexdigest()
    return copy


def _plain(key: str) -> bool:
    """True when Qdrant reads ``key`` as one field name (its key grammar), not as a path."""
    return bool(key) and all(c.isalnum() or c in "_-" for c in key)


def check_keys(expr: FilterExpr, corpus_keys: Collection[str]) -> None:
    """Refuse a key that is not a plain name of a field units have (module docstring).

    ``corpus_keys`` are the metadata fields present in the corpus; :data:`FIXED_KEYS` are
    always known. Raises :class:`BadRequestError` naming the key and listing a few known ones.
    """
    known = FIXED_KEYS | set(corpus_keys)
    for cond in expr.conditions():
        if not _plain(cond.key) and cond.key in known:
            raise BadRequestError(
                f"filter key {cond.key!r} cannot be filtered on: only names of letters, digits, "
                "'_' and '-' are (Qdrant reads '.' and '[]' as paths); rename the metadata field"
            )
        if cond.key not in known:
            raise BadRequestError(f"unknown filter key {cond.key!r}; {_suggest(cond.key, known)}")


def _suggest(key: str, known: Collection[str], shown: int = 8) -> str:
    """Close matches first, then the corpus's own fields, then the fixed ones."""
    usable = [k for k in known if _plain(k)]
    close = difflib.get_close_matches(key.strip("[]. ").lower(), usable, n=2, cutoff=0.6)
    ordered = [*close, *sorted(set(usable) - FIXED_KEYS), *sorted(FIXED_KEYS & set(usable))]
    listed = list(dict.fromkeys(ordered))[:shown]
    hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
    return f"{hint}filterable keys: {', '.join(listed)}, ... ({len(usable)} in all)"


def normalise_condition(key: str, op: Op, value: Any) -> Condition:
    """Validate one condition, mapping date keys onto ``date_num``; BadRequestError if bad."""
    if value is None:
        raise BadRequestError(f"filter {key} {op} needs a value, got None")
    if op in ("in", "nin"):
        if not isinstance(value, list | tuple):
            raise BadRequestError(f"filter {key} {op} needs a list of values, got {value!r}")
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
    try:
        return Condition(key=key, op=op, value=value)
    except ValidationError as e:
        raise BadRequestError(f"filter {key} {op}: {problem_text(e.errors()[0])}") from e


def problem_text(err: Any) -> str:
    """The message of one pydantic error, without pydantic's ``Value error,`` prefix."""
    return str(err["msg"]).removeprefix("Value error, ")


def combine(*exprs: FilterExpr | None) -> FilterExpr:
    """AND of several expressions, skipping empty ones."""
    parts: list[Condition | FilterExpr] = [e for e in exprs if e is not None and not e.is_empty()]
    if len(parts) == 1 and isinstance(parts[0], FilterExpr):
        return parts[0]
    return FilterExpr(parts=parts)


def widen_languages(expr: FilterExpr, stored: Callable[[], Collection[str]]) -> FilterExpr:
    """``expr`` with each ``lang`` code that has no region widened to the codes of its family
    among ``stored()`` (the corpus's codes, asked only when ``expr`` tests ``lang``):
    ``lang = pt`` becomes ``lang in [pt, pt-BR]``, ``lang != pt`` becomes ``lang nin [pt,
    pt-BR]``. Parts without a ``lang`` test are kept as they are (a sealed part stays sealed)."""
    if not any(c.key in LANGUAGE_KEYS for c in expr.conditions()):
        return expr
    family: dict[str, list[str]] = {}
    for code in stored():
        family.setdefault(primary_code(code), []).append(code)

    def widened(part: Condition | FilterExpr) -> Condition | FilterExpr:
        if isinstance(part, Condition):
            return _widened(part, family)
        if not any(c.key in LANGUAGE_KEYS for c in part.conditions()):
            return part
        return FilterExpr(
            mode=part.mode, parts=[widened(p) for p in part.parts], negate=part.negate
        )

    out = widened(expr)
    return out if isinstance(out, FilterExpr) else FilterExpr(parts=[out])


def _widened(cond: Condition, family: dict[str, list[str]]) -> Condition:
    """One condition, its bare language codes widened to their ``family``."""
    if cond.key not in LANGUAGE_KEYS or cond.op not in ("eq", "ne", "in", "nin"):
        return cond
    asked = cond.value if isinstance(cond.value, list) else [cond.value]
    codes = list(asked)
    for code in asked:
        if isinstance(code, str) and "-" not in code:
            codes.extend(family.get(code, []))
    codes = list(dict.fromkeys(codes))
    if codes == asked:
        return cond
    return Condition(key=cond.key, op="nin" if cond.op in ("ne", "nin") else "in", value=codes)
