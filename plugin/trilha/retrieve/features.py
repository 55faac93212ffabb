"""Feature search (seed 001, F11): structured search over the fields extracted per document.

Fields live in each unit's ``extra`` (a document's front matter or records, or the Groq
extractor at ingest when configured: :data:`FEATURE_FIELDS`). Nine filters combine with AND,
each with the seed's semantics:

* ``categorias`` — any of the listed categories (OR/ANY);
* ``dispositivo_norma``, ``resultado``, ``tipo_decisao``, ``tipo_recurso``, ``ministro_relator``
  (stored as ``ministro_relator``, or as trilha's ``ministro``, which ingest case-folds and is
  compared so) — exact and case-sensitive (a field
  holding a list matches when one element does);
* ``unanimidade`` — boolean;
* ``argumento_vencedor``, ``argumento_perdedor`` — partial, case-insensitive (SQL ``ILIKE
  '%…%'``).

Only units the caller may see are read (the one compiled policy); results are documents, each
with its fields and a citation, newest first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from trilha.access.principal import Principal
from trilha.errors import BadRequestError, one_line
from trilha.index.filters import fold_case
from trilha.types import Citation, Hit, StageScores, TextUnit

if TYPE_CHECKING:
    from trilha.workspace import Workspace

#: The fields a decision may carry (seed 001 names 21 and filters on the first nine).
FEATURE_FIELDS = (
    "categorias", "dispositivo_norma", "resultado", "unanimidade", "tipo_decisao",
    "tipo_recurso", "ministro_relator", "argumento_vencedor", "argumento_perdedor",
    "tribunal", "orgao_julgador", "data_julgamento", "classe_processual", "numero_processo",
    "assunto", "tese", "fundamentos", "precedentes_citados", "partes", "valor_condenacao",
    "resumo",
)  # fmt: skip
_EXACT = ("dispositivo_norma", "resultado", "tipo_decisao", "tipo_recurso", "ministro_relator")
_PARTIAL = ("argumento_vencedor", "argumento_perdedor")


class FeatureFilters(BaseModel):
    """The nine filters of seed 001's feature search, AND-ed (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    categorias: list[str] | None = Field(None, description="Any of these categories.")
    dispositivo_norma: str | None = Field(None, description="Exact, e.g. 'CDC', 'CC/2002'.")
    resultado: str | None = Field(None, description="Exact, case-sensitive.")
    unanimidade: bool | None = Field(None, description="Unanimous decision or not.")
    tipo_decisao: str | None = Field(None, description="Exact, case-sensitive.")
    tipo_recurso: str | None = Field(None, description="Exact, case-sensitive.")
    ministro_relator: str | None = Field(None, description="Exact, case-sensitive.")
    argumento_vencedor: str | None = Field(None, description="Partial, case-insensitive.")
    argumento_perdedor: str | None = Field(None, description="Partial, case-insensitive.")

    @field_validator("categorias")
    @classmethod
    def _some(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and not v:
            raise ValueError("an empty list matches nothing; leave categorias out or name some")
        return v

    def matches(self, extra: dict[str, Any]) -> bool:
        """Whether a unit's fields pass every filter given."""
        if self.categorias is not None and not set(_values(extra.get("categorias"))) & set(
            self.categorias
        ):
            return False
        for name in _EXACT:
            wanted = getattr(self, name)
            if wanted is not None and not _exact(extra, name, wanted):
                return False
        if self.unanimidade is not None and extra.get("unanimidade") is not self.unanimidade:
            return False
        for name in _PARTIAL:
            wanted = getattr(self, name)
            if wanted is not None and not any(
                wanted.casefold() in str(v).casefold() for v in _values(extra.get(name))
            ):
                return False
        return True


#: Older names a field may be stored under (trilha's own ``ministro`` filter field).
_ALIASES = {"ministro_relator": "ministro"}


def _field(extra: dict[str, Any], name: str) -> Any:
    value = extra.get(name)
    return extra.get(_ALIASES[name]) if value is None and name in _ALIASES else value


def _exact(extra: dict[str, Any], name: str, wanted: str) -> bool:
    """``wanted`` is (one of) the field's values; under an alias, compared as it is stored
    (``ministro`` is stored case-folded for trilha's own filter)."""
    alias = _ALIASES.get(name)
    if name in extra or alias is None:
        return wanted in _values(extra.get(name))
    return fold_case(alias, wanted) in _values(extra.get(alias))


def _validated(filters: dict[str, Any]) -> FeatureFilters:
    try:
        return FeatureFilters.model_validate(filters)
    except ValidationError as e:
        raise BadRequestError(f"invalid feature filters: {one_line(e)}") from None


def _values(raw: Any) -> list[Any]:
    if raw is None:
        return []
    return list(raw) if isinstance(raw, list | tuple) else [raw]


class FeatureDocument(BaseModel):
    """A document whose fields passed the filters."""

    doc_id: str
    title: str | None
    date: str | None
    features: dict[str, Any] = Field(description="Its fields among FEATURE_FIELDS.")
    citation: Citation = Field(description="Its first unit.")


class FeatureResult(BaseModel):
    """Matching documents (at most ``limit``) and how many matched in all."""

    documents: list[FeatureDocument]
    total: int


def feature_search(
    ws: Workspace,
    filters: FeatureFilters | dict[str, Any],
    principal: Principal | None = None,
    limit: int = 50,
) -> FeatureResult:
    """The documents the principal may see whose fields pass ``filters``, newest first."""
    wanted = filters if isinstance(filters, FeatureFilters) else _validated(filters)
    lexical = ws.searcher.lexical
    mask = ws.searcher.policies.get(principal or Principal.anonymous()).row_mask(lexical.columns)
    first: dict[str, TextUnit] = {}
    for unit in lexical.units_in(mask):
        if unit.doc_id not in first and wanted.matches(unit.extra):
            first[unit.doc_id] = unit
    ordered = sorted(first.values(), key=lambda u: (u.date or "", u.doc_id), reverse=True)
    docs = [
        FeatureDocument(
            doc_id=u.doc_id,
            title=u.title,
            date=u.date,
            features={
                k: _field(u.extra, k) for k in FEATURE_FIELDS if _field(u.extra, k) is not None
            },
            citation=Citation.of(Hit(unit=u, scores=StageScores())),
        )
        for u in ordered[:limit]
    ]
    return FeatureResult(documents=docs, total=len(ordered))
