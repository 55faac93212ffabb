"""The idempotent ingest pipeline: chunk, skip unchanged, encode, write every index.

Order of writes for one batch: encode (the step most likely to fail) → dense upsert → unit store
commit per document. A crash part-way leaves at worst dense points that the unit store does not
know; the next ingest of the same document rewrites them (ids are deterministic), so nothing is
lost or duplicated. The lexical index is rebuilt from the unit store at the end.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tqdm.auto import tqdm

from trilha.encode.base import Embedder
from trilha.index.dense import DenseIndex
from trilha.index.docstore import DocStore
from trilha.index.tokenize import tokenize
from trilha.ingest.chunking import chunk_document, content_hash, index_text
from trilha.ingest.loaders import SourceDocument
from trilha.types import TextUnit

log = logging.getLogger(__name__)

#: Called with (units written, their document ids) after each batch, e.g. by the graph writer.
UnitsHook = Callable[[list[TextUnit]], None]


@dataclass
class IngestReport:
    """What an ingest did."""

    docs_seen: int = 0
    docs_added: int = 0
    docs_updated: int = 0
    docs_unchanged: int = 0
    units_written: int = 0
    seconds: float = 0.0
    encode_seconds: float = 0.0
    errors: list[str] = field(default_factory=list)


@dataclass
class _Pending:
    doc: SourceDocument
    units: list[TextUnit]
    digest: str
    existed: bool


class IngestPipeline:
    """Writes documents into the unit store and the dense index."""

    def __init__(
        self,
        store: DocStore,
        dense: DenseIndex,
        embedder: Embedder,
        max_words: int = 180,
        batch_units: int = 2048,
        on_doc_removed: Callable[[str], None] | None = None,
        on_units_written: UnitsHook | None = None,
    ) -> None:
        self.store = store
        self.dense = dense
        self.embedder = embedder
        self.max_words = max_words
        self.batch_units = batch_units
        self.on_doc_removed = on_doc_removed
        self.on_units_written = on_units_written

    def run(
        self, documents: Iterable[SourceDocument], progress: bool = True, total: int | None = None
    ) -> IngestReport:
        """Ingest documents; unchanged ones (same content hash) are skipped."""
        report = IngestReport()
        start = time.perf_counter()
        batch: list[_Pending] = []
        n_units = 0
        bar = tqdm(total=total, unit="doc", desc="ingest", disable=not progress)
        seen: set[str] = set()
        for doc in documents:
            report.docs_seen += 1
            if doc.doc_id in seen:
                raise_dup = f"document id {doc.doc_id!r} appears twice in this ingest"
                report.errors.append(raise_dup)
                log.warning(raise_dup)
            seen.add(doc.doc_id)
            units = chunk_document(doc, self.max_words)
            digest = content_hash(units)
            old = self.store.doc_hash(doc.doc_id)
            if old == digest:
                report.docs_unchanged += 1
                bar.update(1)
                continue
            batch.append(_Pending(doc, units, digest, old is not None))
            n_units += len(units)
            if n_units >= self.batch_units:
                self._flush(batch, report, bar)
                batch, n_units = [], 0
        self._flush(batch, report, bar)
        bar.close()
        report.seconds = time.perf_counter() - start
        return report

    def _flush(self, batch: list[_Pending], report: IngestReport, bar: tqdm[Any]) -> None:
        if not batch:
            return
        units = [u for p in batch for u in p.units]
        t0 = time.perf_counter()
        vectors = self.embedder.encode_documents([index_text(u) for u in units])
        report.encode_seconds += time.perf_counter() - t0
        for p in batch:
            if p.existed:
                self.dense.delete_doc(p.doc.doc_id)
                if self.on_doc_removed:
                    self.on_doc_removed(p.doc.doc_id)
        if units:
            self.dense.upsert(units, vectors)
        for p in batch:
            tokens = [tokenize(index_text(u), u.lang) for u in p.units]
            self.store.replace_doc(
                p.doc.doc_id, p.digest, p.doc.meta.get("source_ref"), p.units, tokens
            )
            report.docs_updated += p.existed
            report.docs_added += not p.existed
            bar.update(1)
        report.units_written += len(units)
        if self.on_units_written and units:
            self.on_units_written(units)
