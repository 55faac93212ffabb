"""The idempotent ingest pipeline: validate, chunk, skip unchanged, encode, write every index.

Every document is validated and chunked before anything is written; a bad one becomes a
:class:`~trilha.ingest.loaders.Refusal` and the rest go on. Changed documents are written in
batches, new state before old state is removed:

1. the batch's documents are marked *pending* in the unit store (the intent log);
2. their units are encoded and upserted into the dense index, a sub-batch at a time (bounded
   memory; the progress bar counts units);
3. per document, the unit store replaces its units in one transaction (the commit point), then
   the dense points of units the document no longer has are removed and the graph hook runs;
4. the marks are cleared.

A crash anywhere leaves the marks behind, and the workspace re-syncs those documents from the
unit store when it opens: each document ends up wholly old or wholly new in all three indices,
never missing. The lexical index catches up with the unit store at the end, and during a long
ingest every :data:`REFRESH_UNITS` units written (``on_written``), so that what it reads at once
stays bounded however many documents one call brings, and they become searchable as they go.
"""

from __future__ import annotations

import logging
import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from trilha.encode.auto import AutoEmbedder
from trilha.encode.base import Embedder
from trilha.errors import BadRequestError
from trilha.index.dense import DenseIndex
from trilha.index.docstore import DocStore
from trilha.index.tokenize import tokenize
from trilha.ingest.chunking import chunk_document, content_hash, index_text
from trilha.ingest.loaders import Loaded, Refusal, SourceDocument
from trilha.types import TextUnit

log = logging.getLogger(__name__)

#: Called with (doc_id, its new units) once the document is committed (the graph's replace).
DocHook = Callable[[str, list[TextUnit]], None]
#: Adds fields to a document before it is chunked; gives a warning line when it cannot.
Enricher = Callable[[SourceDocument], tuple[SourceDocument, str | None]]


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
    refused: list[Refusal] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """``{added, updated, unchanged, refused: [{file, reason}], units_written}``."""
        return {
            "added": self.docs_added,
            "updated": self.docs_updated,
            "unchanged": self.docs_unchanged,
            "refused": [{"file": r.file, "reason": r.reason} for r in self.refused],
            "units_written": self.units_written,
        }


@dataclass(frozen=True)
class _Later:
    """A document whose claim on an id waits for the rest of the ingest."""

    item: Loaded


@dataclass
class _Pending:
    doc: SourceDocument
    units: list[TextUnit]
    digest: str
    old_unit_ids: list[str]
    existed: bool


def _delete_command(workspace: Path | None, doc_id: str) -> str:
    """The command that drops ``doc_id``, quoted for a shell."""
    where = f" -w {shlex.quote(str(workspace))}" if workspace else ""
    return f"trilha ingest{where} --delete={shlex.quote(doc_id)}"


#: Units encoded and written per batch.
BATCH_UNITS = 2048
#: Units written between two calls of a pipeline's ``on_written`` during one ingest.
REFRESH_UNITS = 50_000


class IngestPipeline:
    """Writes documents into the unit store and the dense index (and, via a hook, the graph)."""

    def __init__(
        self,
        store: DocStore,
        dense: DenseIndex,
        embedder: Embedder,
        max_words: int = 180,
        batch_units: int | None = None,
        encode_batch: int = 256,
        on_doc_written: DocHook | None = None,
        defaults: Mapping[str, Any] | None = None,
        enrich: Enricher | None = None,
        workspace: Path | None = None,
        on_written: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.dense = dense
        self.embedder = embedder
        self.max_words = max_words
        if batch_units is not None and batch_units < 1:
            raise ValueError(
                f"batch_units must be at least 1 (None: {BATCH_UNITS}), not {batch_units}"
            )
        self.batch_units = BATCH_UNITS if batch_units is None else batch_units
        self.encode_batch = encode_batch
        self.on_doc_written = on_doc_written
        self.defaults = dict(defaults or {})
        self.enrich = enrich
        self.workspace = workspace  # named in the commands refusals suggest
        self.on_written = on_written  # called every REFRESH_UNITS units written
        self._unrefreshed = 0
        self.langs: dict[str, int] = {}  # units by lang, the store's and this ingest's

    def run(self, documents: Iterable[Loaded], progress: bool = True) -> IngestReport:
        """Ingest documents; unchanged ones (same content hash) are skipped, bad ones refused.
        The progress bar counts units encoded."""
        report = IngestReport()
        start = time.perf_counter()
        self.langs = dict(self.store.languages())
        batch: list[_Pending] = []
        n_units = 0
        # shown on a terminal only (disable=None), and only when asked for
        bar = tqdm(unit="unit", desc="ingest", disable=None if progress else True)
        seen: dict[str, str] = {}
        deferred: list[_Later] = []  # read once the documents are: chain() gets there last
        for item in chain(documents, deferred):
            if not isinstance(item, _Later) and self._takes_over(item, seen):
                deferred.append(_Later(item))
                continue
            pending = self._prepare(item.item if isinstance(item, _Later) else item, seen, report)
            bar.set_postfix(docs=report.docs_seen, refused=len(report.refused), refresh=False)
            if pending is None:
                continue
            batch.append(pending)
            n_units += len(pending.units)
            if n_units >= self.batch_units:
                self._flush(batch, report, bar)
                batch, n_units = [], 0
        self._flush(batch, report, bar)
        bar.close()
        report.seconds = time.perf_counter() - start
        return report

    def _prepare(self, item: Loaded, seen: dict[str, str], report: IngestReport) -> _Pending | None:
        """Validate and chunk one document; None when it is refused or unchanged."""
        if isinstance(item, Refusal):
            self._refuse(report, item)
            return None
        doc = self._held_id(item)
        report.docs_seen += 1
        conflict = self._conflict(doc, seen)
        if conflict is not None:
            self._refuse(report, Refusal(doc.where, conflict))
            return None
        seen[doc.doc_id] = doc.where
        try:
            units = chunk_document(doc, self.max_words, self.defaults, self.langs)
        except BadRequestError as e:
            self._refuse(report, Refusal(doc.where, str(e)))
            return None
        old = self.store.doc_hash(doc.doc_id)
        if not units:  # an empty file, or front matter alone: nothing a search could find
            self._refuse(report, Refusal(doc.where, self._empty_reason(doc.doc_id, old)))
            return None
        digest = content_hash(units)
        if old == digest:
            report.docs_unchanged += 1
            return None
        self.langs[units[0].lang] = self.langs.get(units[0].lang, 0) + len(units)
        if self.enrich is not None:  # the digest stays the document's own, before enriching
            units = self._enriched(doc, units, report)
        old_ids = self.store.unit_ids_of(doc.doc_id) if old is not None else []
        return _Pending(doc, units, digest, old_ids, old is not None)

    def _empty_reason(self, doc_id: str, held: str | None) -> str:
        if held is None:  # no version of it indexed before
            return "no text to index; write some or remove the file"
        return (
            "no text to index; the version indexed before stays: write some text, "
            f"or drop it with `{_delete_command(self.workspace, doc_id)}`"
        )

    def _enriched(
        self, doc: SourceDocument, units: list[TextUnit], report: IngestReport
    ) -> list[TextUnit]:
        """The units of ``doc`` with the fields ``enrich`` adds; ``units`` when it adds none
        or fails (one line in ``report.errors``)."""
        assert self.enrich is not None
        richer, warning = self.enrich(doc)
        if warning is not None:
            report.errors.append(warning)
        if richer is doc:
            return units
        try:
            return chunk_document(richer, self.max_words, self.defaults, self.langs)
        except BadRequestError as e:
            report.errors.append(f"{doc.where}: extracted fields not kept ({e})")
            return units

    def _held_id(self, doc: SourceDocument) -> SourceDocument:
        """``doc`` under the id its file already has here when both ids come from the file's
        path: ``docs/a/x.md`` is ``a/x`` when ``docs`` is ingested and ``x`` when ``docs/a``
        is, and one file must stay one document."""
        if not doc.named_by_path or doc.origin is None:
            return doc
        held = self.store.doc_ids_from(doc.origin)
        if not held or doc.doc_id in held:
            return doc
        return doc.model_copy(update={"doc_id": held[0]})

    def _conflict(self, doc: SourceDocument, seen: Mapping[str, str]) -> str | None:
        """Why ``doc`` may not take its ``doc_id`` (another document of this ingest has it, or
        another file that still exists owns it), or None when it may."""
        first = seen.get(doc.doc_id)
        if first is not None:
            return (
                f"doc_id {doc.doc_id!r} is already used by {first} in this ingest; "
                "give one of them another doc_id"
            )
        owner = self.store.doc_origin(doc.doc_id)
        owner_file = Path(owner) if owner else None
        if doc.origin and owner and owner != doc.origin and owner_file and owner_file.exists():
            drop = _delete_command(self.workspace, doc.doc_id)
            return (
                f"doc_id {doc.doc_id!r} already belongs to {owner}; give this document "
                f"another doc_id, or delete the other first (`{drop}`)"
            )
        return None

    def _takes_over(self, item: Loaded, seen: Mapping[str, str]) -> bool:
        """Whether ``item`` claims, with other text, the id of a document whose file is gone.
        Decided after the rest of the ingest, so that the file moved (the same text, so the
        same document) keeps its id in whichever order the two are read."""
        if isinstance(item, Refusal):
            return False
        doc = self._held_id(item)
        if doc.origin is None or doc.doc_id in seen:
            return False
        owner = self.store.doc_origin(doc.doc_id)
        if not owner or owner == doc.origin:
            return False
        if Path(owner).exists():
            return False  # _conflict refuses it
        try:
            units = chunk_document(doc, self.max_words, self.defaults)
        except BadRequestError:
            return False  # refused in its turn
        held = self.store.units_of([doc.doc_id])  # the text, not a title taken from a path
        return [u.text for u in units] != [u.text for u in held]

    @staticmethod
    def _refuse(report: IngestReport, refusal: Refusal) -> None:
        log.info("refused %s", refusal)  # the report carries it; callers show it
        report.refused.append(refusal)

    def _encode_and_upsert(self, units: Sequence[TextUnit], report: IngestReport, bar: Any) -> None:
        for start in range(0, len(units), self.encode_batch):
            part = units[start : start + self.encode_batch]
            t0 = time.perf_counter()
            vectors = self.embedder.encode_documents([index_text(u) for u in part])
            report.encode_seconds += time.perf_counter() - t0
            self.dense.upsert(part, vectors)
            bar.update(len(part))

    def _flush(self, batch: list[_Pending], report: IngestReport, bar: tqdm[Any]) -> None:
        if not batch:
            return
        if isinstance(self.embedder, AutoEmbedder):  # the default encoder: chosen by language
            self.embedder.choose([u.lang for p in batch for u in p.units])
        doc_ids = [p.doc.doc_id for p in batch]
        self.store.mark_pending(doc_ids)
        self._encode_and_upsert([u for p in batch for u in p.units], report, bar)
        for p in batch:
            tokens = [tokenize(index_text(u), u.lang) for u in p.units]
            self.store.replace_doc(
                p.doc.doc_id, p.digest, p.doc.meta.get("source_ref"), p.units, tokens, p.doc.origin
            )
            kept = {u.unit_id for u in p.units}
            stale = [uid for uid in p.old_unit_ids if uid not in kept]
            if stale:
                self.dense.delete_units(stale)
            if self.on_doc_written is not None:
                self.on_doc_written(p.doc.doc_id, p.units)
            report.docs_updated += p.existed
            report.docs_added += not p.existed
            report.units_written += len(p.units)
            self._unrefreshed += len(p.units)
        self.store.clear_pending(doc_ids)
        if self.on_written is not None and self._unrefreshed >= REFRESH_UNITS:
            self._unrefreshed = 0
            self.on_written()
