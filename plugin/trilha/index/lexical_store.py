"""The lexical index kept at the unit store's generation: a saved base, caught up by increments.

The index is derived state; the unit store is the truth. A snapshot reflects a position of the
store: its generation, its newest unit row (rows are never reused) and the last entry of its
deletion log (:meth:`~trilha.index.docstore.DocStore.changes`). :func:`catch_up` reads what
changed since that position — the units past the row, the rows deleted since the entry — in
one read, and makes the next snapshot from them (:meth:`LexicalIndex.extended`): the cost of
an ingest or a delete grows with the units it changed, not with the corpus, and a reader
process follows the writer the same way, without reloading anything whole.

When the rows added since the base, plus the dead ones, pass :data:`MERGE_FRACTION` of it, the
snapshot is merged into one segment (:meth:`LexicalIndex.compacted`) and the writer saves it as
the new base: the term matrix goes whole into a new folder, ``base-<generation>``, before
``state.json`` is replaced to point at it (a rename), so a process opening the workspace while
another saves it reads the old base or the new one, never half of each, and a crashed save
leaves the old one readable. Older folders are then removed (one writer saves at a time: it
holds the workspace lock). Opening reads the base and the store's units once, then catches up.
A merge runs in the writer's ingest or delete, off the search path (searches go on with the
snapshot from before the ingest until the merged one is swapped in); a reader merges its own
snapshot in memory, on a thread of its own, and swaps it in when it is done.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trilha.index.bm25 import Ints, Segments, TermMatrix
from trilha.index.docstore import DocStore, StoreChanges
from trilha.index.lexical import LexicalIndex
from trilha.index.row_vectors import CODES, SCALES, RowVectors, VectorSource
from trilha.types import TextUnit

log = logging.getLogger(__name__)

#: What :func:`save` writes; a base of another format is rebuilt, not read.
FORMAT = "seg-1"
#: Merge when the rows added since the base and the dead rows pass this fraction of it.
MERGE_FRACTION = 0.25
#: Join the segments added since the base when there are more than this many.
MAX_DELTAS = 8


@dataclass(frozen=True)
class Base:
    """A saved merged snapshot: its term matrix (None: no units), each row's unit store row,
    the store position it reflects and, when saved with it, each row's dense vector."""

    matrix: TermMatrix | None
    store_rows: Ints
    generation: int
    seq: int
    vectors: RowVectors | None = None
    folder: Path | None = None


def needs_merge(index: LexicalIndex) -> bool:
    """Whether the rows added since the base and the dead rows pass :data:`MERGE_FRACTION`."""
    grown = len(index.rows) - index.base_rows + index.dead
    return grown > 0 and grown > MERGE_FRACTION * index.base_rows


def settled(
    index: LexicalIndex, store: DocStore, folder: Path, *, save: bool, merge: bool = True
) -> LexicalIndex:
    """``index`` merged (and, with ``save``, saved) when ``merge`` and it grew past
    :data:`MERGE_FRACTION`, else with its newer segments joined when there are too many."""
    if merge and needs_merge(index):
        index = index.compacted()
        if save:
            write(index, folder, store)
        return index
    return index.joined(MAX_DELTAS)


def catch_up(
    index: LexicalIndex,
    store: DocStore,
    folder: Path,
    *,
    save: bool,
    merge: bool = True,
    source: VectorSource | None = None,
) -> LexicalIndex:
    """The snapshot after ``index`` with what the store changed since (``index`` itself when
    nothing did), then :func:`settled`; the saved base caught up instead when ``index``
    cannot be caught up (units rewritten in place, or log entries it needs pruned). The added
    rows' vectors are read from ``source`` (None: the snapshot keeps none)."""
    changes = store.changes(index.last_row, index.seq)
    if changes.rewritten or changes.pruned > index.seq:
        return open_index(store, folder, index.k1, index.b, save=save, source=source)
    if changes.generation == index.generation and not changes.added and not changes.deleted:
        return index
    return settled(_applied(index, changes, source), store, folder, save=save, merge=merge)


def _applied(
    index: LexicalIndex, changes: StoreChanges, source: VectorSource | None
) -> LexicalIndex:
    units = [TextUnit.model_validate_json(body) for _, body, _ in changes.added]
    tokens = [t.split() for _, _, t in changes.added]
    rows = np.array([r for r, _, _ in changes.added], dtype=np.int64)
    deleted = np.array(sorted(changes.deleted), dtype=np.int64)
    out = index.extended(units, tokens, rows, deleted, source)
    out.generation, out.seq = changes.generation, changes.seq
    return out


def open_index(
    store: DocStore,
    folder: Path,
    k1: float,
    b: float,
    *,
    save: bool,
    source: VectorSource | None = None,
) -> LexicalIndex:
    """The snapshot of the store's current state: the saved base, without the units deleted
    since and with those added; built from every unit's stored tokens when there is no base
    (or it cannot be used), and then, with ``save``, saved. With a ``source`` (the dense
    index) the snapshot keeps each row's vector (:mod:`trilha.index.row_vectors`): the
    base's as saved with it, read from ``source`` once for a base saved without them (and,
    with ``save``, added to it), the rest read from ``source``."""
    for _ in range(3):  # a merge saved meanwhile moves the base: read the new one
        state = _state(folder)
        base = read(folder, state)
        if base is None:  # the writer removed the folder read after naming another: read that
            if state and _state(folder).get("folder") != state.get("folder"):
                continue
            break
        changes = store.changes(int(base.store_rows[-1]) if base.store_rows.size else 0,
                                base.seq, kept=True)  # fmt: skip
        if changes.pruned <= base.seq and not changes.rewritten:
            index = _from_base(base, changes, k1, b, source, save=save)
            return settled(index, store, folder, save=save)
        if changes.rewritten:
            break
    changes = store.changes(0, 0)
    units = [TextUnit.model_validate_json(body) for _, body, _ in changes.added]
    rows = np.array([r for r, _, _ in changes.added], dtype=np.int64)
    index = LexicalIndex.build(units, [t.split() for _, _, t in changes.added], k1, b, rows)
    index.generation, index.seq = changes.generation, changes.seq
    if source is not None:
        index.vectors = RowVectors.fetched([u.unit_id for u in units], source)
    if save:  # over a base of this generation that could not be used
        write(index, folder, store, replace=True)
    return index


def _from_base(
    base: Base,
    changes: StoreChanges,
    k1: float,
    b: float,
    source: VectorSource | None,
    *,
    save: bool,
) -> LexicalIndex:
    """``base`` without the rows the store no longer holds, then with its units added since
    (and, with a ``source``, the rows' vectors: see :func:`open_index`)."""
    kept = np.array([r for r, _ in changes.kept], dtype=np.int64)
    matrix, vectors = base.matrix, base.vectors if source is not None else None
    units = [TextUnit.model_validate_json(body) for _, body in changes.kept]
    if kept.size < base.store_rows.size:
        gone = np.isin(base.store_rows, kept, invert=True)
        if matrix is not None:
            dead = np.flatnonzero(gone)
            matrix = Segments.of(matrix).extended(None, dead).merged() if kept.size else None
        if vectors is not None:
            vectors = vectors.compacted(np.flatnonzero(~gone))
    if source is not None:
        whole = save and kept.size == base.store_rows.size
        ids = [u.unit_id for u in units]
        vectors = _base_vectors(vectors, ids, source, base.folder if whole else None)
    index = LexicalIndex(units, matrix, k1, b, kept, vectors=vectors)
    index.generation, index.seq = base.generation, base.seq
    return _applied(index, changes._replace(deleted=[]), source)


def _base_vectors(
    saved: RowVectors | None, unit_ids: list[str], source: VectorSource, folder: Path | None
) -> RowVectors:
    """The vectors of the base's live rows (``unit_ids``): as ``saved``, with those a repair
    gave units since; read from ``source`` when it saved none (an older trilha) or of another
    length, and then, when every row has one (a lost dense index has none yet), added to the
    base in ``folder`` (None: not saved)."""
    if saved is not None and saved.dimension == source.dimension:
        return saved.completed(unit_ids, source)
    vectors = RowVectors.fetched(unit_ids, source)
    if folder is not None and vectors.complete():
        _saved_beside(vectors, folder)
    return vectors


def _saved_beside(vectors: RowVectors, folder: Path) -> None:
    """Add the rows' ``vectors`` to the saved base in ``folder`` (written aside, then renamed
    in: a reader finds the whole column or none)."""
    staging = Path(tempfile.mkdtemp(prefix=".vectors-", dir=folder.parent))
    try:
        vectors.save(staging)
        for name in (SCALES, CODES):  # the codes last: RowVectors.load looks for them first
            _synced(staging / name)
            os.replace(staging / name, folder / name)
        _synced(folder)
    except OSError as e:  # read again from the dense index next time
        log.warning("could not save the rows' vectors beside %s (%r)", folder, e)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# -- the saved base --------------------------------------------------------------------------
def write(
    index: LexicalIndex, folder: Path, store: DocStore | None = None, *, replace: bool = False
) -> None:
    """Save ``index`` (merged: one segment, no dead rows) as the base (see the module
    docstring), then forget ``store``'s deletion log entries before the base this one replaces
    (a reader that caught up since has passed them). A base of the same generation is kept
    unless ``replace`` (it was damaged, or its units rewritten)."""
    matrix = index.matrix
    folder.mkdir(parents=True, exist_ok=True)
    name = f"base-{index.generation}"
    if replace or not (folder / name).exists():
        staging = Path(tempfile.mkdtemp(prefix=".saving-", dir=folder))
        if matrix is not None:
            matrix.save(staging)
            np.save(staging / "rows.npy", index.store_rows)
            if index.vectors is not None:
                index.vectors.save(staging)
        for written in staging.iterdir():
            _synced(written)
        _synced(staging)
        if (folder / name).exists():  # set aside, removed with the older bases below
            (folder / name).rename(Path(tempfile.mkdtemp(prefix=".replaced-", dir=folder)) / name)
        staging.rename(folder / name)
        _synced(folder)
    older = _state(folder)
    state = {
        "format": FORMAT,
        "generation": index.generation,
        "seq": index.seq,
        "folder": name,
        "units": len(index),
        "empty": matrix is None,
        # readers that caught up from the base before may still need the log since its entry
        "prune": older.get("seq", 0) if older.get("format") == FORMAT else 0,
    }
    staged = folder / f".state-{os.getpid()}.json"
    staged.write_text(json.dumps(state))
    _synced(staged)
    os.replace(staged, folder / "state.json")
    _synced(folder)
    for old in folder.iterdir():
        if old.is_dir() and old.name != name:  # older bases, a crashed save's staging
            shutil.rmtree(old, ignore_errors=True)
    if store is not None and state["prune"]:
        store.prune_log(int(str(state["prune"])))


def _synced(path: Path) -> None:
    """Flush ``path`` (a file, or a folder's entries) to the disk, so that a power loss after a
    rename that names it cannot leave the name pointing at an empty or truncated file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _state(folder: Path) -> dict[str, object]:
    try:
        state = json.loads((folder / "state.json").read_text())
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def read(folder: Path, state: dict[str, object] | None = None) -> Base | None:
    """The saved base (the one ``state``, state.json's contents read before, names); None when
    there is none (or another trilha wrote it: an older one saved bm25s's precomputed scores,
    which hold every unit's statistics, and whole snapshots)."""
    state = _state(folder) if state is None else state
    if not state or state.get("format") != FORMAT:
        return None
    try:
        generation, seq = int(str(state["generation"])), int(str(state["seq"]))
        if state["empty"]:
            return Base(None, np.zeros(0, dtype=np.int64), generation, seq)
        path = folder / str(state["folder"])
        matrix = TermMatrix.load(path)
        rows = np.load(path / "rows.npy")
        vectors = RowVectors.load(path, len(rows))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        # a removed folder, or a damaged file (empty or truncated: EOFError, BadZipFile)
        log.warning("lexical base at %s unreadable, rebuilt from the store (%r)", folder, e)
        return None
    return Base(matrix, rows, generation, seq, vectors, path)
