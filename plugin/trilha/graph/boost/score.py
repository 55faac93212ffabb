"""Knowledge-graph boost (seed 001, stage 7): a 0–1 score per chunk from its graph neighbourhood.

Two parts. The *prior* is query-independent: the Criterio nodes (with ``peso``), Fato and Prova
nodes linked to the chunk or to its Doc, stored on the chunk as ``kg_prior`` whenever units,
records or a document change (:mod:`trilha.graph.boost.prior`).
The *entity* part is the salience of the
query's entities the chunk mentions (matched by normalised name), each weighed by how specific
the entity is: ``specificity = ln(N/df) / ln(N)``, with N the chunks in the graph and df the
chunks mentioning the entity (stored on the Entity as ``chunks`` at ingest), so an entity that
half the corpus mentions says little and one in every chunk says nothing. A query reads both
for its candidates in ONE statement, then, in pure Python::

    prior(u) = w_criterio × Σ peso (distinct criteria; peso 1 when unset)
             + w_fato × #distinct fatos + w_prova × #distinct provas
    raw(u)   = prior(u) + w_entity × Σ salience × specificity of distinct query entities
    boost(u) = raw(u) / max(1, max raw over the batch)   (all 0 when nothing is connected)

Dividing by at least 1 (one Criterio of peso 1, or one fully salient entity that a single chunk
mentions) keeps weak evidence weak: a lone low-salience mention of a common entity no longer
earns the whole ``kg`` share. :mod:`trilha.graph.boost.service` gives the SciFact train numbers.

Everything is read as a ``principal`` sees it (None: anonymous): only chunks it sees are
scored; the prior counts evidence reached through the chunk's Doc only when it sees the Doc;
df counts the chunks it sees (the entity's access summary, :mod:`trilha.graph.support`) and N
is the number of chunks it sees (the caller's ``corpus_size``), so a chunk it may not see never
moves a score.

When the caller passes a ``relevant`` set (the candidates the retrieval sides already rank
well), only those are read and scored; the others get 0. The graph then reorders what the text
found instead of promoting what the query merely dragged into the pool
(:mod:`trilha.graph.boost.service` says how the set is chosen and what it was measured against).

Degradation policy: when the graph is unreachable, fails, or exceeds ``timeout_s``, the result
is empty (callers keep unboosted scores) and carries a warning; these functions never raise for
backend trouble. Invalid arguments (a negative timeout) still raise.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Executor, Future
from typing import Any

from pydantic import BaseModel, Field

from trilha.access import Principal
from trilha.errors import BadRequestError
from trilha.graph.boost import statements as cypher
from trilha.graph.model import normalise_name
from trilha.graph.stores.base import GraphStore, Row
from trilha.graph.visibility import Visibility

logger = logging.getLogger(__name__)


class BoostWeights(BaseModel):
    """How much each kind of graph evidence adds to a chunk's raw boost. The criterio, fato
    and prova weights are applied when the prior is stored (the graph writer's weights); the
    entity weight at query time."""

    criterio: float = Field(1.0, ge=0, description="Per unit of Criterio peso.")
    fato: float = Field(0.5, ge=0, description="Per distinct Fato.")
    prova: float = Field(0.5, ge=0, description="Per distinct Prova.")
    entity: float = Field(1.0, ge=0, description="Per unit of salience of a query entity.")


class BoostResult(BaseModel):
    """Normalised boosts per unit_id, or nothing plus a warning when the graph failed."""

    scores: dict[str, float] = Field(description="unit_id → boost in [0, 1]; empty on failure.")
    warning: str | None = Field(None, description="Why no boost was computed, if it was not.")
    raw: dict[str, float] = Field(default_factory=dict, description="Raw boosts, for traces.")


def evidence_prior(row: Mapping[str, Any], weights: BoostWeights) -> float:
    """The query-independent prior of one chunk from its evidence row (criterios, fatos,
    provas), as :func:`trilha.graph.boost.statements.chunk_evidence` returns it."""
    crit: dict[str, float] = {}
    for c in row.get("criterios") or []:
        if c and c.get("id") is not None:
            peso = c.get("peso")
            crit[c["id"]] = max(crit.get(c["id"], 0.0), 1.0 if peso is None else float(peso))
    fatos = {f for f in row.get("fatos") or [] if f is not None}
    provas = {p for p in row.get("provas") or [] if p is not None}
    return (
        weights.criterio * sum(crit.values())
        + weights.fato * len(fatos)
        + weights.prova * len(provas)
    )


def specificity(chunks: Any, corpus: int | None) -> float:
    """``ln(N/df) / ln(N)`` in [0, 1] for an entity ``chunks`` (df) of ``corpus`` (N) chunks
    mention; 1 when either count is unknown (a graph written before counts) or N ≤ 1."""
    if corpus is None or corpus <= 1 or chunks is None:
        return 1.0
    df = max(1, int(chunks))
    return min(1.0, max(0.0, math.log(corpus / df) / math.log(corpus)))


def entity_part(
    entities: Sequence[Mapping[str, Any]] | None,
    weights: BoostWeights,
    corpus: int | None = None,
) -> float:
    """``w_entity × Σ salience × specificity`` of the distinct query entities a chunk mentions
    (``corpus``: chunks in the graph; None counts every entity as fully specific)."""
    ents: dict[str, float] = {}
    for e in entities or []:
        if e and e.get("id") is not None:
            value = float(e.get("salience") or 0.0) * specificity(e.get("chunks"), corpus)
            ents[e["id"]] = max(ents.get(e["id"], 0.0), value)
    return weights.entity * sum(ents.values())


def raw_boost(row: Mapping[str, Any], weights: BoostWeights, corpus: int | None = None) -> float:
    """The raw boost of one unit from its boost row: stored ``prior`` plus the entity part."""
    return float(row.get("prior") or 0.0) + entity_part(row.get("entities"), weights, corpus)


def normalise_boosts(raw: Mapping[str, float]) -> dict[str, float]:
    """Divide by the batch maximum, or by 1 when it is smaller: boosts stay in [0, 1], the
    best-connected unit gets 1 only when its evidence is worth at least 1."""
    top = max(1.0, *raw.values()) if raw else 1.0
    return {k: v / top for k, v in raw.items()}


def entity_keys(query_entities: Sequence[str]) -> list[str]:
    """The entity ids (normalised names) of the query's entities, blanks and NULs dropped."""
    return sorted(
        {
            normalise_name(n)
            for n in query_entities
            if isinstance(n, str) and normalise_name(n) and "\x00" not in n
        }
    )


def _rows(
    store: GraphStore, unit_ids: Sequence[str], keys: list[str], timeout_s: float, vis: Visibility
) -> list[Row]:
    params: dict[str, Any] = {**vis.params, "unit_ids": list(dict.fromkeys(unit_ids))}
    if keys:
        params["entity_keys"] = keys
    return store.run(cypher.kg_boost(bool(keys), vis), params, timeout_s=timeout_s)


def scored(
    unit_ids: Sequence[str], rows: list[Row], weights: BoostWeights, corpus: int | None
) -> BoostResult:
    """The boosts of ``unit_ids`` from the boost read's ``rows`` (a unit without a row: 0)."""
    raw = dict.fromkeys(unit_ids, 0.0)
    for row in rows:
        raw[row["uid"]] = raw_boost(row, weights, corpus)
    return BoostResult(scores=normalise_boosts(raw), raw=raw)


def gated_ids(unit_ids: Sequence[str], relevant: Collection[str] | None) -> list[str]:
    """The distinct units worth reading: all, or those in ``relevant``."""
    ids = dict.fromkeys(unit_ids)
    return list(ids) if relevant is None else [u for u in ids if u in relevant]


def _failed(reason: str) -> BoostResult:
    warning = f"kg boost skipped: {reason}"
    logger.warning(warning)
    return BoostResult(scores={}, warning=warning)


def _check_timeout(timeout_s: float) -> None:
    if not timeout_s > 0:
        raise BadRequestError(f"timeout_s must be > 0, got {timeout_s!r}")


def _start(
    store: GraphStore,
    ids: list[str],
    keys: list[str],
    timeout_s: float,
    executor: Executor | None,
    vis: Visibility,
) -> Future[list[Row]]:
    """The boost read, running on ``executor`` or a new daemon thread."""
    if executor is not None:
        return executor.submit(_rows, store, ids, keys, timeout_s, vis)
    future: Future[list[Row]] = Future()

    def work() -> None:
        try:
            future.set_result(_rows(store, ids, keys, timeout_s, vis))
        except BaseException as e:  # handed to the caller's thread through the future
            future.set_exception(e)

    threading.Thread(target=work, name="trilha-kg-boost", daemon=True).start()
    return future


def compute_kg_boost(
    store: GraphStore | None,
    unit_ids: Sequence[str],
    query_entities: Sequence[str],
    timeout_s: float = 2.0,
    *,
    weights: BoostWeights | None = None,
    relevant: Collection[str] | None = None,
    executor: Executor | None = None,
    corpus_size: int | None = None,
    principal: Principal | None = None,
) -> BoostResult:
    """Boosts for ``unit_ids`` as ``principal`` sees the graph (None: anonymous), with at most
    ONE graph query, within ``timeout_s`` (wall clock); only ``relevant`` units are read and may
    score (all when None). ``corpus_size`` (chunks the principal sees in the graph) sets the
    entities' specificity; None treats every entity as specific.

    The query runs on ``executor`` (a long-lived pool: no thread to start per call) or, without
    one, on a new daemon thread; either way the caller stops waiting at ``timeout_s``."""
    _check_timeout(timeout_s)
    if not unit_ids:
        return BoostResult(scores={})
    if store is None:
        return _failed("no graph store configured")
    wanted = gated_ids(unit_ids, relevant)
    if not wanted:
        return scored(unit_ids, [], weights or BoostWeights(), corpus_size)
    try:
        keys = entity_keys(query_entities)
        future = _start(store, wanted, keys, timeout_s, executor, Visibility.of(principal))
        rows = future.result(timeout_s)
    except TimeoutError:
        return _failed(f"graph slower than {timeout_s}s")
    except Exception as e:  # any backend failure degrades, by policy
        return _failed(f"graph unavailable ({type(e).__name__}: {e})")
    return scored(unit_ids, rows, weights or BoostWeights(), corpus_size)
