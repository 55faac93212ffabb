"""Writing into every index of a workspace: documents, deletions and graph records.

The unit store is written first and stays the truth; the dense index and the graph follow.
Graph trouble is recorded, never fatal (:mod:`trilha.workspace.repair` catches the graph up later).
Callers swap in the new lexical snapshot afterwards (:meth:`Workspace.ingest` does).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trilha.errors import BackendUnavailableError, BadRequestError, ConfigurationError
from trilha.graph.service import GraphService
from trilha.index.docstore import DocStore
from trilha.ingest.loaders import Loaded
from trilha.ingest.pipeline import Enricher, IngestPipeline, IngestReport
from trilha.settings import TrilhaSettings
from trilha.types import TextUnit
from trilha.workspace.parts import Parts

if TYPE_CHECKING:
    from trilha.graph.build.records import EdgeRecord, NodeRecord

log = logging.getLogger(__name__)

#: Units written into the graph per call when restoring it.
GRAPH_BATCH = 2000


def ingest(
    parts: Parts,
    documents: Iterable[Loaded],
    defaults: Mapping[str, Any],
    progress: bool = False,
    max_words: int = 180,
    settings: TrilhaSettings | None = None,
    workspace: Path | None = None,
    refresh: Callable[[], None] | None = None,
) -> IngestReport:
    """Index documents into the store, the dense index and the graph (``defaults``: the access
    fields of documents that carry none; ``settings``: whether decision fields are extracted,
    :mod:`trilha.ingest.extract_features`; ``refresh``: swaps in the lexical snapshot, called
    every :data:`~trilha.ingest.pipeline.REFRESH_UNITS` units written); graph trouble is listed
    in ``report.errors``."""
    errors: list[str] = []
    written: list[str] = []

    def on_doc_written(doc_id: str, units: list[TextUnit]) -> None:
        written.append(doc_id)
        write_doc(parts.graph, doc_id, units, errors)

    pipeline = IngestPipeline(
        parts.store,
        parts.dense,
        parts.embedder,
        max_words=max_words,
        on_doc_written=on_doc_written,
        defaults=defaults,
        enrich=feature_enricher(settings),
        workspace=workspace,
        on_written=refresh,
    )
    try:
        report = pipeline.run(documents, progress=progress)
    finally:  # a reader that copied the graph mid-write copies it again
        if parts.graph is not None and written:
            parts.store.bump_graph()
    report.errors.extend(errors)
    return report


def feature_enricher(settings: TrilhaSettings | None) -> Enricher | None:
    """The Groq extractor of decision fields when ``TRILHA_FEATURE_EXTRACTION=llm``."""
    if settings is None or settings.feature_extraction != "llm":
        return None
    from trilha.ingest.extract_features import FeatureExtractor
    from trilha.llm.groq import groq_client

    client = groq_client(settings)
    if client is None:
        raise ConfigurationError(
            "TRILHA_FEATURE_EXTRACTION=llm needs TRILHA_GROQ_API_KEY; set it, or use off"
        )
    return FeatureExtractor(client, settings.groq_model, settings.llm_timeout_s).enrich


def delete(parts: Parts, doc_id: str) -> int:
    """Remove a document from every index; returns the number of units removed."""
    parts.store.mark_pending([doc_id])
    removed = parts.store.delete_doc(doc_id)
    parts.dense.delete_doc(doc_id)
    if parts.graph is not None:
        try:
            parts.graph.delete_doc(doc_id)
        except Exception as e:
            log.warning("graph delete of %s failed (%s); run trilha doctor", doc_id, e)
        parts.store.bump_graph()  # a reader that copied the graph mid-write copies it again
    parts.store.clear_pending([doc_id])
    return removed


def write_records(parts: Parts, path: Path, defaults: Mapping[str, Any]) -> int:
    """Write the graph records (JSON/JSONL nodes and edges) of the file at ``path``; returns
    how many. The whole file is checked first: a malformed record, one naming a document or
    unit the unit store lacks, or one with bad access fields (a Task, User... node gets
    ``defaults`` for those it lacks) refuses the file (one error listing the lines) and
    nothing is written.

    All of the file or none: its records are logged in the unit store (the intent log,
    :class:`~trilha.index.record_log.RecordLog`) before the graph is touched, and the
    entry is cleared once the graph holds them all. A crash in between leaves the entry, and
    the next repair (on open, or ``trilha doctor --repair``) writes the file again from it
    (:func:`replay_records`): writes are upserts, so the graph ends up holding the whole file."""
    from trilha.graph.build.records import load_records

    graph = parts.require_graph()
    records = load_records(path)
    _finish_earlier(parts)  # an older file's entry replayed later would undo this one
    jsonl = "\n".join(r.model_dump_json() for r in records)
    entry = parts.store.records.log(str(path), len(records), json.dumps(dict(defaults)), jsonl)
    try:
        _write_logged(graph, parts.store, records, defaults)
    except BadRequestError:  # refused before anything was written: nothing to finish
        parts.store.records.clear(entry)
        raise
    parts.store.records.clear(entry)
    return len(records)


def _finish_earlier(parts: Parts) -> None:
    """Finish every records ingest still logged (one the graph failed part-way), so that this
    one is written last; refuse it while one cannot be finished."""
    replay_records(parts)
    left = parts.store.records.pending()
    if left:
        raise BackendUnavailableError(
            f"an earlier records ingest ({left[0][1]}) is unfinished and the graph cannot take "
            "it now; run trilha doctor --repair once the graph is back, then ingest again"
        )


def _write_logged(
    graph: GraphService,
    store: DocStore,
    records: Sequence[NodeRecord | EdgeRecord],
    defaults: Mapping[str, Any],
) -> None:
    """Write records into the graph, checked against the unit store's documents and units."""
    graph.write_records(
        records,
        known_docs=store.doc_ids(),
        known_units=store.unit_ids(),
        access_defaults=defaults,
    )


def replay_records(parts: Parts) -> None:
    """Write every logged records ingest (one a crash interrupted) into the graph again and
    clear its entry. One the workspace now refuses (a document it names was deleted since) is
    dropped with a warning; graph trouble leaves the entries for the next repair."""
    from trilha.graph.build.records import loads_records

    if parts.graph is None:
        return
    for entry, name, n in parts.store.records.pending():
        defaults, jsonl = parts.store.records.logged(entry)
        log.warning("finishing the interrupted ingest of %d graph records from %s", n, name)
        try:
            _write_logged(parts.graph, parts.store, loads_records(jsonl), json.loads(defaults))
        except BadRequestError as e:
            log.warning("the records of %s are refused now (%s); dropped", name, e)
        except Exception as e:
            log.warning("graph records of %s not written (%s); run trilha doctor", name, e)
            return
        finally:
            parts.store.bump_graph()
        parts.store.records.clear(entry)


def write_doc(
    graph: GraphService | None, doc_id: str, units: list[TextUnit], errors: list[str]
) -> None:
    """Write a committed document into the graph, new state before old is removed (curated
    record edges survive; no units means the document is gone). Graph trouble is appended to
    ``errors``, never raised: the unit store stays the truth and a repair re-syncs."""
    if graph is None:
        return
    try:
        graph.replace_doc(doc_id, units)
    except Exception as e:
        msg = f"graph ingest failed for {doc_id} ({type(e).__name__}: {e}); run trilha doctor"
        log.warning(msg)
        errors.append(msg)


def write_units(graph: GraphService, units: Sequence[TextUnit]) -> int:
    """Write units into the graph in batches (idempotent); returns how many."""
    for start in range(0, len(units), GRAPH_BATCH):
        graph.ingest(units[start : start + GRAPH_BATCH])
    return len(units)
