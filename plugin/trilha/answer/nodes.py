"""What each UC09 node does (the workflow in :mod:`trilha.answer.workflow` wires them), each
checking its input and output against seed 000's schemas."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from trilha.access.policy import Access, visible
from trilha.answer.compose import answer_text, compose, shaped
from trilha.answer.context import RERANK_WINDOW_TOKENS, Terms, focus, select_context
from trilha.answer.parse import parse_question
from trilha.answer.run import Run
from trilha.answer.schemas import check
from trilha.answer.sentences import split_sentences
from trilha.errors import ConfigurationError
from trilha.index.filter_input import coerce_filters
from trilha.index.filters import FilterExpr, combine
from trilha.index.language import detect_language
from trilha.index.tokenize import query_language
from trilha.rerank.base import RERANK_UNAVAILABLE, apply_scores, rerank_unavailable
from trilha.retrieve.pipeline import with_rerank_stage
from trilha.types import Hit, SearchResult, Trace

#: What keeps an answer's fused order (warned) instead of reranking: the reranker is
#: unavailable, as for a search, or none is configured or its files cannot be read, where a
#: search says so as an error: the answer is still useful.
KEEP_FUSED: tuple[type[Exception], ...] = (*RERANK_UNAVAILABLE, ConfigurationError, OSError)

if TYPE_CHECKING:
    from trilha.answer.compose import LLMComposer
    from trilha.workspace.facade import Workspace

#: The unit fields a question may name as filters (when the caller can see the value).
NAMED_FIELDS = ("setor", "tema")


def parse_query(ws: Workspace, run: Run) -> None:
    """Normalise the question and read the filters it states (request filters win)."""
    req = run.request
    given = req.filters if isinstance(req.filters, dict) else None
    check("ParseQuery", "input", {"query": req.question, **({"filters": given} if given else {})})
    parsed = parse_question(req.question, _known_values(ws, run))
    run.text, run.query_valid, run.stop_reason = parsed.text, parsed.valid, parsed.reason
    if parsed.valid:
        langs = ws.searcher.langs_for(req.principal)
        run.lang = question_language(parsed.text, langs)
        run.query_filters = {k: v for k, v in parsed.filters.items() if k not in (given or {})}
        run.spent = parsed.spent if run.query_filters else ()
        run.filters = _and(coerce_filters(req.filters), coerce_filters(run.query_filters or None))
    check("ParseQuery", "output", {"query": run.query_payload()})
    run.note(None, f"filters from the question: {run.query_filters}" if run.query_filters else None)


def question_language(text: str, langs: list[str]) -> str:
    """The question's language: the detector's when it is confident, else its best guess when
    the index holds that language, else the index's most frequent one."""
    guess = detect_language(text) or detect_language(text, min_confidence=0.0)
    return guess if guess is not None and guess in langs else query_language(text, langs)


def _and(*exprs: FilterExpr | None) -> FilterExpr | None:
    combined = combine(*exprs)
    return None if combined.is_empty() else combined


def _known_values(ws: Workspace, run: Run) -> dict[str, list[str]]:
    """The ``setor``/``tema`` values of the units the caller may see."""
    lexical = ws.searcher.lexical
    mask = ws.searcher.policies.get(run.request.principal).row_mask(lexical.columns)
    return {name: lexical.columns.values(name, mask) for name in NAMED_FIELDS}


async def hybrid_retrieve(ws: Workspace, run: Run) -> None:
    """BM25 ∪ ANN for ``k`` candidates under the caller's principal; when filters read from the
    question leave nothing, once more without them (and a warning)."""
    k = run.request.params.k
    check("HybridRetrieve", "input", {"query": run.query_payload(), "topK": k})
    result = await _search(ws, run, run.filters)
    if not result.hits and run.query_filters:
        run.warnings.append(
            f"nothing matched the filters read from the question {run.query_filters}; "
            "searched without them"
        )
        run.query_filters, run.spent = {}, ()
        run.filters = coerce_filters(run.request.filters)
        result = await _search(ws, run, run.filters)
    run.search, run.candidates = result.trace, result.hits
    check("HybridRetrieve", "output", {"candidates": _items(run.candidates)})
    run.note(len(run.candidates))
    if not run.candidates:
        run.stop_reason = (
            "no unit you may see matches the question and filters; loosen the filters, "
            "ingest documents, or ask as a user who may see more"
        )


async def _search(ws: Workspace, run: Run, filters: Any) -> SearchResult:
    k = run.request.params.k
    return await ws.asearch(
        run.text, top_k=k, candidates=k, filters=filters, principal=run.request.principal
    )


def rerank_results(ws: Workspace, run: Run) -> None:
    """Guardrail, then rerank to ``top_n``: units the principal may not see (sensitivity above
    the clearance included) are dropped before rerank; without rerank, or when the reranker is
    unavailable (down or cannot load, warned), the fused order's ``top_n`` are kept."""
    params = run.request.params
    candidates = [h for h in run.candidates if may_see(h, run)]
    if len(candidates) < len(run.candidates):
        run.warnings.append(f"{len(run.candidates) - len(candidates)} unit(s) above the "
                            "caller's visibility dropped before rerank")  # fmt: skip
    run.rerank_model = (
        (ws.settings.reranker_model or ws.reranker_identity) if params.rerank else "none"
    )
    check("RerankResults", "input", {"candidates": _items(candidates), "model": run.rerank_model})
    run.reranked = candidates[: params.top_n]
    if params.rerank and candidates:
        try:
            run.reranked, run.search = _rerank_windows(ws, run, candidates, params.top_n)
        except KEEP_FUSED as e:
            run.warnings.append(rerank_unavailable(e))
            run.rerank_model = "none"
    check("RerankResults", "output", {"reranked": _items(run.reranked)})
    run.note(len(run.reranked), f"model {run.rerank_model}")
    if not run.reranked:
        run.stop_reason = "no candidate is visible to the caller after the guardrail"


def _rerank_windows(
    ws: Workspace, run: Run, candidates: list[Hit], top_n: int
) -> tuple[list[Hit], Trace]:
    """The candidates reordered by the cross-encoder reading each one's :func:`focus` window,
    each (question, window) pair cut to ``answer_rerank_max_length`` tokens (80: on 100 SciFact
    questions as good as pairs of up to 256, and 1.2x faster), the best ``top_n`` kept; the
    search trace gains the ``rerank`` stage."""
    start = time.perf_counter()
    reranker = ws.reranker
    windows = answer_windows(run, candidates)
    cap = ws.settings.answer_rerank_max_length
    scores = reranker.score(run.text, windows, max_length=cap)
    hits = apply_scores(candidates, scores, top_n, float(getattr(reranker, "blend", 0.0)))
    note = f"windows of at most {RERANK_WINDOW_TOKENS} tokens, pairs of at most {cap}"
    return hits, with_rerank_stage(run.search or Trace(), len(hits), start, note)


def answer_windows(run: Run, candidates: list[Hit]) -> list[str]:
    """What the cross-encoder reads of each candidate: its :func:`focus` window on the
    question's terms (weighted over all the candidates' sentences)."""
    terms = Terms(run.text, run.lang, run.spent)
    sentences = [split_sentences(h.unit.text) for h in candidates]
    terms.fit([s for each in sentences for s in each])
    return [focus(h, terms, each) for h, each in zip(candidates, sentences, strict=True)]


def build_answer(ws: Workspace, run: Run, llm: LLMComposer | None) -> None:
    """Select the context within ``max_tokens_ctx``, compose, shape and mask the answer."""
    check("BuildAnswer", "input", {"reranked": _items(run.reranked), "query": run.query_payload()})
    visible_hits = [h for h in run.reranked if may_see(h, run)]  # the guardrail, again
    terms = Terms(run.text, run.lang, run.spent)
    run.pieces, run.masked = select_context(visible_hits, run.request.params.max_tokens_ctx, terms)
    run.composed = compose(run.text, run.lang, run.pieces, terms, llm)
    run.sentences, run.citations, late = shaped(run.composed, run.pieces)
    run.masked.update(late)
    run.answer_text = answer_text(run.sentences, run.lang)
    citations = [c.model_dump(mode="json", exclude_none=True) for c in run.citations]
    check("BuildAnswer", "output", {"answer": {"text": run.answer_text, "citations": citations}})
    run.note(len(run.sentences), f"{run.composed.provider}/{run.composed.model}")


def may_see(hit: Hit, run: Run) -> bool:
    unit = hit.unit
    access = Access.model_validate(unit.model_dump(include=set(Access.model_fields)))
    return visible(access, run.request.principal)


def _items(hits: list[Hit]) -> dict[str, Any]:
    items = [{"unit_id": h.unit.unit_id, "doc_id": h.unit.doc_id, "score": h.score} for h in hits]
    return {"count": len(items), "items": items}
