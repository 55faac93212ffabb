"""Dual-vector search (seed 001, F10): the facts and the legal thesis of a case, encoded
separately, each searched on the dense side, and a divergence report.

Both texts are encoded in one call and each searches the dense index for ``top_k`` units under
the caller's principal and filters. Every unit of the union gets its cosine to *both* vectors
(from its stored vector), and is classified by the lists it made: ``overlap`` (similar in facts
and in law), ``fact_only`` (similar facts, different law) or ``thesis_only`` (same thesis,
different facts). Hits are ordered by the mean of the two cosines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from trilha.errors import BadRequestError
from trilha.types import Citation, Hit, TextUnit, Trace

if TYPE_CHECKING:
    from trilha.workspace import Workspace

Category = Literal["fact_only", "thesis_only", "overlap"]
CATEGORIES: tuple[Category, ...] = ("overlap", "fact_only", "thesis_only")


class DualHit(BaseModel):
    """One unit with its score and rank against the facts and against the thesis."""

    unit: TextUnit = Field(description="The unit.")
    category: Category = Field(description="Which lists it made: overlap, fact_only, thesis_only.")
    fact_score: float = Field(description="Cosine to the facts' vector.")
    thesis_score: float = Field(description="Cosine to the thesis' vector.")
    fact_rank: int | None = Field(None, description="1-based rank in the facts' list.")
    thesis_rank: int | None = Field(None, description="1-based rank in the thesis' list.")
    citation: Citation = Field(description="Where it comes from.")


class DualResult(BaseModel):
    """The divergence report: hits, how many of each category, and both searches' traces."""

    hits: list[DualHit] = Field(description="Union of both lists, by mean cosine.")
    counts: dict[str, int] = Field(description="Hits per category.")
    facts_trace: Trace = Field(description="The facts' search.")
    thesis_trace: Trace = Field(description="The thesis' search.")


def dual_search(
    ws: Workspace, facts: str, thesis: str, *, top_k: int = 10, **fields: Any
) -> DualResult:
    """Search ``facts`` and ``thesis`` separately (see the module docstring); ``fields`` are
    :class:`~trilha.request.SearchRequest` fields (``filters``, ``principal``)."""
    if not facts.strip() or not thesis.strip():
        raise BadRequestError("dual search needs both the facts and the thesis; give both texts")
    vectors = ws.embedder.encode_queries([facts, thesis])
    common = {"top_k": top_k, "sides": ("semantic",), "kg": False, **fields}
    by_facts = ws.search(facts, vector=vectors[0], **common)
    by_thesis = ws.search(thesis, vector=vectors[1], **common)
    ranks = [{h.unit.unit_id: n for n, h in enumerate(r.hits, 1)} for r in (by_facts, by_thesis)]
    units = {h.unit.unit_id: h for h in [*by_facts.hits, *by_thesis.hits]}
    stored = ws.vectors(list(units))
    hits = [
        _dual(units[uid], stored.get(uid), vectors, ranks[0].get(uid), ranks[1].get(uid))
        for uid in units
    ]
    hits.sort(key=lambda h: (-(h.fact_score + h.thesis_score), h.unit.unit_id))
    counts = {c: sum(h.category == c for h in hits) for c in CATEGORIES}
    return DualResult(
        hits=hits, counts=counts, facts_trace=by_facts.trace, thesis_trace=by_thesis.trace
    )


def _dual(
    hit: Hit, vector: Any, queries: Any, fact_rank: int | None, thesis_rank: int | None
) -> DualHit:
    if vector is not None:
        fact, thesis = (float(np.dot(vector, q)) for q in queries)
    else:  # no stored vector: the score of the list it made, nothing for the other
        fact = thesis = float(hit.scores.semantic or 0.0)
    category: Category = (
        "overlap" if fact_rank and thesis_rank else "fact_only" if fact_rank else "thesis_only"
    )
    return DualHit(
        unit=hit.unit,
        category=category,
        fact_score=fact,
        thesis_score=thesis,
        fact_rank=fact_rank,
        thesis_rank=thesis_rank,
        citation=Citation.of(hit),
    )
