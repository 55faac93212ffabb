"""The KG booster (seed 001's KG stage): one graph store's boost, gated, time-bounded, logged.

:class:`KGBooster` is the one booster: :meth:`KGBooster.boost` is what the search pipeline
(:mod:`trilha.retrieve.pipeline`) and the LlamaIndex postprocessor call with a query;
:meth:`KGBooster.boost_entities` takes the query's entities already found.
:class:`BoostGate` says when there is nothing to read (no curated
evidence the principal sees) and holds the thread pool; :mod:`trilha.graph.boost.score` reads
and scores. A boost never raises for graph trouble (it returns zeros and a warning) and its
result is not cached.

Entities "the query mentions" are the ones the ingest-time rule extractor finds in the query
(acronyms, capitalised phrases, pt and en), matched against entity ids (normalised names) inside
the single batched boost query.

Only :func:`~trilha.retrieve.pipeline.well_ranked` candidates, whose min-max scaled score on
some side is at least :data:`~trilha.retrieve.pipeline.RELEVANCE_FLOOR`, may be boosted: the
graph reorders what the text found, it does not promote what the query merely dragged into the
pool. Measured, never on SciFact's test split:

* demo corpus, 30 hand-labelled questions (three documents carry Criterio/Fato/Prova
  evidence): boosting every candidate put an evidence document that does not answer the
  question into the top 5 four more times than no boost did (the software-licence ruling for
  "remote work requirements", among others); a floor of 0.7, 0.8 or 0.9 added none and raised
  MRR from 0.849 (no boost) to 0.871; 0.5 let one back in. 0.8 is the middle of that plateau.
* reading every candidate instead costs ~20 ms per query at ``top_k=10`` on SciFact's graph
  (50 candidates; under 1 ms for the ~3 the gate keeps), far above the boost's latency budget.

The entity rule (:func:`trilha.graph.boost.score.entity_part`), pre-registered on SciFact *train*
(809 queries; no records there, so only the entity part acts) before the test split was run
with it: a query entity counts ``salience × specificity``, ``specificity = ln(N/df) / ln(N)``
(N chunks in the graph, df chunks mentioning the entity: an entity in every chunk says
nothing), and boosts are divided by ``max(1, batch maximum)`` instead of the batch maximum, so
one weak mention of a common entity no longer earns the whole ``kg`` share. Chosen among 8
variants (gate on/off × divide by max or max(1, max) × salience with/without specificity) as
the best train gain with both halves (odd/even queries) positive, the gate kept for cost:

========================================  =========  ================  ======  ====
rule (gated, ``kg`` share 0.1)            nDCG@10 Δ  halves            helped  hurt
========================================  =========  ================  ======  ====
salience / batch max (before)             +0.0023    +0.0033 +0.0014   15      14
salience × specificity / max(1, max)      +0.0033    +0.0042 +0.0024   13      6
========================================  =========  ================  ======  ====

(Without the gate the same rule was +0.0048 on train, 29 helped, 20 hurt; rejected for cost.)

Test split, run once with this rule through ``trilha eval``: hybrid_weighted 0.7318,
hybrid_weighted_kg 0.7265 (the previous rule: 0.7277). The train gain does not carry over to
test; the rule is left as pre-registered, not tuned on test.

Four later variants, each judged on train against the rule above (+0.0033; both halves +, 13
helped, 6 hurt), none kept:

=======================================================  =========  ======  ====
variant                                                  train Δ    helped  hurt
=======================================================  =========  ======  ====
sentence-initial phrases need corroboration (extractor)  +0.0033    13      6
no boost past a candidate both sides rank higher         +0.0032    12      6
specificity alone (no salience)                          +0.0018    10      8
specificity among the gated candidates                   +0.0014    7       2
=======================================================  =========  ======  ====

The first two together, run once on test: 0.7277 against hybrid_weighted's 0.7318. The entity
weight (:class:`~trilha.graph.boost.score.BoostWeights`), tried on train at 0.25, 0.5 and 2:
+0.0012, +0.0023 and +0.0021 (14 helped, 12 hurt) against 1's +0.0033, so 1 stays. On SciFact
(no records), the entity part reorders near-ties and the test split's four rank-1 swaps (−0.369
each) come from candidates that mention the query's entity more saliently than the relevant one
does; no variant fitted on train removed them.

Over both splits (1,109 queries) the entity part alone is worth about +0.001: nothing, for a read
per query. Seed 001 builds the boost from Criterio, Fato and Prova nodes, so a graph holding none
gives no boost by default (:class:`BoostGate`, ``entities_alone``;
``TRILHA_KG_ENTITIES_ALONE`` turns the entity part on for such graphs) and ``hybrid_weighted_kg``
is ``hybrid_weighted`` on SciFact. Beside curated evidence the entity part still counts. This
default was set after the test split had been seen; train alone favoured the entity part.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from trilha.access import Principal
from trilha.access.compiled import POLICIES
from trilha.errors import TrilhaError
from trilha.graph.boost import statements as cypher
from trilha.graph.boost.prior import backfill_entity_counts, backfill_priors
from trilha.graph.boost.score import (
    BoostResult,
    BoostWeights,
    _failed,
    _rows,
    compute_kg_boost,
    entity_keys,
    gated_ids,
)
from trilha.graph.build.extract import entities_in_query
from trilha.graph.log import RetrievalLog
from trilha.graph.stores.base import GraphStore, Row
from trilha.graph.visibility import Visibility

logger = logging.getLogger(__name__)

#: Statements :meth:`KGBooster.prepare` plans per process at most (FalkorDB keeps 1024 plans).
MAX_PLANS = 256


class KGBooster:
    """KG boosts over ``store`` within ``timeout_s``; never raises for graph trouble."""

    def __init__(
        self,
        store: GraphStore,
        gate: BoostGate,
        *,
        timeout_s: float,
        log: RetrievalLog | None = None,
    ) -> None:
        self.store = store
        self.timeout_s = timeout_s
        self.log = log
        self._gate = gate
        #: The plannings of the boost read started by :meth:`prepare`, per principal scope:
        #: the read with the query's entities (True) and without (False).
        self._plans: dict[str, dict[bool, Future[None]]] = {}
        self._plans_lock = threading.Lock()

    def prepare(self, query: str, principal: Principal | None = None) -> Future[None] | None:
        """Have the graph plan the boost read now, in the background, so that the read
        :meth:`boost` makes once the sides are done finds it planned: FalkorDB plans a statement
        the first time its text runs (the boost read, 0.15-0.3 s; 2 ms once planned) and keeps
        the plan. The first call per principal scope plans the read ``query`` needs (with or
        without its entities), then the other one; later calls do nothing. Only when the graph
        holds curated evidence ``principal`` sees (or the entities count alone): nothing is read
        (no unit ids), and a failure is left to the boost. Returns the planning of ``query``'s
        read when this call started it."""
        who = principal or Principal.anonymous()
        scope = POLICIES.get(who).scope_key
        with self._plans_lock:
            if scope in self._plans or len(self._plans) >= MAX_PLANS:
                return None
            named = bool(entity_keys(entities_in_query(query)))
            plans: dict[bool, Future[None]] = {named: Future(), not named: Future()}
            self._plans[scope] = plans
        # a daemon thread of its own: a read the closing server never answers must hold
        # neither the gate's pool nor the process's exit (the pool's threads are joined then)
        args = (Visibility.of(who), plans, named)
        threading.Thread(target=self._plan, args=args, name="trilha-kg-plan", daemon=True).start()
        return plans[named]

    def _plan(self, vis: Visibility, plans: dict[bool, Future[None]], first: bool) -> None:
        """Run the boost read for no unit, with entities (``first``) or not, then the other."""
        try:
            if self._gate.entities_alone or self.store.run(cypher.any_evidence(vis), vis.params):
                for named in (first, not first):
                    if self._gate.closed:
                        break
                    _rows(self.store, [], ["?"] if named else [], self.timeout_s, vis)
                    plans[named].set_result(None)
        except Exception as e:  # the boost itself will degrade and say why
            logger.debug("could not plan the boost read: %s", e)
        finally:
            for planning in plans.values():
                if not planning.done():
                    planning.set_result(None)

    def _planned(self, query_entities: Sequence[str], principal: Principal | None) -> None:
        """Wait (within the boost's timeout) for :meth:`prepare`'s planning of this read when
        it is under way: the read sent beside it would be planned a second time."""
        plans = self._plans.get(POLICIES.get(principal or Principal.anonymous()).scope_key)
        planning = None if plans is None else plans[bool(entity_keys(query_entities))]
        if planning is not None and not planning.done():
            wait([planning], timeout=self.timeout_s)

    def boost(
        self,
        query: str,
        unit_ids: Sequence[str],
        relevant: Collection[str] | None = None,
        principal: Principal | None = None,
    ) -> tuple[dict[str, float], str | None]:
        """``(unit_id -> boost in [0, 1], warning)`` of the entities ``query`` mentions (the
        ingest-time rule extractor's, :func:`~trilha.graph.build.extract.entities_in_query`),
        from what ``principal`` sees (None: anonymous); only ``relevant`` units may score (all
        units when None). The query's entities are found only when the gate needs them (they
        alone may count) or the graph is read."""
        gate = self._gate
        entities = entities_in_query(query) if gate.entities_alone else None
        result = gate.nothing_to_read(unit_ids, entities or (), principal)
        if result is None:
            entities = entities_in_query(query) if entities is None else entities
            result = self._read(unit_ids, entities, relevant, principal)
        return result.scores, result.warning

    def boost_entities(
        self,
        unit_ids: Sequence[str],
        query_entities: Sequence[str],
        *,
        relevant: Collection[str] | None = None,
        principal: Principal | None = None,
    ) -> BoostResult:
        """KG boost as ``principal`` sees the graph (None: anonymous) within ``timeout_s``
        (never raises for graph trouble; no result is cached); only ``relevant`` units are read
        and may score (every unit when None). When the graph holds no curated evidence
        ``principal`` sees (and entities alone do not count), every boost is 0 and the graph is
        not asked."""
        nothing = self._gate.nothing_to_read(unit_ids, query_entities, principal)
        if nothing is not None:
            return nothing
        return self._read(unit_ids, query_entities, relevant, principal)

    def _read(
        self,
        unit_ids: Sequence[str],
        query_entities: Sequence[str],
        relevant: Collection[str] | None,
        principal: Principal | None,
    ) -> BoostResult:
        """The boost read from the graph (the gate let it through), logged."""
        start = time.perf_counter()
        left = self.timeout_s
        if self._plans:  # the wait for the planning counts within the boost's timeout
            self._planned(query_entities, principal)
            left -= time.perf_counter() - start
        if left <= 0:
            result = _failed(f"graph slower than {self.timeout_s}s")
        else:
            result = compute_kg_boost(
                self.store,
                unit_ids,
                query_entities,
                left,
                relevant=relevant,
                executor=self._gate.pool,
                corpus_size=self._gate.corpus_size(principal),
                principal=principal,
            )
        self._log(gated_ids(unit_ids, relevant), len(unit_ids), query_entities, result, start)
        return result

    def _log(
        self,
        read: Sequence[str],
        candidates: int,
        entities: Sequence[str],
        result: BoostResult,
        start: float,
    ) -> None:
        """Log a boost: the units read from the graph (the relevant ones) and how many
        candidates there were."""
        if self.log is not None:
            query: dict[str, Any] = {
                "op": "kg_boost",
                "unit_ids": list(read),
                "candidates": candidates,
                "query_entities": list(entities),
                "warning": result.warning,
            }
            self.log.append(query, len(result.scores), (time.perf_counter() - start) * 1000, False)


class BoostGate:
    """What a KG boost needs before it reads: the thread pool its reads run on, the KG priors
    of chunks and the chunk counts of entities written before those existed (stored once), how
    many chunks a principal sees in the graph (for the entities' specificity; per principal
    scope), and whether the graph holds any curated evidence at all: without it the graph is
    not read and every boost is 0 (the query's entities alone count only with
    ``entities_alone``; the module docstring says why). Owned by
    :class:`trilha.graph.service.GraphService`; :meth:`forget` after every write."""

    def __init__(
        self,
        store: GraphStore,
        weights: BoostWeights,
        timeout_s: float,
        ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store, self.weights, self.timeout_s, self.ttl_s = store, weights, timeout_s, ttl_s
        #: boost by the query's entities also when the graph holds no curated evidence
        self.entities_alone = False
        self._clock = clock
        self._priors_ready = False
        self._evidence: dict[str, tuple[list[Row], float]] = {}
        self._corpus: dict[str, tuple[list[Row], float]] = {}
        # boost reads run here, so that a query starts no thread; a read stuck in the graph
        # holds one worker, and callers still stop waiting at the timeout
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="trilha-kg")
        #: Set by :meth:`close`.
        self.closed = False

    def nothing_to_read(
        self,
        unit_ids: Sequence[str],
        query_entities: Sequence[str],
        principal: Principal | None = None,
    ) -> BoostResult | None:
        """All-zero boosts, without a read, when the graph holds no curated evidence
        (Criterio, Fato, Prova) that ``principal`` sees and the query's entities alone do not
        count (unless ``entities_alone``, and the query names one), else None; first stores the
        priors older chunks lack. Evidence another principal sees changes nothing here."""
        self._ensure_priors()
        if self._holds_evidence(principal) or (self.entities_alone and entity_keys(query_entities)):
            return None
        zeros = dict.fromkeys(unit_ids, 0.0)
        return BoostResult(scores=zeros, raw=dict(zeros))

    def forget(self) -> None:
        """The graph was written: ask again whether it holds evidence and how many chunks."""
        self._evidence = {}
        self._corpus = {}

    def corpus_size(self, principal: Principal | None = None) -> int | None:
        """Chunks ``principal`` (None: anonymous) sees in the graph, kept per principal scope
        and asked again after a write or after ``ttl_s``; None when the graph cannot say (the
        boost then treats every entity as specific)."""
        rows = self._scoped(self._corpus, principal, cypher.chunk_count)
        return None if rows is None else int(rows[0]["n"])

    def _scoped(
        self,
        known: dict[str, tuple[list[Row], float]],
        principal: Principal | None,
        statement: Callable[[Visibility], str],
    ) -> list[Row] | None:
        """The rows of ``statement`` as ``principal`` sees the graph, kept in ``known`` per
        principal scope for ``ttl_s`` (and until :meth:`forget`); None when the graph fails."""
        who = principal or Principal.anonymous()
        scope, now = POLICIES.get(who).scope_key, self._clock()
        held = known.get(scope)
        if held is None or now - held[1] > self.ttl_s:
            vis = Visibility.of(who)
            try:
                rows = self.pool.submit(self.store.run, statement(vis), vis.params)
                held = (rows.result(self.timeout_s), now)
            except Exception as e:  # the boost itself will degrade and say why
                logger.debug("cannot read %s from the graph: %s", statement.__name__, e)
                return None
            known[scope] = held
        return held[0]

    def close(self) -> None:
        """Stop the pool (a read in flight finishes on its own)."""
        self.closed = True
        self.pool.shutdown(wait=False, cancel_futures=True)

    def _ensure_priors(self) -> None:
        """Once: store the prior of chunks and the chunk count of entities written before those
        existed (a graph from an older trilha). Graph trouble is left to the boost's own
        degradation."""
        if self._priors_ready:
            return
        try:
            filled = backfill_priors(self.store, self.weights)
            counted = backfill_entity_counts(self.store)
        except TrilhaError as e:
            logger.warning("could not store the KG prior of older chunks: %s", e)
            return
        if filled or counted:  # written: what was read before is stale
            self.forget()
            logger.info(
                "stored the KG prior of %d chunks and the chunk count of %d entities",
                filled,
                counted,
            )
        self._priors_ready = True

    def _holds_evidence(self, principal: Principal | None) -> bool:
        """Whether some chunk ``principal`` sees has a positive KG prior as it sees it (kept
        as :meth:`corpus_size` is); True when the graph cannot say."""
        rows = self._scoped(self._evidence, principal, cypher.any_evidence)
        return rows is None or bool(rows)
