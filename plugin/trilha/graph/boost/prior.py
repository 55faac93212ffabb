"""The stored KG prior: each Chunk's query-independent evidence score, kept as ``kg_prior``.

The prior (:func:`trilha.graph.boost.score.evidence_prior`) sums the Criterio, Fato and Prova nodes
linked to a chunk or to its Doc; ``kg_prior_own`` those linked to the chunk itself, which a
query reads instead when its principal may not see the Doc. They change only when those links
change, so they are computed at write time and a query reads them with its candidates in one
statement:

* units written: their chunks (a new chunk inherits its Doc's evidence);
* records written: the chunks of every Doc or Chunk a ``HAS_CRITERIO``/``HAS_FATO``/``HAS_PROVA``
  edge leaves, and the chunks citing a Criterio whose node record may change its ``peso``;
* a document replaced: all its chunks, once record edges of removed chunks moved to the Doc;
* a document deleted: nothing (its chunks are gone; other chunks' evidence is unchanged);
* chunks written before priors existed: :func:`backfill_priors`, on the first boost.

The entity part of the boost also reads, per entity, how many chunks the principal sees
mention it, from the entity's access summary (:mod:`trilha.graph.support`), kept by every
mention write with ``chunks`` (the count over all chunks); :func:`backfill_entity_counts` fills
both in on a graph written before they existed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from trilha.graph.boost import statements as cypher
from trilha.graph.boost.score import BoostWeights, evidence_prior
from trilha.graph.build.records import EdgeRecord, NodeRecord
from trilha.graph.build.statements import refresh_entity_salience
from trilha.graph.model import node_key
from trilha.graph.stores.base import GraphStore, batched, write_rows

#: Relationship types whose edges are evidence for the prior.
EVIDENCE_RELS = frozenset({"HAS_CRITERIO", "HAS_FATO", "HAS_PROVA"})


def refresh_priors(
    store: GraphStore, chunk_ids: Iterable[str], weights: BoostWeights, batch_size: int = 2000
) -> int:
    """Recompute and store the priors of ``chunk_ids`` (``kg_prior``, and ``kg_prior_own`` from
    the evidence linked to the chunk itself); returns how many chunks were set."""
    ids = sorted(set(chunk_ids))
    rows: list[dict[str, Any]] = []
    for part in batched(ids, batch_size):
        for r in store.run(cypher.chunk_evidence(), {"ids": list(part)}):
            own = {k: r[f"own_{k}"] for k in ("criterios", "fatos", "provas")}
            prior, own_prior = evidence_prior(r, weights), evidence_prior(own, weights)
            rows.append({"id": r["uid"], "prior": prior, "own": own_prior})
    write_rows(store, cypher.set_kg_prior(), rows, batch_size=batch_size)
    return len(rows)


def chunks_of_docs(store: GraphStore, doc_ids: Iterable[str]) -> set[str]:
    """Ids of the chunks of ``doc_ids``."""
    ids = sorted(set(doc_ids))
    return {r["id"] for r in store.run(cypher.chunks_of_docs(), {"ids": ids})} if ids else set()


def chunks_touched_by(store: GraphStore, records: Iterable[NodeRecord | EdgeRecord]) -> set[str]:
    """The chunks whose prior ``records`` may change (see the module docstring)."""
    docs: set[str] = set()
    chunks: set[str] = set()
    criterios: set[str] = set()
    for r in records:
        if isinstance(r, NodeRecord):
            if r.label == "Criterio":
                criterios.add(node_key("Criterio", r.id))
        elif r.type in EVIDENCE_RELS:
            (label, raw), _ = r.endpoints()
            (docs if label == "Doc" else chunks).add(raw)
    found = chunks | chunks_of_docs(store, docs)
    if criterios:
        rows = store.run(cypher.chunks_citing("Criterio"), {"ids": sorted(criterios)})
        found |= {r["id"] for r in rows}
    return found


def backfill_priors(store: GraphStore, weights: BoostWeights, batch_size: int = 2000) -> int:
    """Store the prior of every chunk that has none (a graph written before priors existed)."""
    missing = [r["id"] for r in store.run(cypher.chunks_without_prior(), {})]
    return refresh_priors(store, missing, weights, batch_size) if missing else 0


def backfill_entity_counts(store: GraphStore, batch_size: int = 2000) -> int:
    """Store ``chunks`` (and refresh ``salience``) of every entity that has no count yet."""
    missing = [r["id"] for r in store.run(cypher.entities_without_chunk_count(), {})]
    return write_rows(store, refresh_entity_salience(), missing, batch_size=batch_size)
