"""The (question, window) pairs ``ask`` hands its cross-encoder, without scoring them: what a
smaller reranker is taught on (:mod:`trilha.rerank.distil`), so that it learns the inputs it
will meet. Each question goes through ParseQuery and HybridRetrieve as an anonymous caller
would ask it (no unit above that clearance is read), and its candidates' windows are chosen
as RerankResults chooses them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from trilha.answer.ask import ask_request
from trilha.answer.nodes import answer_windows, hybrid_retrieve, may_see, parse_query
from trilha.answer.run import Run

if TYPE_CHECKING:
    from trilha.workspace.facade import Workspace


async def arerank_pairs(ws: Workspace, question: str, k: int) -> tuple[str, list[str]]:
    """The normalised question and its ``k`` candidates' windows (none when the question is
    not valid or nothing matches)."""
    run = Run(ask_request(question, rerank=True, k=k))
    with run.node("ParseQuery"):
        parse_query(ws, run)
    if not run.query_valid:
        return run.text, []
    with run.node("HybridRetrieve"):
        await hybrid_retrieve(ws, run)
    candidates = [h for h in run.candidates if may_see(h, run)]
    return run.text, answer_windows(run, candidates)


def rerank_pairs(
    ws: Workspace, questions: Iterable[str], k: int
) -> Iterator[tuple[str, list[str]]]:
    """:func:`arerank_pairs` for each question, in order, from synchronous code."""
    with asyncio.Runner() as runner:
        for question in questions:
            yield runner.run(arerank_pairs(ws, question, k))
