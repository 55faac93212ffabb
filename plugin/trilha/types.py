"""Boundary types shared by every stage: units, filters, scores, hits, citations and traces."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Generic, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from trilha.errors import BadRequestError

#: A retrieval side of the hybrid search.
Side = Literal["bm25", "semantic"]
Scalar = str | int | float | bool
MetaValue = Scalar | list[str] | None

_YYYYMMDD = re.compile(r"^\d{8}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: Values of ``visibility`` a unit may carry (:mod:`trilha.access.policy` says who sees each).
VISIBILITIES = ("public", "org", "project", "private", "restricted")
#: The ACL stored for a unit that has none; it is not a role anyone may hold.
OPEN_ACL = "*"
#: Longest question accepted, in characters, by every door that takes a question: ``ask`` and
#: its workflow, the orchestrator's request and pre-query, and the HTTP bodies (``/v1/query``,
#: ``/v1/retrieve``, ``/v1/context``).
MAX_QUESTION_CHARS = 4000
#: Longest search query a :class:`~trilha.request.SearchRequest` takes (``trilha query``, the
#: retriever, the tools, ``eval``, ``bench``): room for BEIR's argument-length queries.
MAX_QUERY_CHARS = 20_000


def checked_text(text: object, *, noun: str = "question", limit: int = MAX_QUESTION_CHARS) -> str:
    """``text`` stripped of surrounding whitespace; empty, not a string, or longer than
    ``limit`` characters (counted before stripping) is a one-line :class:`BadRequestError`."""
    if not isinstance(text, str):
        raise BadRequestError(f"the {noun} is not text ({type(text).__name__}); pass a string")
    if not text.strip():
        raise BadRequestError(f"the {noun} is empty; pass some text")
    if len(text) > limit:
        raise BadRequestError(
            f"the {noun} has {len(text)} characters; shorten it to {limit} or less"
        )
    return text.strip()


def date_to_int(value: str | date | datetime | None) -> int | None:
    """Turn ``YYYYMMDD``, ``YYYY-MM-DD`` or an ISO datetime into the integer ``YYYYMMDD``."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        value = value.date()
    if isinstance(value, date):
        return value.year * 10000 + value.month * 100 + value.day
    text = str(value).strip()
    if _YYYYMMDD.match(text):
        date(int(text[:4]), int(text[4:6]), int(text[6:]))  # validates the calendar date
        return int(text)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as e:
        raise ValueError(f"not a date: {value!r}; use YYYYMMDD or YYYY-MM-DD") from e
    return date_to_int(parsed)


class TextUnit(BaseModel):
    """One retrievable passage of a document, with the F1 metadata."""

    model_config = ConfigDict(frozen=True)

    unit_id: str = Field(description="Stable id: '<doc_id>#<ordinal>', the identity everywhere.")
    doc_id: str = Field(description="Id of the document the unit belongs to.")
    text: str = Field(description="The passage text that is indexed and shown.")
    ordinal: int = Field(0, ge=0, description="Position of the unit inside its document.")
    title: str | None = Field(None, description="Document title.")
    page: int | None = Field(None, description="1-based page the unit starts on, if known.")
    section: str | None = Field(None, description="Section number or path, e.g. '2.1'.")
    heading: str | None = Field(None, description="Nearest heading above the unit.")
    tags: list[str] = Field(default_factory=list, description="Free tags of the document.")
    setor: str | None = Field(None, description="Sector / department (taxonomy).")
    tema: str | None = Field(None, description="Theme (taxonomy).")
    lang: str = Field("en", description="Language code: 'en', 'pt', ...")
    sensitivity: int = Field(0, ge=0, strict=True, description="0 public … higher: confidential.")
    owner_id: str | None = Field(None, description="User who owns the content (always sees it).")
    visibility: str = Field("public", description="public, org, project, private or restricted.")
    org_id: str | None = Field(None, description="Organisation whose members see an 'org' unit.")
    project_id: str | None = Field(None, description="Project whose members see it ('project').")
    acl: list[str] = Field(
        default_factory=list, description="Roles or groups allowed to see it; empty: no ACL."
    )
    hierarchy_level: int = Field(0, ge=0, strict=True, description="Least level to see it.")
    created_at: str | None = Field(None, description="ISO timestamp of the source document.")
    date: str | None = Field(None, description="Date of the content (decision, policy), ISO.")
    source_type: str = Field("text", description="'markdown', 'text', 'jsonl', 'beir', ...")
    source_ref: str | None = Field(None, description="Where the document came from (path, URL).")
    extra: dict[str, MetaValue] = Field(
        default_factory=dict,
        description="Domain fields (ministro, resultado, tipo_recurso...), filterable by name.",
    )

    @field_validator("unit_id", "doc_id")
    @classmethod
    def _valid_id(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("is empty; give the document an id")
        if _CONTROL.search(v):
            raise ValueError(f"{v!r} has control characters; remove them")
        return v

    @field_validator("date", "created_at")
    @classmethod
    def _valid_date(cls, v: str | None) -> str | None:
        try:
            date_to_int(v)
        except ValueError:
            raise ValueError(f"{v!r} is not a date; use YYYY-MM-DD") from None
        return v

    @field_validator("visibility")
    @classmethod
    def _known_visibility(cls, v: str) -> str:
        if v not in VISIBILITIES:
            raise ValueError(f"{v!r} is not one of {', '.join(VISIBILITIES)}")
        return v

    @field_validator("extra")
    @classmethod
    def _extra_is_extra(cls, v: dict[str, MetaValue]) -> dict[str, MetaValue]:
        clash = sorted(set(v) & (set(cls.model_fields) | {"date_num"}))
        if clash:
            raise ValueError(f"repeats the unit field(s) {', '.join(clash)}; set them directly")
        return v

    @field_validator("acl")
    @classmethod
    def _valid_acl(cls, v: list[str]) -> list[str]:
        for role in v:
            if not role.strip() or _CONTROL.search(role) or role == OPEN_ACL:
                raise ValueError(f"has an invalid role {role!r}; name roles or groups")
        return sorted(set(v))

    @model_validator(mode="after")
    def _scope_named(self) -> TextUnit:
        needs = {"org": "org_id", "project": "project_id", "private": "owner_id"}
        key = needs.get(self.visibility)
        if key is not None and not getattr(self, key):
            raise ValueError(f"visibility {self.visibility!r} needs {key}; set it or the default")
        if self.visibility == "restricted" and not self.acl:
            raise ValueError("visibility 'restricted' needs acl (the roles or groups allowed)")
        return self

    def payload(self) -> dict[str, Any]:
        """The flat metadata stored beside the vector and in the lexical columns; ``acl`` is
        ``[OPEN_ACL]`` when the unit has none, so the compiled policy tests it positively."""
        data = self.model_dump(exclude={"text", "extra"})
        data["acl"] = self.acl or [OPEN_ACL]
        data.update(self.extra)
        data["date_num"] = date_to_int(self.date or self.created_at)
        return data


class SearchFilters(BaseModel):
    """trilha's own filter model: the fields of seeds 001 and 002, AND-ed together.

    List fields match when the unit has any of the listed values; an empty list is refused.
    ``ministro`` is matched case-insensitively (``trilha.index.filters`` holds the rules)."""

    model_config = ConfigDict(extra="forbid")

    tags: list[str] | None = Field(None, description="Unit has at least one of these tags.")
    setor: str | list[str] | None = Field(None, description="Sector equals (any of) this.")
    tema: str | list[str] | None = Field(None, description="Theme equals (any of) this.")
    lang: str | list[str] | None = Field(None, description="Language equals (any of) this.")
    ministro: str | None = Field(None, description="Judge, matched case-insensitively.")
    data_inicio: str | None = Field(None, description="Earliest date, YYYYMMDD or YYYY-MM-DD.")
    data_fim: str | None = Field(None, description="Latest date, YYYYMMDD or YYYY-MM-DD.")
    tipos_recurso: list[str] | None = Field(None, description="Appeal type is any of these.")
    resultado: str | None = Field(None, description="Decision outcome equals this.")
    doc_ids: list[str] | None = Field(None, description="Restrict to these documents.")
    max_sensitivity: int | None = Field(None, ge=0, strict=True, description="Exclude those above.")

    @field_validator("tags", "setor", "tema", "lang", "tipos_recurso", "doc_ids")
    @classmethod
    def _non_empty(cls, v: str | list[str] | None) -> str | list[str] | None:
        if isinstance(v, list) and not v:
            raise ValueError("an empty list matches nothing; leave the field out or give a value")
        return v

    @field_validator("data_inicio", "data_fim")
    @classmethod
    def _valid_date(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("an empty date matches nothing; give YYYY-MM-DD or leave it out")
        date_to_int(v)
        return v

    @model_validator(mode="after")
    def _ordered_dates(self) -> SearchFilters:
        lo, hi = date_to_int(self.data_inicio), date_to_int(self.data_fim)
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(f"data_inicio {self.data_inicio} is after data_fim {self.data_fim}")
        return self

    def is_empty(self) -> bool:
        """True when no field restricts anything."""
        return all(v is None for v in self.model_dump().values())


class StageScores(BaseModel):
    """Every score and 1-based rank a unit earned on its way through the pipeline."""

    bm25: float | None = Field(None, description="Raw BM25 score (None: not in the BM25 list).")
    bm25_rank: int | None = Field(None, description="1-based rank in the BM25 list.")
    semantic: float | None = Field(None, description="Cosine similarity from the dense index.")
    semantic_rank: int | None = Field(None, description="1-based rank in the dense list.")
    kg: float | None = Field(None, description="Knowledge-graph boost in [0, 1].")
    fused: float = Field(0.0, description="Score after the merge (weighted or RRF).")
    fused_rank: int | None = Field(None, description="1-based rank after the merge.")
    rerank: float | None = Field(None, description="Cross-encoder score.")
    rerank_rank: int | None = Field(None, description="1-based rank after rerank.")


class Hit(BaseModel):
    """A unit with the scores it earned."""

    model_config = ConfigDict(frozen=True)

    unit: TextUnit = Field(description="The retrieved unit.")
    scores: StageScores = Field(description="Scores and ranks per stage.")

    @property
    def score(self) -> float:
        """The score that orders this hit now: rerank when present, else fused."""
        return self.scores.rerank if self.scores.rerank is not None else self.scores.fused


class Location(BaseModel):
    """The fields every citation has: a document unit's ids and its place in the document. Each
    is optional here, for an orchestrator item from the graph or a conversation cites no unit;
    :class:`Citation` (a search's and an answer's) requires the ids, and the bundle's
    :class:`~trilha.orchestrate.bundle.ItemCitation` adds a label and a node id."""

    doc_id: str | None = Field(None, description="Document id of a document unit.")
    unit_id: str | None = Field(None, description="Unit id of a document unit.")
    page: int | None = Field(None, description="Page, when known.")
    section: str | None = Field(None, description="Section, when known.")
    heading: str | None = Field(None, description="Heading, when known.")
    lang: str | None = Field(None, description="Language of the unit.")

    @classmethod
    def of_unit(cls, unit: TextUnit, **more: Any) -> Self:
        """The location of ``unit``, with the fields ``more`` of the subclass."""
        return cls(
            doc_id=unit.doc_id,
            unit_id=unit.unit_id,
            page=unit.page,
            section=unit.section,
            heading=unit.heading,
            lang=unit.lang,
            **more,
        )


class Citation(Location):
    """Where a retrieved unit comes from."""

    doc_id: str = Field(description="Document id.")
    unit_id: str = Field(description="Unit id.")
    score: float | None = Field(None, description="Final score of the unit.")

    @classmethod
    def of(cls, hit: Hit, **more: Any) -> Self:
        """The citation of a hit, with the fields ``more`` of the subclass."""
        return cls.of_unit(hit.unit, score=hit.score, **more)


class StageTrace(BaseModel):
    """One entry of a trace: a search stage, an answer's workflow node, an orchestration step."""

    name: str = Field(description="Stage name: bm25, dense, merge, rerank, ParseQuery, plan...")
    latency_ms: float = Field(ge=0, description="Wall time of the stage.")
    count: int | None = Field(None, description="Items the stage produced.")
    note: str | None = Field(None, description="What it did, or why it degraded.")


#: The JSON names of a :class:`StepTrace`'s fields that differ from :class:`StageTrace`'s.
_STEP_NAMES = {"name": "step", "note": "detail"}


class StepTrace(StageTrace):
    """A :class:`StageTrace` of the orchestrator (its bundle's steps and the pre-query's): the
    same fields, which its JSON calls ``step`` and ``detail`` for ``name`` and ``note``."""

    model_config = ConfigDict(
        frozen=True,
        alias_generator=lambda field: _STEP_NAMES.get(field, field),
        serialize_by_alias=True,
        validate_by_name=True,
        validate_by_alias=True,
    )


E = TypeVar("E", bound=StageTrace)


class StageLog(BaseModel, Generic[E]):
    """The one trace container: entries in the order they ran, and the degradations met. A
    search's :class:`Trace`, an answer's and a bundle's traces and the pre-query's add what
    they need."""

    stages: list[E] = Field(default_factory=list, description="Stages in order.")
    warnings: list[str] = Field(default_factory=list, description="Degradations and fallbacks.")

    def stage(self, name: str) -> E | None:
        """The last entry of a stage by name."""
        return next((s for s in reversed(self.stages) if s.name == name), None)


class Trace(StageLog[StageTrace]):
    """What happened during one search: stages, counts and degradations."""

    bm25_hits: int = Field(0, description="Candidates from the lexical side.")
    ann_hits: int = Field(0, description="Candidates from the dense side.")
    merge: str | None = Field(None, description="Merge mode used.")
    principal: str | None = Field(None, description="Whose visibility the results respect.")
    fallback: str | None = Field(
        None, description="'bm25_only' or 'dense_only' when one side was empty."
    )
    cache_hit: bool = Field(
        False, description="Served from the result cache (its 'cache' stage has the lookup)."
    )
    expansion_queries: list[str] = Field(
        default_factory=list, description="Variants of the query also searched (stage 2)."
    )


class SearchResult(BaseModel):
    """Hits in order plus the trace that produced them."""

    hits: list[Hit] = Field(description="Ranked hits, best first.")
    trace: Trace = Field(description="What each stage did.")
