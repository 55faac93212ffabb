"""The open parts of one workspace, as :func:`trilha.workspace.compose.compose` hands them over."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Protocol

from trilha.encode.base import Embedder
from trilha.errors import ConfigurationError
from trilha.graph.service import GraphService
from trilha.index.dense import DenseIndex
from trilha.index.docstore import DocStore
from trilha.index.lexical import LexicalIndex
from trilha.rerank.base import Reranker
from trilha.retrieve.pipeline import HybridSearcher, KgBooster
from trilha.workspace.shared import Follower, read_only_error

log = logging.getLogger(__name__)


class LexicalLoader(Protocol):
    """The lexical snapshot of a workspace's store now: ``current`` caught up with it."""

    def __call__(self, *, current: LexicalIndex | None = None) -> LexicalIndex: ...


class RerankerSlot:
    """The workspace's reranker: the one given, else the one ``load`` makes (the configured
    cross-encoder), on first use."""

    def __init__(self, load: Callable[[], Reranker], given: Reranker | None = None) -> None:
        self._load = load
        self._reranker = given
        self._custom = given

    @property
    def identity(self) -> str:
        """``configured`` while the reranker is the configured one, else a name of the instance
        given (the result cache keys reranked results by it)."""
        return "configured" if self._custom is None else f"custom:{id(self._custom)}"

    def get(self) -> Reranker:
        """The reranker (loading it raises when none is configured)."""
        if self._reranker is None:
            self._reranker = self._load()
        return self._reranker

    def set(self, reranker: Reranker | None) -> None:
        """Use ``reranker`` from now on (None: the configured one again)."""
        self._reranker = self._custom = reranker


@dataclass(frozen=True)
class Parts:
    """Everything a workspace reads and writes with; the workspace owns and closes them."""

    store: DocStore
    """The unit store, the source of truth."""
    dense: DenseIndex
    """Vectors of every unit, with their payloads."""
    embedder: Embedder
    """The encoder the dense index was built with."""
    searcher: HybridSearcher
    """Both sides, their merge and the KG boost, over the current lexical snapshot."""
    graph: GraphService | None
    """The knowledge graph; None when it is off or could not be opened."""
    graph_warning: str | None
    """Why the graph could not be opened (None when it is open or off)."""
    booster: KgBooster | None
    """The KG booster (a stand-in that only warns when the graph is unavailable)."""
    reranker: RerankerSlot
    """The reranker, loaded on first use."""
    load_lexical: LexicalLoader
    """:func:`~trilha.workspace.compose.load_lexical` bound to this workspace's store, lexical
    folder, settings and dense index: ``load_lexical(current=snapshot)`` is ``snapshot`` caught
    up with the store."""
    follower: Follower | None = None
    """What keeps a read-only workspace current with its writer (None when it writes)."""

    def writable(self) -> Parts:
        """These parts, when they may be written (a :class:`WorkspaceError` when read-only)."""
        if self.follower is not None:
            raise read_only_error(self.store)
        return self

    def follow(self) -> None:
        """Catch up with what the writing process changed (read-only workspaces only)."""
        if self.follower is not None:
            self.follower.follow()

    def require_graph(self) -> GraphService:
        """The graph; a :class:`ConfigurationError` saying why when there is none."""
        if self.graph is None:
            raise ConfigurationError(
                self.graph_warning
                or "this workspace has no graph: set TRILHA_GRAPH_BACKEND to falkordb or bolt"
            )
        return self.graph

    def close(self, finish_build: bool = True) -> None:
        """Close every part (an embedded graph server stops, the Qdrant folder lock goes). The
        graph closes on a thread of its own while the others close: an embedded server saves
        and exits (0.1-0.2 s of waiting for it) while the dense index flushes. A dense index
        build under way or due is finished first, or with ``finish_build=False`` cancelled
        (left to the next writer)."""
        if self.follower is not None:
            self.follower.close()  # a merge in progress reads the store
        self.searcher.close()
        cancel = getattr(self.dense, "cancel_build", None)
        if not finish_build and cancel is not None:
            cancel()
        graph = self.graph
        closing: Future[None] | None = None
        if graph is not None:
            closing = Future()
            threading.Thread(
                target=_run, args=(graph.close, closing), name="trilha-graph-close"
            ).start()
        try:
            self.dense.close()
            self.store.close()
        except BaseException:
            if closing is not None and (error := closing.exception()) is not None:
                log.warning("the graph failed to close as well: %r", error)
            raise  # the first failure
        if closing is not None:
            closing.result()  # its failure, raised here


def _run(close: Callable[[], None], done: Future[None]) -> None:
    """``close()``, its outcome in ``done``."""
    try:
        close()
    except BaseException as e:  # handed to the closing thread through the future
        done.set_exception(e)
    else:
        done.set_result(None)
