"""``trilha eval --answers``: groundedness, citation precision and cited relevance of answers.

On a BEIR folder every judged query of the split is asked anonymously; without one, the demo's
questions (``samples/questions.yaml``) are asked over the sample corpus, each as its user. Each
answer is scored by :mod:`trilha.answer.grounding` (its method is in the report), and the
latency of each ``ask`` is kept (warm: the first ``WARMUP`` questions are asked once untimed;
the result cache is off).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from tqdm.auto import tqdm

from trilha.access.directory import find_principal
from trilha.access.principal import Principal
from trilha.answer import Answer, aask, ask
from trilha.answer.grounding import AnswerScore, Judge, make_judge, score_answer
from trilha.errors import TrilhaError
from trilha.eval.beir import load_beir
from trilha.eval.runner import default_workspace, ingest_dataset, write_json
from trilha.eval.timing import WARMUP, Call, latency_summary
from trilha.rerank.cross_encoder import CrossEncoderReranker
from trilha.retrieve.cache import MemoryStore, ResultCache
from trilha.samples import load_samples
from trilha.settings import TrilhaSettings, uncached
from trilha.types import Trace
from trilha.workspace import Workspace


@dataclass(frozen=True)
class Question:
    """One question to answer, who asks it, and its judged documents (doc id -> grade)."""

    qid: str
    text: str
    principal: Principal | None
    relevant: dict[str, int]


def run_answer_eval(
    data_dir: Path | str | None,
    out_path: Path | str,
    workspace_dir: Path | str | None = None,
    *,
    split: str = "test",
    max_queries: int | None = None,
    rerank: bool = False,
    lang: str | None = None,
    settings: TrilhaSettings | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Answer and score every question (see the module docstring); writes ``out_path``."""
    start = time.perf_counter()
    name = Path(data_dir).name if data_dir else "demo"
    folder = Path(workspace_dir) if workspace_dir else default_workspace(Path(out_path), name)
    settings = uncached(settings)
    judge = make_judge(settings.nli_model)
    with Workspace.open(folder, settings, create=True) as ws:
        questions = _questions(ws, data_dir, split, lang, progress)[:max_queries]
        answers = asyncio.run(_answer_all(ws, questions, rerank, progress))
        scores = _scored(ws, [a for a, _ in answers], questions, judge)
        reranker = _reranker(ws) if rerank else None
    report = {
        "dataset": name,
        "split": split if data_dir else None,
        "n_questions": len(questions),
        "judge": judge.method,
        "composer": _composers(a for a, _ in answers),
        "rerank": rerank,
        "reranker": reranker,
        **summary([a for a, _ in answers], scores, [ms for _, ms in answers]),
        "seconds": round(time.perf_counter() - start, 2),
        "questions": [
            _row(q, a, s) for q, (a, _), s in zip(questions, answers, scores, strict=True)
        ],
    }
    write_json(report, Path(out_path))
    return report


def _reranker(ws: Workspace) -> dict[str, Any] | None:
    """The cross-encoder that reranked (model, backend, precision, batch), as the bench
    reports it; None for another kind of reranker."""
    try:
        ce = ws.reranker
    except TrilhaError:  # none configured: ask answered without reranking, and said so
        return None
    if not isinstance(ce, CrossEncoderReranker):
        return None
    return {
        "model": ce.model_name,
        "backend": ce.backend,
        "precision": ce.precision,
        "batch_size": ce.batch_size,
    }


def _scored(
    ws: Workspace, answers: Sequence[Answer], questions: Sequence[Question], judge: Judge
) -> list[AnswerScore]:
    """Each answer scored against the full text of the units it cites."""
    units = ws.units([c.unit_id for a in answers for c in a.citations])
    pairs = zip(answers, questions, strict=True)
    return [score_answer(a, units, q.relevant, judge) for a, q in pairs]


def _questions(
    ws: Workspace, data_dir: Path | str | None, split: str, lang: str | None, progress: bool
) -> list[Question]:
    if data_dir is None:
        return demo_questions(ws)
    ds = load_beir(Path(data_dir), split)
    ingest_dataset(ws, ds, progress, lang)
    return [Question(q.query_id, q.text, None, ds.qrels.get(q.query_id, {})) for q in ds.queries]


def demo_questions(ws: Workspace) -> list[Question]:
    """The sample corpus indexed into ``ws`` (with its principals.yaml), and its questions."""
    load_samples(ws)
    data = yaml.safe_load((files("trilha.samples") / "questions.yaml").read_text("utf-8"))
    return [
        Question(
            f"demo-{n}",
            item["question"],
            find_principal(ws.path, item["user"]) if item.get("user") else None,
            dict.fromkeys(item["relevant"], 1),
        )
        for n, item in enumerate(data["questions"], start=1)
    ]


async def _answer_all(
    ws: Workspace, questions: Sequence[Question], rerank: bool, progress: bool
) -> list[tuple[Answer, float]]:
    for q in questions[:WARMUP]:
        await aask(ws, q.text, principal=q.principal, rerank=rerank)
    out = []
    for q in tqdm(questions, desc="answers", unit="q", disable=not progress):
        begin = time.perf_counter()
        answer = await aask(ws, q.text, principal=q.principal, rerank=rerank)
        out.append((answer, (time.perf_counter() - begin) * 1000.0))
    return out


def summary(
    answers: Sequence[Answer], scores: Sequence[AnswerScore], ms: Sequence[float]
) -> dict[str, Any]:
    """The run's figures: answered share, groundedness (mean over answered), citation
    precision and cited relevance (pooled), latency percentiles, personal data masked."""
    answered = [s for a, s in zip(answers, scores, strict=True) if a.answered and a.sentences]
    pairs = sum(s.pairs for s in answered)
    cited = sum(s.cited_docs for s in answered if s.relevant_cited_docs is not None)
    relevant = sum(s.relevant_cited_docs or 0 for s in answered)
    masked: Counter[str] = Counter()
    for a in answers:
        masked.update(a.trace.pii_masked)
    n = len(answered)
    return {
        "answered": round(n / len(answers), 4) if answers else 0.0,
        "groundedness": round(sum(s.groundedness for s in answered) / n, 4) if n else None,
        "citation_precision": (
            round(sum(s.precise_pairs for s in answered) / pairs, 4) if pairs else None
        ),
        "cited_relevant": round(relevant / cited, 4) if cited else None,
        "answers_citing_relevant": (
            round(sum((s.relevant_cited_docs or 0) > 0 for s in answered) / n, 4) if n else None
        ),
        "latency": latency_summary(ms) if ms else {},
        "pii_masked": dict(masked),
    }


def _composers(answers: Any) -> list[str]:
    return sorted({f"{a.trace.provider}/{a.trace.model}" for a in answers})


def _row(q: Question, a: Answer, s: AnswerScore) -> dict[str, Any]:
    return {
        "id": q.qid,
        "question": q.text,
        "answer": a.answer,
        "no_answer": a.no_answer.edge if a.no_answer else None,
        "cited": [c.doc_id for c in a.citations],
        "groundedness": round(s.groundedness, 4),
        "citation_precision": round(s.citation_precision, 4),
        "relevant_cited": s.relevant_cited_docs,
    }


#: ``ask`` answered from the result cache (each question asked once before timing).
ASK_CACHED = "ask_cached"


def ask_calls(ws: Workspace, rerank: bool) -> dict[str, Call]:
    """``ask`` as timed calls for ``trilha bench``: offline (extractive), with rerank of 40
    keeping 12 (when a reranker is given), and answered from the cache."""

    def asking(**fields: Any) -> Call:
        def call(text: str) -> Trace | None:
            return ask(ws, text, **fields).trace.search

        return call

    calls = {"ask": asking()}
    if rerank:
        calls["ask_rerank"] = asking(rerank=True, k=40, top_n=12)
    cache = ResultCache(MemoryStore(ttl_s=86_400, max_entries=1_000_000))

    def cached(text: str) -> None:
        before, ws.cache = ws.cache, cache
        try:
            ask(ws, text)
        finally:
            ws.cache = before

    calls[ASK_CACHED] = cached
    return calls
