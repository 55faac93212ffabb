"""One search, seed 001's stages top to bottom: cache, expansion, encoding, both sides (filters
and visibility inside each), merge, KG boost, rerank.

:func:`search` and :func:`asearch` run a :class:`~trilha.retrieve.plan.SearchPlan` with the
:class:`Collaborators` they are handed (the lexical snapshot, the dense index, the encoder, the
booster, the compiled policies, the result cache, the expander, the reranker and the
workspace's values); nothing is read from elsewhere. Both share every stage function below; the
async one runs the sides on the event loop's threads and rerank (and an expander that may call
an LLM) off the loop. No stage mutates what it is given: each returns a new result.

:class:`HybridSearcher` is what a workspace holds between searches: the current lexical
snapshot (swapped whole by an ingest, so a search keeps the one it started with), the dense
index, the encoder, the booster, the policies and the two side threads.

Each stage is a LlamaIndex instrumentation span, so that tracing tools hooked on LlamaIndex's
root dispatcher see them, with their latencies, under the retriever or engine that asked:
``trilha.search`` holding ``trilha.cache``, ``trilha.expansion``, ``trilha.bm25``,
``trilha.dense`` (the query's encoding included), ``trilha.kg``, ``trilha.fusion`` and
``trilha.rerank``. A span's id is ``trilha.<stage>-<uuid>`` (LlamaIndex's ``<name>-<uuid>``);
its tags carry ``trilha.stage``. Spans go through ``get_dispatcher(__name__)`` of LlamaIndex's
instrumentation (``llama_index.core.instrumentation`` re-exports it), and only when a span
handler other than its null one listens: a process that never loaded LlamaIndex has none, so a
stage then costs a dictionary lookup and LlamaIndex is never imported for it.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import Token
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from trilha.access.compiled import POLICIES, CompiledPolicy, PolicyCache
from trilha.access.principal import Principal
from trilha.encode.base import Embedder
from trilha.errors import BackendUnavailableError, BadRequestError
from trilha.index.columns import BoolArray
from trilha.index.dense import DenseIndex
from trilha.index.filters import FilterExpr, check_keys, combine, widen_languages
from trilha.index.lexical import LexicalIndex
from trilha.index.tokenize import query_language
from trilha.rerank.base import RERANK_UNAVAILABLE, Reranker, rerank_unavailable
from trilha.retrieve.cache import Lookup, ResultCache, cache_key
from trilha.retrieve.expand import Expander, expanded
from trilha.retrieve.fusion import fuse, minmax, ranked
from trilha.retrieve.plan import SearchPlan
from trilha.types import Hit, SearchResult, Side, StageScores, StageTrace, Trace

log = logging.getLogger(__name__)
T = TypeVar("T")
Vector = npt.NDArray[np.float32]
Filler = Callable[[Sequence[str]], dict[str, float]]
#: The span of each side.
SIDE_SPANS: dict[Side, str] = {"bm25": "bm25", "semantic": "dense"}
#: The stages whose note says they were unavailable (a warning; the result is not cached); the
#: note of another stage says what it did (the dense stage: that it scored a filter exactly).
DEGRADED_NOTES = ("expand", "encode", "kg")
#: The graph boost's scores (None: off or unavailable) and its stage trace (None: not asked).
KgStage = tuple[dict[str, float] | None, StageTrace | None]
#: Min-max scaled side score from which a candidate counts as ranked well by that side (the
#: measurements behind 0.8 are in :mod:`trilha.graph.boost.service`).
RELEVANCE_FLOOR = 0.8


class KgBooster(Protocol):
    """Scores candidates from the knowledge graph (seed 001, stage 7):
    :class:`~trilha.graph.boost.service.KGBooster`, or :class:`UnavailableBooster`. One may
    also have ``prepare(query, principal)``, called as a search starts, to get ready in the
    background for the boost the search asks once its sides are done; a booster without it
    is asked the boost alone (:func:`prepare_boost`)."""

    def boost(
        self,
        query: str,
        unit_ids: Sequence[str],
        relevant: Collection[str] | None = None,
        principal: Principal | None = None,
    ) -> tuple[dict[str, float], str | None]:
        """``(unit_id -> boost in [0, 1], warning)`` from what ``principal`` sees (None:
        anonymous); an empty dict and a warning when the graph is down or slow. Must never
        raise for backend trouble. Only ``relevant`` units may get a boost (None: every
        unit)."""
        ...


class UnavailableBooster:
    """Stands in for a graph that could not be opened: no boost, the reason as warning."""

    def __init__(self, warning: str) -> None:
        self.warning = warning

    def boost(
        self,
        query: str,
        unit_ids: Sequence[str],
        relevant: Collection[str] | None = None,
        principal: Principal | None = None,
    ) -> tuple[dict[str, float], str | None]:
        """Nothing, and why."""
        return {}, self.warning

    def prepare(self, query: str, principal: Principal | None = None) -> None:
        """Nothing to get ready."""


class HybridSearcher:
    """The indices a workspace searches, between searches: ``lexical`` (the current snapshot,
    replaced whole by a write), ``dense``, ``embedder``, ``booster``, the compiled ``policies``
    and the ``pool`` of side threads."""

    def __init__(
        self,
        lexical: LexicalIndex,
        dense: DenseIndex,
        embedder: Embedder,
        booster: KgBooster | None = None,
    ) -> None:
        self.lexical = lexical
        self.dense = dense
        self.embedder = embedder
        self.booster = booster
        #: Compiled visibility rules of recent principals, shared with the graph reads (each
        #: principal's rule compiled once for every index, not per search).
        self.policies = POLICIES
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="trilha-side")

    def close(self) -> None:
        """Stop the side threads."""
        self.pool.shutdown(wait=False)

    def langs_for(self, principal: Principal) -> list[str]:
        """The languages of the units ``principal`` may see, most frequent first (what their
        query's language, hence its fusion, is chosen from): hidden units never change it.
        Kept per compiled policy and lexical snapshot, as the row masks are."""
        return langs_of(self.lexical, self.policies, principal)


def langs_of(lexical: LexicalIndex, policies: PolicyCache, principal: Principal) -> list[str]:
    """The languages of the units of ``lexical`` that ``principal`` may see."""
    return lexical.langs_of(policies.get(principal).row_mask(lexical.columns))


@dataclass(frozen=True)
class Collaborators:
    """Everything one search reads, handed in by its caller (:meth:`Workspace.search`)."""

    lexical: LexicalIndex
    """The lexical snapshot the whole search reads (its rows are the units it may return)."""
    dense: DenseIndex
    embedder: Embedder
    booster: KgBooster | None
    policies: PolicyCache
    pool: Executor
    """Runs the two sides of a synchronous search concurrently."""
    cache: ResultCache | None
    expander: Expander
    reranker: Callable[[], Reranker]
    """The reranker, loaded on first use."""
    scope: dict[str, Any]
    """What a cached result depends on besides its plan (the workspace, its encoder, the
    generations of the lexical snapshot and, when boosted, of the graph, the reranker)."""
    dimension: int
    """The encoder's vector size (a caller's query vector must have it)."""
    workspace: Path
    """Named in the warning of a search over an empty workspace."""


# -- the search -----------------------------------------------------------------------------------
def search(plan: SearchPlan, vector: Vector | None, c: Collaborators) -> SearchResult:
    """The planned search, from the cache when it holds it (one ``trilha.search`` span holding
    each stage's)."""
    with stage_span("search"):
        key, lookup = cached(plan, vector, c)
        if lookup is not None and lookup.result is not None:
            return lookup.result
        result = with_empty_warning(retrieve(plan, vector, c), c)
        return kept(key, plan, reranked(plan, result, c), lookup, c)


async def asearch(plan: SearchPlan, vector: Vector | None, c: Collaborators) -> SearchResult:
    """:func:`search` on an event loop: both sides concurrently, rerank (and an expander that
    may call an LLM) off the loop."""
    with stage_span("search"):
        key, lookup = cached(plan, vector, c)
        if lookup is not None and lookup.result is not None:
            return lookup.result
        if plan.expand:
            result = await asyncio.to_thread(retrieve, plan, vector, c)
        else:
            result = await ahybrid(plan.query, plan, vector, c)
        result = with_empty_warning(result, c)
        if plan.rerank:
            result = await asyncio.to_thread(reranked, plan, result, c)  # loading it, too
        return kept(key, plan, result, lookup, c)


# -- stage 1: the result cache --------------------------------------------------------------------
def cached(plan: SearchPlan, vector: Vector | None, c: Collaborators) -> tuple[str, Lookup | None]:
    """The checked vector's search key, and its lookup in the cache (None: not cached)."""
    check_vector(vector, c.dimension, c.embedder)
    key = cache_key_of(plan, vector, c)
    if c.cache is None or not key:
        return key, None
    with stage_span("cache"):
        return key, c.cache.fetch(key)


def cache_key_of(plan: SearchPlan, vector: Vector | None, c: Collaborators) -> str:
    """The result cache's key of a planned search; "" when it is not cached (no cache, or a
    query vector given by the caller)."""
    if c.cache is None or vector is not None:
        return ""
    return cache_key(plan, c.scope)


def kept(
    key: str, plan: SearchPlan, result: SearchResult, lookup: Lookup | None, c: Collaborators
) -> SearchResult:
    """``result``, kept in the cache when it was looked up there and is whole (a new result,
    whose first stage is the missed lookup): a :func:`degraded` one is not kept, so the same
    search asked again runs whole once the backend is back."""
    if c.cache is None or lookup is None:
        return result
    return c.cache.keep(key, result, lookup, store=not degraded(plan, result))


def degraded(plan: SearchPlan, result: SearchResult) -> bool:
    """Whether a stage the plan asked for was unavailable: the expander's model, the query
    encoder or the graph (its stage has a note saying why), or the reranker (the fused order
    kept, no ``rerank`` stage)."""
    stages = result.trace.stages
    if plan.rerank and not any(s.name == "rerank" for s in stages):
        return True
    return any(s.note for s in stages if s.name in DEGRADED_NOTES)


def check_vector(vector: Vector | None, dimension: int, embedder: Embedder) -> None:
    """A query embedding must be one vector of the workspace's dimension (``embedder``'s)."""
    if vector is not None and tuple(np.shape(vector)) != (dimension,):
        raise BadRequestError(
            f"the query embedding has shape {tuple(np.shape(vector))}, this workspace's encoder "
            f"makes ({dimension},) vectors ({embedder.model_id}); embed the query with the same "
            "model"
        )


# -- stage 2: expansion ---------------------------------------------------------------------------
def retrieve(plan: SearchPlan, vector: Vector | None, c: Collaborators) -> SearchResult:
    """The hybrid search of the plan; with ``expand``, also of each variant of the query (each
    under the same principal and filters, on the same snapshot), merged by ``unit_id``."""
    if not plan.expand:
        return hybrid(plan.query, plan, vector, c)
    start = time.perf_counter()
    lang = plan.lang or query_language(plan.query, langs_of(c.lexical, c.policies, plan.principal))
    with stage_span("expansion"):
        expansion = c.expander.expand(plan.query, lang)
    ms = elapsed_ms(start)
    own = hybrid(plan.query, plan, vector, c)
    others = [hybrid(v, plan, None, c) for v in expansion.variants]
    return expanded([own, *others], expansion, plan.top_k, ms)


def with_empty_warning(result: SearchResult, c: Collaborators) -> SearchResult:
    """``result``, with a warning when the workspace holds no document (a new result)."""
    if result.hits or len(c.lexical):
        return result
    # The log names the folder; the trace, which HTTP and MCP callers read, does not.
    log.warning("workspace %s is empty: nothing to search", c.workspace)
    warning = (
        "the workspace is empty: nothing to search; ingest documents first (ws.ingest(...), "
        "TrilhaIndex.from_documents(...) or `trilha ingest PATH -w WORKSPACE`)"
    )
    return with_warning(result, warning)


def with_warning(result: SearchResult, warning: str) -> SearchResult:
    """A copy of ``result`` whose trace holds ``warning`` too."""
    trace = result.trace.model_copy(update={"warnings": [*result.trace.warnings, warning]})
    return result.model_copy(update={"trace": trace})


# -- stages 3 and 4: encoding and both sides ------------------------------------------------------
def hybrid(text: str, plan: SearchPlan, vector: Vector | None, c: Collaborators) -> SearchResult:
    """Both sides of ``text`` concurrently (the side threads), the KG boost, the merge."""
    prepare_boost(text, plan, c.booster)
    jobs = side_jobs(text, plan, vector, c)
    futures = {side: c.pool.submit(job) for side, job in jobs.items()}
    sides = {side: f.result() for side, f in futures.items()}
    return merged(sides, plan, kg_stage(text, sides.values(), plan, c.booster), c.lexical)


async def ahybrid(
    text: str, plan: SearchPlan, vector: Vector | None, c: Collaborators
) -> SearchResult:
    """:func:`hybrid` on the event loop's threads."""
    prepare_boost(text, plan, c.booster)
    jobs = side_jobs(text, plan, vector, c)
    results = await asyncio.gather(*(asyncio.to_thread(job) for job in jobs.values()))
    sides = dict(zip(jobs, results, strict=True))
    kg = await asyncio.to_thread(kg_stage, text, sides.values(), plan, c.booster)
    return merged(sides, plan, kg, c.lexical)


class SideResult(NamedTuple):
    """One side's ranked candidates, its stage traces, and how to score any other unit."""

    scores: dict[str, float]
    stages: list[StageTrace]
    fill: Filler | None = None


Job = Callable[[], SideResult]


def side_jobs(
    text: str, plan: SearchPlan, vector: Vector | None, c: Collaborators
) -> dict[Side, Job]:
    """The sides the plan asks for, each a job run as its span: the filters (checked, languages
    widened) and the principal's visibility apply inside each."""
    if not text.strip():
        raise BadRequestError("the query is empty; pass some text to search for")
    lexical = c.lexical
    n_bm25, n_sem = plan.per_side()
    filters = plan.filters
    if filters is not None:
        check_keys(filters, lexical.columns.keys)
        filters = widen_languages(filters, lambda: lexical.columns.values("lang"))
    policy = c.policies.get(plan.principal)
    # When the principal sees every unit of the snapshot the dense side needs no visibility
    # filter: units it returns that the snapshot lacks (written since) are dropped at merge.
    sees_all = policy.sees_all(lexical.columns)
    dense_expr = combine(filters) if sees_all else combine(policy.expr, filters)
    masks = _Masks(policy, lexical, filters)
    jobs: dict[Side, Job] = {}
    if "bm25" in plan.sides:
        k1, b = plan.fusion.bm25_k1, plan.fusion.bm25_b
        jobs["bm25"] = lambda: bm25_side(lexical, text, n_bm25, *masks.get(), k1=k1, b=b)
    if "semantic" in plan.sides:
        kept = None if dense_expr.is_empty() else masks
        jobs["semantic"] = lambda: dense_side(
            c.dense, c.embedder, text, n_sem, dense_expr, vector, kept
        )
    if not jobs:
        raise BadRequestError("no retrieval side selected; use bm25, semantic or both")
    return {side: spanned(SIDE_SPANS[side], job) for side, job in jobs.items()}


class _Masks:
    """The rows of one search's snapshot that the BM25 side may return and the rows its
    statistics count (all the caller may see), made once by whichever side asks first."""

    def __init__(
        self, policy: CompiledPolicy, lexical: LexicalIndex, filters: FilterExpr | None
    ) -> None:
        self._policy, self.lexical, self._filters = policy, lexical, filters
        self._lock = threading.Lock()
        self._made: tuple[BoolArray | None, BoolArray | None] | None = None

    def get(self) -> tuple[BoolArray | None, BoolArray | None]:
        """(the rows the side may return, the rows the caller may see); None: every row."""
        with self._lock:
            if self._made is None:
                columns = self.lexical.columns
                shown = self._policy.row_mask(columns, self._filters)
                self._made = shown, self._policy.row_mask(columns)
            return self._made

    def matching(self) -> int:
        """How many rows the filters and the visibility keep: what the dense side is told its
        filter keeps, so that a selective one is scored exactly whatever the dense index's
        planner estimates."""
        kept = self.get()[0]
        return len(self.lexical) if kept is None else int(kept.sum())

    def scan(self, dense: DenseIndex, vector: Vector, n: int) -> list[tuple[str, float]] | None:
        """The top ``n`` (unit_id, cosine) pairs of the rows the filters and the visibility
        keep, scored from the snapshot's own vectors (:mod:`trilha.index.row_vectors`), the
        best candidates again from ``dense``'s; None where the snapshot keeps no vectors,
        is smaller than the dense index's HNSW threshold (whose exact search is then as
        quick) or lacks one of the rows' vectors: the dense index searches instead."""
        lexical, kept = self.lexical, self.get()[0]
        column = lexical.vectors
        if column is None or kept is None or len(lexical) < dense.exact_below:
            return None
        picked = column.candidates(vector, np.flatnonzero(kept), n)
        if picked is None:
            return None
        ids = [lexical.rows[r].unit_id for r in picked.tolist()]
        stored = dense.vectors(ids)  # a unit deleted since the snapshot has none: left out
        query = np.asarray(vector, np.float32)
        scored = [(float(np.dot(stored[u], query)), u) for u in ids if u in stored]
        scored.sort(key=lambda pair: -pair[0])  # stable: equal cosines in row order
        return [(u, s) for s, u in scored[:n]]


def elapsed_ms(start: float) -> float:
    """Milliseconds since ``start`` (a :func:`time.perf_counter` reading)."""
    return (time.perf_counter() - start) * 1000.0


def bm25_side(
    lexical: LexicalIndex,
    text: str,
    n: int,
    mask: BoolArray | None,
    visible: BoolArray | None = None,
    *,
    k1: float | None = None,
    b: float | None = None,
) -> SideResult:
    """The top ``n`` rows of ``lexical`` for ``text`` among the rows ``mask`` keeps, scored
    with the statistics of the rows the caller may see (``visible``; all rows: None) and the
    fusion's ``k1`` and ``b`` (None: the index's)."""
    start = time.perf_counter()
    query = lexical.query(text, visible, k1, b)
    rows = query.top(n, mask) if query is not None else []
    scores = {lexical.rows[r].unit_id: s for r, s in rows}

    def fill(unit_ids: Sequence[str]) -> dict[str, float]:
        if query is None:
            return {}
        found = [(u, r) for u in unit_ids if (r := lexical.row_of.get(u)) is not None]
        at = query.at(np.array([r for _, r in found], dtype=np.int64))
        return {u: s for (u, _), s in zip(found, at.tolist(), strict=True)}

    stage = StageTrace(name="bm25", latency_ms=elapsed_ms(start), count=len(scores))
    return SideResult(scores, [stage], fill)


def dense_side(
    dense: DenseIndex,
    embedder: Embedder,
    text: str,
    n: int,
    expr: FilterExpr | None,
    vector: Vector | None,
    kept: _Masks | None = None,
) -> SideResult:
    """The top ``n`` units of ``dense`` matching ``expr`` by cosine to the query's vector
    (stage 3: the query is encoded first when no vector is given). ``kept`` holds the rows
    of the lexical snapshot ``expr`` keeps; fewer than the index's
    :attr:`~trilha.index.dense.DenseIndex.exact_below` are scored exactly, from the
    snapshot's vectors where it keeps them (:meth:`_Masks.scan`)."""
    stages = []
    if vector is None:
        start = time.perf_counter()
        try:
            vector = embedder.encode_queries([text])[0]
        except BackendUnavailableError as e:  # a remote encoder that is down: BM25 goes on alone
            note = f"query encoder unavailable ({e}); the dense side returned nothing"
            stage = StageTrace(name="encode", latency_ms=elapsed_ms(start), count=0, note=note)
            return SideResult({}, [stage])
        stages.append(StageTrace(name="encode", latency_ms=elapsed_ms(start), count=1))
    start = time.perf_counter()
    count = kept.matching() if kept is not None and dense.exact_below > 0 else None
    exact = count is not None and count < dense.exact_below
    scanned = kept.scan(dense, vector, n) if exact and kept is not None else None
    scores = dict(scanned if scanned is not None else dense.search(vector, n, expr, exact))
    said = f"the filters keep {count} units: scored exactly" if exact else None
    if scanned is not None:
        said = f"{said}, from the snapshot's vectors"
    stages.append(
        StageTrace(name="dense", latency_ms=elapsed_ms(start), count=len(scores), note=said)
    )
    query = vector

    def fill(unit_ids: Sequence[str]) -> dict[str, float]:
        stored = dense.vectors(list(unit_ids))
        return {u: float(np.dot(v, query)) for u, v in stored.items()}

    return SideResult(scores, stages, fill)


# -- stage 5: merge -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Scores:
    """Every signal's scores and 1-based ranks, from which each hit's StageScores is read."""

    bm25: Mapping[str, float]
    bm25_rank: Mapping[str, int]
    semantic: Mapping[str, float]
    semantic_rank: Mapping[str, int]
    kg: Mapping[str, float] | None
    fused: Mapping[str, float]

    def of(self, uid: str, fused_rank: int) -> StageScores:
        """The scores of unit ``uid``, ranked ``fused_rank`` after fusion."""
        return StageScores(
            bm25=self.bm25.get(uid),
            bm25_rank=self.bm25_rank.get(uid),
            semantic=self.semantic.get(uid),
            semantic_rank=self.semantic_rank.get(uid),
            kg=None if self.kg is None else self.kg.get(uid, 0.0),
            fused=self.fused[uid],
            fused_rank=fused_rank,
        )


def merged(
    sides: Mapping[Side, SideResult], plan: SearchPlan, kg_stage: KgStage, lexical: LexicalIndex
) -> SearchResult:
    """Fuse side results (and the graph boost) into ranked hits of ``lexical``, the snapshot
    the sides searched: ``weighted`` (after :func:`complete` fills both sides' scores) or
    ``rrf``, over the snapshot's units only (a dense hit it lacks is dropped before any rank or
    normalisation), the per-document duplicate penalty applied, ``top_k`` kept, each hit with
    every stage's score and rank; the trace records stages, counts, fallbacks and degradations."""
    with stage_span("fusion"):
        start = time.perf_counter()
        kg, kg_trace = kg_stage
        trace = _trace(sides, plan, kg_trace)
        fusion = plan.fusion
        bm25 = sides["bm25"].scores if "bm25" in sides else {}
        sem = _in_snapshot(sides["semantic"].scores, lexical, trace) if "semantic" in sides else {}
        kg = None if kg is None else {uid: v for uid, v in kg.items() if uid in lexical.row_of}
        ranks = _ranks(bm25), _ranks(sem)
        filled = complete(sides, bm25, sem, trace) if fusion.merge == "weighted" else None
        fused = fuse(fusion, bm25, sem, filled=filled, kg=kg)
        doc_of = _doc_of(fused, lexical) if plan.doc_penalty > 0 else {}
        in_order, fused = ranked(fused, bm25, sem, doc_of, plan.doc_penalty)
        bm25, sem = filled or (bm25, sem)
        scores = _Scores(bm25, ranks[0], sem, ranks[1], kg, fused)
        hits = [
            Hit(unit=lexical.rows[lexical.row_of[uid]], scores=scores.of(uid, pos))
            for pos, uid in enumerate(in_order[: plan.top_k], start=1)
        ]
        fill = trace.stage("fill")
        merge_ms = elapsed_ms(start) - (fill.latency_ms if fill is not None else 0.0)
        trace.stages.append(StageTrace(name="merge", latency_ms=merge_ms, count=len(hits)))
        return SearchResult(hits=hits, trace=trace)


def _ranks(scores: Mapping[str, float]) -> dict[str, int]:
    """1-based rank of each unit of a side's (already ordered) candidates."""
    return {uid: i for i, uid in enumerate(scores, start=1)}


def _trace(
    sides: Mapping[Side, SideResult], plan: SearchPlan, kg_trace: StageTrace | None
) -> Trace:
    """The trace so far: each side's stages, the boost's, the hit counts and any fallback."""
    trace = Trace(merge=plan.fusion.merge, principal=plan.principal.describe())
    for side in sides.values():
        trace.stages.extend(side.stages)
        trace.warnings += [s.note for s in side.stages if s.note and s.name in DEGRADED_NOTES]
    if kg_trace is not None:
        trace.stages.append(kg_trace)
        if kg_trace.note:
            trace.warnings.append(kg_trace.note)
    bm25 = sides["bm25"].scores if "bm25" in sides else {}
    sem = sides["semantic"].scores if "semantic" in sides else {}
    trace.bm25_hits, trace.ann_hits = len(bm25), len(sem)
    if len(sides) == 2 and bool(bm25) != bool(sem):
        trace.fallback = "dense_only" if sem else "bm25_only"
        trace.warnings.append(f"one side returned nothing; merged {trace.fallback}")
    return trace


def complete(
    sides: Mapping[Side, SideResult],
    bm25: dict[str, float],
    sem: dict[str, float],
    trace: Trace,
) -> tuple[dict[str, float], dict[str, float]]:
    """Give every candidate of the union its real score on both sides (a ``fill`` stage in
    ``trace``, the merge's own, being built).

    A unit that one side ranked just below its cut-off is not worth 0 on that side: each side
    scores the other side's candidates (BM25 from the score vector it already computed, the
    dense side from the stored vectors), so min-max runs over the same union on both sides.
    A side that returned nothing stays empty (that is the fallback, not a fill).
    """
    if not bm25 or not sem:
        return bm25, sem
    start = time.perf_counter()
    out = []
    pairs: tuple[tuple[Side, dict[str, float], dict[str, float]], ...] = (
        ("bm25", bm25, sem),
        ("semantic", sem, bm25),
    )
    for name, own, other in pairs:
        fill = sides[name].fill
        missing = [u for u in other if u not in own]
        out.append({**fill(missing), **own} if fill and missing else own)
    added = len(out[0]) + len(out[1]) - len(bm25) - len(sem)
    trace.stages.append(StageTrace(name="fill", latency_ms=elapsed_ms(start), count=added))
    return out[0], out[1]


def _in_snapshot(sem: dict[str, float], lexical: LexicalIndex, trace: Trace) -> dict[str, float]:
    """The dense side's candidates without units the snapshot lacks (vectors of an interrupted
    write, or units written since the search began, hidden ones too): dropped before ranks and
    normalisation, they never cost a result nor move a score; counted as a warning."""
    known = lexical.row_of
    strays = [uid for uid in sem if uid not in known]
    if not strays:
        return sem
    trace.warnings.append(
        f"{len(strays)} dense hits are not in this search's snapshot of the unit store "
        "(written since, or orphans: see trilha doctor); skipped"
    )
    return {uid: v for uid, v in sem.items() if uid in known}


def _doc_of(fused: Mapping[str, float], lexical: LexicalIndex) -> dict[str, str]:
    """The document of each fused unit (the duplicate penalty counts units per document)."""
    return {uid: lexical.rows[lexical.row_of[uid]].doc_id for uid in fused}


# -- stage 6: the KG boost (an input of the merge) ------------------------------------------------
def well_ranked(
    side_scores: Iterable[Mapping[str, float]], floor: float = RELEVANCE_FLOOR
) -> set[str]:
    """Units whose min-max scaled score reaches ``floor`` on at least one side."""
    return {u for scores in side_scores for u, v in minmax(scores).items() if v >= floor}


def prepare_boost(query: str, plan: SearchPlan, booster: KgBooster | None) -> None:
    """When the plan asks a boost, let the booster get ready for it while the sides run (when
    it has a ``prepare``: see :class:`KgBooster`)."""
    prepare = getattr(booster, "prepare", None) if plan.kg else None
    if prepare is not None:
        prepare(query, plan.principal)


def kg_stage(
    query: str, sides: Iterable[SideResult], plan: SearchPlan, booster: KgBooster | None
) -> KgStage:
    """Nothing when the plan asks no boost; else the graph boost of the union of the sides'
    candidates as the plan's principal sees the graph, or None (with the reason as the stage's
    note) when the workspace has no graph or the graph failed. Only the candidates a side ranks
    well (:func:`well_ranked`) may be boosted: the graph reorders what the text found, it does
    not promote what the query merely dragged into the pool."""
    if not plan.kg:
        return None, None
    with stage_span("kg"):
        ranked = [side.scores for side in sides]
        union = list(dict.fromkeys(uid for scores in ranked for uid in scores))
        if booster is None:
            note = "kg boost requested but the workspace has no graph"
            return None, StageTrace(name="kg", latency_ms=0.0, count=0, note=note)
        start = time.perf_counter()
        scores, warning = booster.boost(query, union, well_ranked(ranked), plan.principal)
        boosted = sum(v > 0 for v in scores.values())
        stage = StageTrace(name="kg", latency_ms=elapsed_ms(start), count=boosted, note=warning)
        return (None if warning else scores), stage


# -- stage 7: rerank ------------------------------------------------------------------------------
def reranked(plan: SearchPlan, result: SearchResult, c: Collaborators) -> SearchResult:
    """With ``rerank``, the best ``keep`` hits by the reranker (a new result); a reranker that is
    unavailable (:data:`~trilha.rerank.base.RERANK_UNAVAILABLE`) keeps the fused order (warned)."""
    if not plan.rerank:
        return result
    try:
        with stage_span("rerank"):
            start = time.perf_counter()
            hits = c.reranker().rerank(plan.query, result.hits, top_n=plan.keep)
            return SearchResult(hits=hits, trace=with_rerank_stage(result.trace, len(hits), start))
    except RERANK_UNAVAILABLE as e:
        kept_hits = result.model_copy(update={"hits": result.hits[: plan.keep]})
        return with_warning(kept_hits, rerank_unavailable(e))


def with_rerank_stage(trace: Trace, kept: int, start: float, note: str | None = None) -> Trace:
    """A copy of ``trace`` with a ``rerank`` stage that began at ``start`` (a
    :func:`time.perf_counter` reading) and kept ``kept`` hits."""
    stage = StageTrace(name="rerank", count=kept, latency_ms=elapsed_ms(start), note=note)
    return trace.model_copy(update={"stages": [*trace.stages, stage]})


# -- tracing: each stage a LlamaIndex span ------------------------------------------------------
#: The package holding LlamaIndex's root dispatcher and its span context.
INSTRUMENTATION = "llama_index_instrumentation"


def _stage(stage: str) -> None:
    """The arguments a stage's span reports (its ``bound_args``)."""


_SIGNATURE = inspect.signature(_stage)


def listening() -> Any | None:
    """This module's dispatcher when a span handler listens to it (itself or up to the root),
    else None."""
    module = sys.modules.get(INSTRUMENTATION)
    # absent, or still being imported by another thread (a partly run module has no names yet)
    get_dispatcher = getattr(module, "get_dispatcher", None)
    null = getattr(module, "NullSpanHandler", None)
    if get_dispatcher is None or null is None or _initializing(module):
        return None
    dispatcher = get_dispatcher(__name__)
    level = dispatcher
    while level is not None:
        if any(not isinstance(h, null) for h in level.span_handlers):
            return dispatcher
        level = level.parent if level.propagate else None
    return None


def _initializing(module: Any) -> bool:
    """Whether ``module`` is still being imported (its code has not finished running)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


@contextmanager
def stage_span(stage: str) -> Iterator[None]:
    """The block as the span ``trilha.<stage>``, a child of the span active here (a dropped
    span when it raises)."""
    dispatcher = listening()
    if dispatcher is None:
        yield
        return
    from llama_index_instrumentation.dispatcher import active_instrument_tags
    from llama_index_instrumentation.span import active_span_id

    id_ = f"trilha.{stage}-{uuid.uuid4()}"
    bound = _SIGNATURE.bind(stage)
    token = active_span_id.set(id_)
    parent = None if token.old_value is Token.MISSING else token.old_value
    tags = {**active_instrument_tags.get(), "trilha.stage": stage}
    dispatcher.span_enter(id_=id_, bound_args=bound, parent_id=parent, tags=tags)
    try:
        yield
    except BaseException as e:
        dispatcher.span_drop(id_=id_, bound_args=bound, err=e)
        raise
    else:
        dispatcher.span_exit(id_=id_, bound_args=bound)
    finally:
        active_span_id.reset(token)


def spanned(stage: str, job: Callable[[], T]) -> Callable[[], T]:
    """``job`` run as the span ``trilha.<stage>``, a child of the span active where this is
    called, wherever the job then runs (a thread pool's thread)."""
    context = contextvars.copy_context()

    def run() -> T:
        with stage_span(stage):
            return job()

    return lambda: context.run(run)
