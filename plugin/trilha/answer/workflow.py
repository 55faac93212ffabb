"""UC09 (seed 000) as a LlamaIndex Workflow: ParseQuery → HybridRetrieve → RerankResults →
BuildAnswer.

Each node checks its input and its output against the seed's JSON Schemas
(:mod:`trilha.answer.schemas`) and records itself in the trace. The seed's edge conditions are
kept: ``query.valid`` (ParseQuery → HybridRetrieve), ``candidates.count > 0`` (→ RerankResults),
``reranked.count > 0`` (→ BuildAnswer); a failed condition ends the run with an :class:`Answer`
whose ``no_answer`` names the edge, never an exception. Every read is the workspace's search
under the request's principal (the one compiled policy); BuildAnswer checks each unit against
the same rule again before any text of it is used (sensitivity above the caller's clearance
never reaches the context).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from llama_index.core.workflow import Event, StartEvent, StopEvent, Workflow, step

from trilha.answer import nodes
from trilha.answer.run import Run
from trilha.answer.types import Answer, NoAnswer

if TYPE_CHECKING:
    from trilha.answer.compose import LLMComposer
    from trilha.workspace.facade import Workspace


class Parsed(Event):
    """ParseQuery's output, for HybridRetrieve."""

    run: Run


class Candidates(Event):
    """HybridRetrieve's output, for RerankResults."""

    run: Run


class Reranked(Event):
    """RerankResults' output, for BuildAnswer."""

    run: Run


class UC09Workflow(Workflow):
    """Seed 000's UC09 over a workspace; ``run(run=Run(...))`` gives an :class:`Answer`."""

    def __init__(self, workspace: Workspace, llm: LLMComposer | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("timeout", 120.0)
        super().__init__(**kwargs)
        self.workspace = workspace
        self.llm = llm

    @step
    async def parse_query(self, ev: StartEvent) -> Parsed | StopEvent:
        """Normalise the question, read its explicit filters; stop unless ``query.valid``."""
        run: Run = ev.get("run")
        with run.node("ParseQuery"):
            nodes.parse_query(self.workspace, run)
        if not run.query_valid:
            return self._stop(run, "ParseQuery → HybridRetrieve", "query.valid")
        return Parsed(run=run)

    @step
    async def hybrid_retrieve(self, ev: Parsed) -> Candidates | StopEvent:
        """BM25 ∪ ANN for ``k`` candidates; stop unless ``candidates.count > 0``."""
        run = ev.run
        with run.node("HybridRetrieve"):
            await nodes.hybrid_retrieve(self.workspace, run)
        if not run.candidates:
            return self._stop(run, "HybridRetrieve → RerankResults", "candidates.count > 0")
        return Candidates(run=run)

    @step
    async def rerank_results(self, ev: Candidates) -> Reranked | StopEvent:
        """Rerank and keep ``top_n`` (or keep the fused ``top_n``); stop unless
        ``reranked.count > 0``."""
        run = ev.run
        with run.node("RerankResults"):
            await asyncio.to_thread(nodes.rerank_results, self.workspace, run)
        if not run.reranked:
            return self._stop(run, "RerankResults → BuildAnswer", "reranked.count > 0")
        return Reranked(run=run)

    @step
    async def build_answer(self, ev: Reranked) -> StopEvent:
        """Select the context, compose the cited answer, mask personal data."""
        run = ev.run
        with run.node("BuildAnswer"):
            await asyncio.to_thread(nodes.build_answer, self.workspace, run, self.llm)
        return StopEvent(result=run.answer())

    @staticmethod
    def _stop(run: Run, edge: str, condition: str) -> StopEvent:
        reason = run.stop_reason or "nothing to go on with"
        return StopEvent(result=run.answer(NoAnswer(edge=edge, condition=condition, reason=reason)))


async def arun(workflow: UC09Workflow, run: Run) -> Answer:
    """Run ``workflow`` for ``run`` and return its :class:`Answer` (latency measured here)."""
    start = time.perf_counter()
    answer: Answer = await workflow.run(run=run)
    answer.metrics.latency_ms = (time.perf_counter() - start) * 1000.0
    return answer
