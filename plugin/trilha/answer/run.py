"""One UC09 run's state, carried from node to node: the request, what each node found, and the
trace being written."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from trilha.answer.context import Piece
from trilha.answer.extractive import Composed
from trilha.answer.types import (
    Answer,
    AnswerCitation,
    AnswerMetrics,
    AnswerSentence,
    AnswerTrace,
    AskRequest,
    Cost,
    NoAnswer,
    RetrievalCounts,
)
from trilha.index.filters import FilterExpr
from trilha.types import Hit, StageTrace, Trace


@dataclass(repr=False)
class Run:
    """What one question has gathered so far (see the workflow's nodes)."""

    request: AskRequest
    trace_id: str = field(default_factory=lambda: f"a-{uuid.uuid4().hex[:16]}")
    text: str = ""
    lang: str | None = None
    query_valid: bool = False
    query_filters: dict[str, Any] = field(default_factory=dict)
    spent: tuple[str, ...] = ()
    filters: FilterExpr | None = None
    candidates: list[Hit] = field(default_factory=list)
    search: Trace | None = None
    reranked: list[Hit] = field(default_factory=list)
    rerank_model: str = "none"
    pieces: list[Piece] = field(default_factory=list)
    composed: Composed | None = None
    sentences: list[AnswerSentence] = field(default_factory=list)
    citations: list[AnswerCitation] = field(default_factory=list)
    answer_text: str = ""
    masked: Counter[str] = field(default_factory=Counter)
    stop_reason: str | None = None
    warnings: list[str] = field(default_factory=list)
    nodes: list[StageTrace] = field(default_factory=list)

    def __repr__(self) -> str:
        """A short summary: the workflow runtime writes ``repr`` of every event it passes, and
        the dataclass's own (each candidate's whole text) cost ~30 ms of an 80 ms answer."""
        return (
            f"Run({self.trace_id}, {self.request.question[:40]!r}, "
            f"{len(self.candidates)} candidates, {len(self.reranked)} reranked, "
            f"{len(self.nodes)} nodes)"
        )

    @contextmanager
    def node(self, name: str) -> Iterator[None]:
        """Time a node and append it to the trace."""
        start = time.perf_counter()
        entry = StageTrace(name=name, latency_ms=0.0)
        self.nodes.append(entry)
        try:
            yield
        finally:
            entry.latency_ms = (time.perf_counter() - start) * 1000.0

    def note(self, count: int | None, note: str | None = None) -> None:
        """Set the count (and a note) of the node now running."""
        self.nodes[-1].count = count
        self.nodes[-1].note = note

    def query_payload(self) -> dict[str, Any]:
        """Seed 000's ``query`` object: ``{valid, text, filters}``."""
        filters: dict[str, Any] = dict(self.query_filters)
        if self.filters is not None:
            filters["expression"] = self.filters.model_dump(mode="json")
        return {"valid": self.query_valid, "text": self.text, "filters": filters}

    def answer(self, no_answer: NoAnswer | None = None) -> Answer:
        """The :class:`Answer` so far; ``no_answer`` when an edge stopped the run."""
        composed = self.composed or Composed([])
        search = self.search
        trace = AnswerTrace(
            trace_id=self.trace_id,
            stages=self.nodes,
            search=search,
            provider=composed.provider,
            model=composed.model,
            principal=self.request.principal.describe(),
            project_id=self.request.project_id,
            query_filters=self.query_filters,
            context_tokens=sum(p.tokens for p in self.pieces),
            pii_masked=dict(self.masked),
            warnings=[*self.warnings, *composed.warnings],
        )
        metrics = AnswerMetrics(
            cost=Cost(tokens_in=composed.tokens_in, tokens_out=composed.tokens_out),
            retrieval=RetrievalCounts(
                bm25_hits=search.bm25_hits if search else 0,
                ann_hits=search.ann_hits if search else 0,
                rerank_kept=len(self.reranked),
            ),
        )
        return Answer(
            answer=self.answer_text,
            citations=self.citations,
            trace_id=self.trace_id,
            metrics=metrics,
            sentences=self.sentences,
            lang=self.lang,
            no_answer=no_answer,
            trace=trace,
        )
