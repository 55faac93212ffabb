"""Keep the derived indices (dense, graph) holding exactly the unit store's units.

:func:`check` compares the three id sets and lists the interrupted writes; :func:`repair`
re-syncs documents whose write was interrupted, removes orphans, restores missing units, then
finishes interrupted graph records ingests from the intent log (it rolls them forward). Graph
trouble is logged and reported, never fatal: the unit store stays the truth and the next repair
catches up.
"""

from __future__ import annotations

import logging

from trilha.graph.service import GraphService
from trilha.index.docstore import DocStore
from trilha.ingest.chunking import index_text
from trilha.types import TextUnit
from trilha.workspace.consistency import Consistency, IndexDiff
from trilha.workspace.parts import Parts
from trilha.workspace.writes import replay_records, write_doc, write_units

log = logging.getLogger(__name__)


def check(parts: Parts) -> Consistency:
    """Compare the unit ids of the unit store, the dense index and the graph."""
    truth = parts.store.unit_ids()
    graph, graph_error = None, parts.graph_warning
    if parts.graph is not None:
        try:
            graph = IndexDiff.of(truth, parts.graph.chunk_ids())
        except Exception as e:  # a graph that is down is reported, never fatal
            graph_error = f"graph not checked ({type(e).__name__}: {e})"
            log.warning(graph_error)
    return Consistency(
        units=len(truth),
        dense=IndexDiff.of(truth, parts.dense.unit_ids()),
        graph=graph,
        graph_error=graph_error,
        pending=parts.store.pending_docs(),
        pending_records=[f"{name} ({n} records)" for _, name, n in parts.store.records.pending()],
    )


def repair(parts: Parts, progress: bool = False) -> Consistency:
    """Make the derived indices agree with the unit store; returns what was found before."""
    found = check(parts)
    if found.consistent:
        return found
    found_now = found
    if found.pending:
        log.warning("re-syncing %d interrupted documents from the unit store", len(found.pending))
        resync(parts, found.pending, progress)
        found_now = check(parts)
    dense = found_now.dense
    if dense.orphans:
        log.warning("dense index holds %d units the store lacks; removing", len(dense.orphans))
        parts.dense.delete_units(dense.orphans)
    if dense.missing:
        log.warning("dense index lacks %d units; re-encoding them", len(dense.missing))
        encode(parts, list(parts.store.get(dense.missing).values()), progress)
        lexical = parts.searcher.lexical  # its rows' copy of the vectors gets theirs too
        if lexical.vectors is not None:
            ids = [u.unit_id for u in lexical.rows]
            completed = lexical.vectors.completed(ids, parts.dense)
            parts.searcher.lexical = lexical.with_vectors(completed)
    if parts.graph is not None and found_now.graph is not None and not found_now.graph.equal:
        repair_graph(parts.graph, parts.store, found_now.graph)
    if found.pending_records:
        replay_records(parts)
    return found


def encode(parts: Parts, units: list[TextUnit], progress: bool = False) -> None:
    """Encode units and store their vectors."""
    if units:
        vectors = parts.embedder.encode_documents([index_text(u) for u in units], progress)
        parts.dense.upsert(units, vectors)


def resync(parts: Parts, doc_ids: list[str], progress: bool) -> None:
    """Rewrite these documents in the derived indices from the store, then clear their marks
    (a document the store lacks is removed from them)."""
    for doc_id in doc_ids:
        parts.dense.delete_doc(doc_id)
    units = parts.store.units_of(doc_ids)
    encode(parts, units, progress)
    errors: list[str] = []
    for doc_id in doc_ids:
        write_doc(parts.graph, doc_id, [u for u in units if u.doc_id == doc_id], errors)
    parts.store.clear_pending(doc_ids)


def repair_graph(graph: GraphService, store: DocStore, diff: IndexDiff) -> None:
    """Remove the chunks the unit store lacks and write the units the graph lacks (a workspace
    made before the graph existed, a lost graph folder, an interrupted write). Graph trouble is
    logged, never fatal: the graph stays behind and doctor says so."""
    try:
        if diff.orphans:
            log.warning("graph holds %d units the store lacks; removing", len(diff.orphans))
            graph.remove_chunks(diff.orphans, keep_docs=set(store.doc_ids()))
        if diff.missing:
            log.warning("graph lacks %d units; writing them", len(diff.missing))
            write_units(graph, list(store.get(diff.missing).values()))
    except Exception as e:
        log.warning("graph repair failed (%s: %s); the graph stays behind", type(e).__name__, e)
