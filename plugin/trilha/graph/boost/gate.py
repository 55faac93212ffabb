"""What a KG boost needs before it reads: the thread pool its reads run on, the KG priors of
chunks and the chunk counts of entities written before those existed (stored once), how many
chunks a principal sees in the graph (for the entities' specificity; per principal scope), and
whether the graph holds any curated evidence at all: without it the graph is not read and every
boost is 0 (the query's entities alone count only with ``entities_alone``; see
:mod:`trilha.graph.boost.service` for why)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from trilha.access import Principal
from trilha.access.compiled import POLICIES
from trilha.errors import TrilhaError
from trilha.graph.boost import statements as cypher
from trilha.graph.boost.prior import backfill_entity_counts, backfill_priors
from trilha.graph.boost.score import BoostResult, BoostWeights, entity_keys
from trilha.graph.stores.base import GraphStore, Row
from trilha.graph.visibility import Visibility

logger = logging.getLogger(__name__)


class BoostGate:
    """Owned by :class:`trilha.graph.service.GraphService`; :meth:`forget` after every write."""

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
