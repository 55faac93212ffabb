"""A workspace shared by several processes: one writer, any number of read-only readers.

One process holds a workspace read-write (the lock of :mod:`trilha.workspace.lock`): it ingests,
deletes and repairs. Readers (``TRILHA_READ_ONLY``; ``trilha serve --workers N``; service
replicas on other machines that mount the folder) take no lock and write nothing. They share
what the writer writes because every index they read is shared:

* the unit store is SQLite in WAL mode, which many processes read while one writes;
* the lexical index is derived from the unit store: a reader opens the writer's saved base
  (written whole under a new name before ``state.json`` points at it,
  :mod:`trilha.index.lexical_store`) and catches it up from the store, or builds one in memory
  when there is none;
* the dense index must be a Qdrant server (``TRILHA_QDRANT_URL``): ``edge`` and ``local`` hold
  their folder for one process;
* the graph must be a server too (a Bolt URL, or FalkorDB at ``TRILHA_GRAPH_URL``) or off: the
  embedded FalkorDB belongs to the process that started it;
* the result cache is per process unless ``TRILHA_REDIS_URL`` shares one.

A reader follows the writer: before each search it compares the store's generations with what
it holds (one SQLite read) and, when they moved, makes its next lexical snapshot from the units
added and deleted since (:func:`~trilha.index.lexical_store.catch_up`: it reads those units only,
never the whole index), or forgets what it read from the graph.

A reader writes nothing to the indices. What every process records of its use is shared as it
is: the orchestrator's conversation memory and job log (``memory.sqlite``, whose writers SQLite
serialises) and the graph's retrieval log (a JSONL file each process appends lines to).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from trilha.errors import ConfigurationError, WorkspaceError
from trilha.graph.service import GraphService
from trilha.index.docstore import DocStore
from trilha.index.lexical import LexicalIndex
from trilha.index.lexical_store import needs_merge
from trilha.index.sql_store import shown
from trilha.retrieve.pipeline import HybridSearcher
from trilha.settings import TrilhaSettings
from trilha.workspace.records import read_record, write_record

log = logging.getLogger(__name__)


def check_shareable(settings: TrilhaSettings) -> None:
    """A :class:`ConfigurationError` naming what to set when a part of ``settings`` is held by
    one process (so read-only readers could not share it)."""
    if settings.qdrant_url is None:
        raise ConfigurationError(
            "a read-only workspace (TRILHA_READ_ONLY, trilha serve --workers N) is shared "
            "between processes, so its dense index must be a Qdrant server: set "
            f"TRILHA_QDRANT_URL (TRILHA_QDRANT_MODE={settings.qdrant_mode} is held by one process)"
        )
    if settings.graph_backend == "falkordb" and settings.graph_url is None:
        raise ConfigurationError(
            "a read-only workspace is shared between processes, so its graph must be a server: "
            "set TRILHA_GRAPH_URL (FalkorDB, or TRILHA_GRAPH_BACKEND=bolt for Neo4j), or "
            "TRILHA_GRAPH_BACKEND=none (the embedded FalkorDB belongs to one process)"
        )


#: Where a workspace on a Qdrant server records its collection.
COLLECTION_FILE = "qdrant.json"


def server_collection(root: Path, settings: TrilhaSettings, *, empty: bool, read_only: bool) -> str:
    """The Qdrant collection of the workspace at ``root`` on a server, so that two workspaces on
    one server never share (or repair away) each other's points: the one it recorded
    (:mod:`trilha.workspace.records`); else the one ``TRILHA_QDRANT_COLLECTION`` names; else,
    for a workspace with no units yet, one of its own (``trilha_<random>``), and for an older
    one the default it has been using. A writer records it; a collection named that differs
    from the record is refused."""
    named = "qdrant_collection" in settings.model_fields_set
    record = read_record(root, settings, COLLECTION_FILE)
    if record is not None:
        kept = str(record["collection"])
        if named and settings.qdrant_collection != kept:
            raise ConfigurationError(
                f"the workspace {root} keeps its vectors in Qdrant collection {kept!r}, but "
                f"TRILHA_QDRANT_COLLECTION names {settings.qdrant_collection!r}: unset it, or "
                "use another workspace"
            )
        return kept
    if read_only and settings.store_url:
        raise empty_store(settings.store_url)
    name = settings.qdrant_collection
    if not named and empty:
        name = f"trilha_{uuid.uuid4().hex[:12]}"
    if not read_only:
        write_record(root, settings, COLLECTION_FILE, {"collection": name})
    return name


def read_only_error(store: DocStore) -> WorkspaceError:
    """What a write to a workspace open read-only on ``store`` raises."""
    if store.on_server:
        return WorkspaceError(
            f"the store at {shown(store.path)} is open read-only here (TRILHA_READ_ONLY): write "
            "to it from the process that writes it, or from one opened with the same "
            "TRILHA_STORE_URL and no TRILHA_READ_ONLY"
        )
    root = Path(store.path).parent
    return WorkspaceError(
        f"the workspace {root} is open read-only (TRILHA_READ_ONLY): write to it from the "
        f"process that holds it read-write, e.g. `trilha ingest PATH -w {root}`"
    )


def empty_store(url: str) -> WorkspaceError:
    """What opening read-only a store on a server that no writer has opened yet raises."""
    return WorkspaceError(
        f"the store at {shown(url)} holds no workspace yet: open it read-write once first "
        "(e.g. `trilha ingest PATH` with the same TRILHA_STORE_URL)"
    )


def needs_upgrade(root: object) -> WorkspaceError:
    """What opening read-only a store that needs a migration raises (a reader writes nothing)."""
    return WorkspaceError(
        f"the workspace {root} was written by an older trilha and needs an upgrade, which a "
        f"read-only open cannot make: open it once read-write (`trilha doctor -w {root}`)"
    )


class Follower:
    """Keeps a reader's lexical snapshot and graph reads at the store's current generations.

    ``load`` makes the snapshot after the one it is given from what the store changed since
    (:func:`~trilha.index.lexical_store.catch_up`, unmerged); when the snapshot has grown past
    its merge fraction a thread merges it (:meth:`~trilha.index.lexical.LexicalIndex.
    compacted`), catches the merged one up and swaps it in, while searches go on with the
    unmerged one."""

    def __init__(
        self,
        store: DocStore,
        searcher: HybridSearcher,
        graph: GraphService | None,
        load: Callable[[LexicalIndex], LexicalIndex],
    ) -> None:
        self._store = store
        self._searcher = searcher
        self._graph = graph
        self._load = load
        self._graph_generation = store.graph_generation
        self._lock = threading.Lock()
        self._merging: threading.Thread | None = None

    @classmethod
    def when(
        cls,
        read_only: bool,
        store: DocStore,
        searcher: HybridSearcher,
        graph: GraphService | None,
        load: Callable[[LexicalIndex], LexicalIndex],
    ) -> Follower | None:
        """A follower for a read-only workspace; None for one that writes (it is current)."""
        return cls(store, searcher, graph, load) if read_only else None

    def follow(self) -> None:
        """Catch up with the writer (one SQLite read when nothing moved). Whatever moved, the
        graph's memos are dropped: an ingest writes the graph too."""
        moved = False
        generation, graph_generation = self._store.generations()
        if generation != self._searcher.lexical.generation:
            with self._lock:  # one thread loads; the others then find it current
                if self._store.generation != self._searcher.lexical.generation:
                    self._searcher.lexical = self._load(self._searcher.lexical)
                    moved = True
                    self._merge_later()
        if graph_generation != self._graph_generation:
            self._graph_generation = graph_generation
            moved = True
        if moved and self._graph is not None:
            self._graph.changed()

    def _merge_later(self) -> None:
        """Merge the snapshot on a thread when it grew enough and no merge is running (the
        caller holds the lock)."""
        if not needs_merge(self._searcher.lexical):
            return
        if self._merging is not None and self._merging.is_alive():
            return
        grown = self._searcher.lexical
        self._merging = threading.Thread(target=self._merge, args=(grown,), daemon=True)
        self._merging.start()

    def close(self) -> None:
        """Wait for a merge in progress (it reads the store, which closes next)."""
        if self._merging is not None:
            self._merging.join()

    def _merge(self, grown: LexicalIndex) -> None:
        try:
            merged = grown.compacted()
            with self._lock:
                self._searcher.lexical = self._load(merged)
        except Exception as e:  # the store closed under it, say: the unmerged snapshot stays
            log.warning("merging the lexical snapshot failed (%s); searching it unmerged", e)
