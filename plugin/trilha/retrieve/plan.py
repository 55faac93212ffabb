"""From a :class:`~trilha.request.SearchRequest` to the :class:`SearchPlan` a search runs.

:func:`plan` is the only place where a request's ``None`` fields take the settings' defaults,
so every entry point (Python API, retriever, CLI, tools, eval, bench) searches the same way. The
plan is the one type between the request and the sides: every value resolved, the fusion values
held as one :class:`~trilha.retrieve.fusion_table.Fusion` (the query language's, with the
request's ``merge`` and ``weights`` over it).

Candidate counts reconcile seeds 001 and 002: seed 002's ``k`` is the pool wanted before
rerank, split ``k_bm25 = k_vec = ceil(k/2)``; seed 001 has each side fetch ``top_k·3``, at most
100. Each side fetches ``max(top_k, min(cap, max(depth·top_k, ceil(k/2))))`` (depth 3 and
cap 100 unless tuned): the larger of the two seeds' asks, capped, but never fewer than ``top_k``
so that ``top_k`` results come back whenever ``top_k`` units match the filters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field, InstanceOf, ValidationError

from trilha.access.principal import Principal
from trilha.errors import BadRequestError, one_line
from trilha.index.filters import FilterExpr
from trilha.index.tokenize import query_language
from trilha.request import SearchRequest
from trilha.retrieve.fusion_table import ANY_LANG, Fusion, FusionTable
from trilha.settings import Merge, TrilhaSettings, Weights
from trilha.types import Side

#: Pool reranked when a request asks for rerank without ``candidates`` (seed 002's k).
RERANK_POOL = 40
#: Fusions a :class:`FusionTable` keeps chosen (requests' own weights are many; past this many
#: the table resolves them afresh).
CHOSEN_MAX = 256


class SearchPlan(BaseModel):
    """How one search runs, every value resolved (:func:`plan` makes it from a
    :class:`~trilha.request.SearchRequest`); defaults follow seeds 001 and 002."""

    model_config = ConfigDict(frozen=True)

    query: str = Field(description="The query as asked.")
    top_k: int = Field(10, gt=0, le=10_000, description="Hits fused (the rerank pool with rerank).")
    keep: int = Field(10, gt=0, description="Hits returned (after rerank, when it runs).")
    candidates: int | None = Field(None, gt=0, description="Seed 002's k: pool before rerank.")
    rerank: bool = Field(False, description="Rerank the fused hits, keeping ``keep``.")
    expand: bool = Field(False, description="Also search the query's variants.")
    # a Fusion validated when it was made (frozen): not validated again per search
    fusion: InstanceOf[Fusion] = Field(
        default_factory=Fusion, description="Merge, weights, RRF k, depths."
    )
    candidate_cap: int = Field(100, gt=0, description="Per-side fetch cap.")
    doc_penalty: float = Field(0.0, ge=0, lt=1, description="Per-doc duplicate decay.")
    lang: str | None = Field(
        None, description="The query's language, when a per-language fusion entry picked it."
    )
    sides: tuple[Side, ...] = Field(("bm25", "semantic"), description="Sides that run.")
    kg: bool = Field(False, description="Add the knowledge-graph boost (needs a graph).")
    filters: FilterExpr | None = Field(None, description="Applied inside both indices.")
    principal: Principal = Field(
        default_factory=Principal.anonymous,
        description="Whose visibility applies, inside both indices (anonymous: public only).",
    )

    def per_side(self) -> tuple[int, int]:
        """How many candidates the BM25 and the dense side fetch."""
        f = self.fusion
        return (
            per_side_candidates(self.top_k, self.candidates, self.candidate_cap, f.depth_bm25),
            per_side_candidates(self.top_k, self.candidates, self.candidate_cap, f.depth_semantic),
        )


def plan(
    request: SearchRequest,
    settings: TrilhaSettings,
    has_graph: bool,
    fusion: Fusion | None = None,
    lang: str | None = None,
) -> SearchPlan:
    """The search ``request`` asks for, with the settings' defaults where it says nothing.

    ``fusion`` is the merge, weights, RRF k and side depths in force for the query's language
    ``lang`` with the request's ``merge`` and ``weights`` over them (:func:`fusion_for`);
    default: the settings' own values with the request's over them. The KG boost defaults to
    ``TRILHA_KG_BOOST`` when the workspace has a graph; sizes are :func:`sizes`'.
    """
    s = settings
    kg = request.kg if request.kg is not None else (s.kg_boost and has_graph)
    keep, top_k, candidates = sizes(request, s)
    try:
        return SearchPlan(
            query=request.query,
            top_k=top_k,
            keep=keep,
            candidates=candidates,
            rerank=request.rerank,
            expand=request.expand,
            fusion=fusion or Fusion.of_settings(s).overridden(request.merge, request.weights),
            candidate_cap=s.candidate_cap,
            lang=lang,
            doc_penalty=s.doc_penalty,
            sides=request.sides,
            filters=request.filters,
            kg=kg,
            principal=request.principal,
        )
    except ValidationError as e:
        raise BadRequestError(f"invalid search parameters: {one_line(e)}") from e


def fusion_for(
    table: FusionTable,
    query: str,
    langs: Callable[[], Sequence[str]],
    merge: Merge | None = None,
    weights: Weights | None = None,
) -> tuple[str | None, Fusion]:
    """The language ``query`` is searched in (:func:`~trilha.index.language.query_language`
    among the index's ``langs()``) and its fusion from ``table`` with a request's ``merge`` and
    ``weights`` over it, resolved once per (language, merge, weights); (None, the fusion of
    every language) when no layer names a language, so that no query is run through the
    detector (nor the index's languages read) for nothing."""
    lang = query_language(query, langs()) if table.named else None
    key = (lang or ANY_LANG, merge, weights)
    fusion = table.chosen.get(key)
    if fusion is None:
        if len(table.chosen) >= CHOSEN_MAX:
            table.chosen.clear()
        fusion = table.chosen[key] = table.resolve(key[0], merge, weights)[0]
    return lang, fusion


def sizes(request: SearchRequest, s: TrilhaSettings) -> tuple[int, int, int | None]:
    """(hits kept, hits fused, seed 002's pool ``k``). Without rerank, ``top_k`` hits come back
    (default ``TRILHA_TOP_K``). With rerank, a pool of ``candidates`` (default 40, never fewer
    than kept) is fused, reranked, and ``top_k`` (default ``TRILHA_RERANK_TOP_N``) are kept."""
    if request.rerank:
        keep = request.top_k or s.rerank_top_n
        pool = max(request.candidates or RERANK_POOL, keep)
        return keep, pool, pool
    keep = request.top_k or s.top_k
    return keep, keep, request.candidates


def per_side_candidates(top_k: int, candidates: int | None, cap: int, depth: int = 3) -> int:
    """How many candidates a side fetches (module docstring explains the rule)."""
    want = max(depth * top_k, math.ceil(candidates / 2) if candidates else 0)
    return max(top_k, min(cap, want))
