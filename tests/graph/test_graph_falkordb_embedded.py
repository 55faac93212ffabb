"""Embedded FalkorDB: fast start, persistence, no orphan process, short socket paths."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import make_docs
from tests.graph.process_helpers import wait_dead
from trilha.errors import BackendUnavailableError, BadRequestError
from trilha.graph.stores import factory
from trilha.graph.stores.factory import open_ahead
from trilha.graph.stores.falkordb import EmbeddedFalkorServer, FalkorDBStore
from trilha.settings import TrilhaSettings
from trilha.workspace import Workspace


def test_starts_fast_and_leaves_no_orphan(tmp_path: Path) -> None:
    start = time.perf_counter()
    store = FalkorDBStore.embedded(tmp_path / "g")
    assert time.perf_counter() - start < 5.0
    assert store.server is not None and store.server.pid is not None
    pid = store.server.pid
    assert store.run("RETURN 1 AS one") == [{"one": 1}]
    assert store.run("MATCH (n) RETURN count(n) AS n") == [{"n": 0}]
    store.close()
    store.close()  # idempotent
    assert wait_dead(pid)
    assert not (tmp_path / "g" / "falkordb.sock").exists()
    with pytest.raises(BackendUnavailableError):
        store.run("RETURN 1")


def test_exit_without_close_leaves_no_orphan(tmp_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path\n"
        "from trilha.graph.stores.falkordb import FalkorDBStore\n"
        f"s = FalkorDBStore.embedded(Path({str(tmp_path / 'g')!r}))\n"
        "s.write(\"CREATE (:Doc {id: 'kept'})\")\n"
        "print(s.server.pid, flush=True)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    pid = int(out.stdout.strip())
    assert wait_dead(pid)
    reopened = FalkorDBStore.embedded(tmp_path / "g")
    assert reopened.run("MATCH (d:Doc) RETURN d.id AS id") == [{"id": "kept"}]
    reopened.close()


def test_data_persists_across_restarts(tmp_path: Path) -> None:
    store = FalkorDBStore.embedded(tmp_path / "g")
    store.write("UNWIND range(1, 3000) AS i CREATE (:Entity {id: toString(i)})")
    store.close()
    assert (tmp_path / "g" / "appendonlydir").is_dir()
    start = time.perf_counter()
    again = FalkorDBStore.embedded(tmp_path / "g")
    assert time.perf_counter() - start < 5.0
    assert again.run("MATCH (e:Entity) RETURN count(e) AS n") == [{"n": 3000}]
    again.close()


def test_a_stop_after_reads_alone_saves_no_snapshot(tmp_path: Path) -> None:
    store = FalkorDBStore.embedded(tmp_path / "g")
    store.write("UNWIND range(1, 50) AS i CREATE (:Entity {id: toString(i)})")
    store.close()
    snapshot = tmp_path / "g" / "graph.rdb"
    saved = snapshot.stat().st_mtime_ns  # a stop after writes saves the graph

    reader = FalkorDBStore.embedded(tmp_path / "g")
    assert reader.run("MATCH (e:Entity) RETURN count(e) AS n") == [{"n": 50}]
    reader.close()
    assert snapshot.stat().st_mtime_ns == saved  # nothing written: nothing saved

    writer = FalkorDBStore.embedded(tmp_path / "g")
    writer.write("CREATE (:Entity {id: 'late'})")
    writer.close()
    assert snapshot.stat().st_mtime_ns > saved
    again = FalkorDBStore.embedded(tmp_path / "g")
    assert again.run("MATCH (e:Entity) RETURN count(e) AS n") == [{"n": 51}]
    again.close()


def test_long_data_path_uses_a_short_socket(tmp_path: Path) -> None:
    deep = tmp_path / ("x" * 60) / ("y" * 60)
    store = FalkorDBStore.embedded(deep)
    assert store.server is not None
    sock = store.server.socket_path
    assert len(sock) < 100 and not sock.startswith(str(tmp_path))
    assert os.readlink(deep / "falkordb.sock") == sock  # a pointer in the data folder
    store.write("CREATE (:Doc {id: 'a'})")
    store.close()
    assert not Path(sock).exists() and not (deep / "falkordb.sock").is_symlink()


def test_a_second_store_joins_the_running_server(tmp_path: Path) -> None:
    first = FalkorDBStore.embedded(tmp_path / "g")
    second = FalkorDBStore.embedded(tmp_path / "g")
    assert second.server is not None and second.server.pid is None  # not owned
    second.write("CREATE (:Doc {id: 'a'})")
    second.close()
    assert first.server is not None and first.server.running
    assert first.run("MATCH (d:Doc) RETURN d.id AS id") == [{"id": "a"}]
    first.close()


def test_stale_socket_is_replaced(tmp_path: Path) -> None:
    folder = tmp_path / "g"
    folder.mkdir()
    (folder / "falkordb.sock").write_text("stale")
    server = EmbeddedFalkorServer(folder)
    server.start()
    assert server.running
    server.stop()
    assert not server.running


def test_parameters_falkordb_cannot_carry(tmp_path: Path) -> None:
    store = FalkorDBStore.embedded(tmp_path / "g")
    with pytest.raises(BadRequestError, match="NUL"):
        store.run("RETURN $x AS x", {"x": "a\x00b"})
    with pytest.raises(BadRequestError, match="finite"):
        store.run("RETURN $x AS x", {"x": [float("nan")]})
    tricky = "a\\\" ' ` } ) // \n\t 日本 \\"
    assert store.run("RETURN $x AS x", {"x": tricky}) == [{"x": tricky}]
    store.close()


def test_a_store_opened_ahead_is_the_one_the_workspace_takes(tmp_path: Path) -> None:
    """A command about to search starts the graph server before the library is imported; the
    workspace it opens then takes that store (one server, stopped with the workspace). A
    workspace with no graph folder gets nothing started, so nothing is created."""
    settings = TrilhaSettings(graph_backend="falkordb", workspace=tmp_path / "ws")
    open_ahead(settings)
    assert not (tmp_path / "ws").exists() and not factory._AHEAD
    with Workspace.open(tmp_path / "ws", settings, create=True) as ws:
        ws.ingest(make_docs())
    open_ahead(settings)
    open_ahead(settings)  # one opening per folder
    ((_, opening),) = factory._AHEAD.items()
    store = opening.result(timeout=30)
    assert isinstance(store, FalkorDBStore) and store.server is not None
    pid = store.server.pid
    assert pid is not None
    with Workspace.open(tmp_path / "ws", settings) as ws:
        assert not factory._AHEAD
        assert ws.graph is not None and ws.graph.store is store
        result = ws.search("prazo prescricional da cobrança")
        assert result.hits and not result.trace.warnings
    assert wait_dead(pid)


def test_a_store_that_failed_ahead_degrades_the_search_as_a_late_one_would(
    tmp_path: Path,
) -> None:
    settings = TrilhaSettings(graph_backend="falkordb", workspace=tmp_path / "ws")
    with Workspace.open(tmp_path / "ws", settings, create=True) as ws:
        ws.ingest(make_docs())
    manifest = tmp_path / "ws" / "graph" / "appendonlydir" / "appendonly.aof.manifest"
    manifest.write_text("not a manifest\n")  # the server refuses to start
    open_ahead(settings)
    with Workspace.open(tmp_path / "ws", settings) as ws:
        assert not factory._AHEAD and ws.graph is None
        assert ws.graph_warning is not None and "graph unavailable" in ws.graph_warning
        assert ws.search("prazo prescricional da cobrança").hits
