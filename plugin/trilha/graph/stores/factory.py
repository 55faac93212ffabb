"""The graph store the settings ask for.

* ``graph_backend='falkordb'`` without ``graph_url``: embedded FalkorDB in ``data_dir``
  (default ``<workspace>/graph``); with ``graph_url``: that FalkorDB/redis server;
* ``graph_backend='bolt'``: ``graph_url`` (required), user, password, database;
* ``graph_backend='none'``: no store (None).
"""

from __future__ import annotations

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
        return FalkorDBStore.embedded(Path(data_dir or settings.workspace / "graph"), graph)
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
