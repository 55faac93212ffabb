"""The graph store the settings ask for.

* ``graph_backend='falkordb'`` without ``graph_url``: embedded FalkorDB in ``data_dir``
  (default ``<workspace>/graph``); with ``graph_url``: that FalkorDB/redis server;
* ``graph_backend='bolt'``: ``graph_url`` (required), user, password, database;
* ``graph_backend='none'``: no store (None).

A command about to search an existing workspace has its embedded store opened ahead
(:func:`open_ahead`): the server starts while the process imports and opens the rest.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path

from trilha.errors import ConfigurationError
from trilha.graph.stores.base import GraphStore
from trilha.settings import TrilhaSettings


def open_graph_store(settings: TrilhaSettings, data_dir: Path | None = None) -> GraphStore | None:
    """The graph store configured by ``settings`` (None for ``graph_backend='none'``)."""
    if settings.graph_backend == "none":
        return None
    graph = settings.graph_database or "trilha"
    if settings.graph_backend == "falkordb":
        from trilha.graph.stores.falkordb import FalkorDBStore

        if settings.graph_url:
            return FalkorDBStore.connect(settings.graph_url, graph)
        folder = graph_folder(settings, data_dir)
        ahead = _taken_ahead(folder, graph)
        if ahead is not None:
            return ahead.result()  # the store, or what opening it raised
        return FalkorDBStore.embedded(folder, graph)
    if not settings.graph_url:
        raise ConfigurationError("graph_backend='bolt' needs TRILHA_GRAPH_URL (bolt://host:7687)")
    from trilha.graph.stores.bolt import BoltGraphStore

    return BoltGraphStore(
        settings.graph_url,
        settings.graph_user,
        settings.graph_password,
        settings.graph_database,
        timeout_s=max(settings.graph_timeout_s, 5.0),
    )


def graph_folder(settings: TrilhaSettings, data_dir: Path | None = None) -> Path:
    """The graph's folder, ``data_dir`` when given, else the workspace's: the embedded FalkorDB
    server's data and the retrieval log."""
    return Path(data_dir) if data_dir else settings.workspace / "graph"


#: Embedded stores being opened ahead and not yet taken, by data folder and graph.
_AHEAD: dict[tuple[Path, str], Future[GraphStore]] = {}
_AHEAD_LOCK = threading.Lock()


def open_ahead(settings: TrilhaSettings) -> None:
    """Start opening the embedded FalkorDB store of ``settings``' workspace on a thread of its
    own when its graph folder exists, so that its server starts (0.2-0.5 s, mostly waiting for
    its socket) while the process imports and opens everything else; the next
    :func:`open_graph_store` of that folder in this process takes it. Nothing for any other
    backend, or for a workspace with no graph yet (nothing is created). A store never taken
    stops its server at exit."""
    if settings.graph_backend != "falkordb" or settings.graph_url:
        return
    folder = graph_folder(settings)
    if not folder.is_dir():
        return
    graph = settings.graph_database or "trilha"
    key = (folder.resolve(), graph)
    opening: Future[GraphStore] = Future()
    with _AHEAD_LOCK:
        if key in _AHEAD:
            return
        _AHEAD[key] = opening

    def run() -> None:
        from trilha.graph.stores.falkordb import FalkorDBStore

        try:
            opening.set_result(FalkorDBStore.embedded(folder, graph))
        except BaseException as e:  # raised again where the store is taken
            opening.set_exception(e)

    threading.Thread(target=run, name="trilha-graph-ahead", daemon=True).start()


def _taken_ahead(folder: Path, graph: str) -> Future[GraphStore] | None:
    """The store of ``folder`` and ``graph`` being opened ahead, taken (None: none is)."""
    with _AHEAD_LOCK:
        return _AHEAD.pop((folder.resolve(), graph), None)
