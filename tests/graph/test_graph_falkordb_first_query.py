"""Embedded FalkorDB: a server that hangs on its first query is killed and started again once.

The engine rarely deadlocks on the first query of a fresh server (about 1 in 600 starts in full
test runs). A server stopped with SIGSTOP stands in for it: it accepts connections and never
answers.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path

import pytest
import redis

from tests.graph.process_helpers import alive, wait_dead
from trilha.graph.stores.falkordb import EmbeddedFalkorServer, FalkorDBStore
from trilha.graph.stores.falkordb_folder import read_record


def test_a_server_hung_on_its_first_query_is_restarted_and_loses_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "g"
    first = FalkorDBStore.embedded(folder)
    first.write("CREATE (:Doc {id: 'before'})")
    first.close()

    server = EmbeddedFalkorServer(folder)
    server.start()
    hung = server.pid
    assert hung is not None and server.spawned
    os.kill(hung, signal.SIGSTOP)
    caplog.clear()  # count only this hang's warnings, not a slow start of the setup's server
    try:
        start = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="trilha.graph.stores.falkordb"):
            store = FalkorDBStore.over_server(server, first_query_timeout_s=1.0)
        took = time.monotonic() - start
    finally:
        if alive(hung):
            os.kill(hung, signal.SIGKILL)

    assert took < 8.0  # 1 s of waiting, a kill and a fresh start; never the 120 s timeout
    assert wait_dead(hung)
    assert server.pid not in (None, hung) and server.running
    record = read_record(server.data_dir)
    assert record is not None and record.pid == server.pid
    assert f"pid {hung} in {server.data_dir} did not answer its first query within 1s" in (
        caplog.text
    )
    assert caplog.text.count("restarting it") == 1

    assert store.run("MATCH (d:Doc) RETURN d.id AS id") == [{"id": "before"}]
    store.write("CREATE (:Doc {id: 'after'})")
    store.close()
    again = FalkorDBStore.embedded(folder)
    ids = again.run("MATCH (d:Doc) RETURN d.id AS id ORDER BY id")
    again.close()
    assert ids == [{"id": "after"}, {"id": "before"}]


def test_a_fresh_graph_is_created_by_the_first_query(tmp_path: Path) -> None:
    store = FalkorDBStore.embedded(tmp_path / "g", graph="fresh")
    assert store.server is not None
    keys = redis.Redis(unix_socket_path=store.server.socket_path, socket_timeout=10)
    try:
        assert keys.exists("fresh") == 1  # before any query of the caller
        assert store.run("MATCH (n) RETURN count(n) AS n") == [{"n": 0}]
    finally:
        keys.close()
        store.close()


def test_kill_stops_the_owned_server_at_once_and_clears_its_files(tmp_path: Path) -> None:
    server = EmbeddedFalkorServer(tmp_path / "g")
    sock = server.start()
    pid = server.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # a graceful stop would wait out its grace period
    start = time.monotonic()
    server.kill()
    server.kill()  # idempotent
    assert time.monotonic() - start < 5.0
    assert wait_dead(pid) and not server.running and server.pid is None
    assert read_record(server.data_dir) is None and not Path(sock).exists()
    assert not (server.data_dir / "falkordb.sock").is_symlink()
