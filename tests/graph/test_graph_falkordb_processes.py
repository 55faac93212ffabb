"""Embedded FalkorDB and processes: the server dies with its owner, orphans are adopted, one server
per data folder whatever the length of its path, nothing left behind after a close."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.graph.process_helpers import Owner, alive, servers_on, wait_dead
from trilha.graph.stores.falkordb import FalkorDBStore
from trilha.graph.stores.falkordb_folder import ping
from trilha.graph.stores.falkordb_server import _server_args

pytestmark = pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs /proc")


def long_folder(tmp_path: Path) -> Path:
    """A data folder whose path is about 200 characters long."""
    folder = tmp_path / ("w" * 60) / ("o" * 60) / "graph"
    folder = folder.parent / ("g" * max(1, 200 - len(str(folder))))
    assert 195 <= len(str(folder)) <= 205
    return folder


def kept(store: FalkorDBStore) -> list[object]:
    return [r["id"] for r in store.run("MATCH (d:Doc) RETURN d.id AS id")]


def left_behind(folder: Path, socket: str) -> list[str]:
    """Runtime files that outlive a normal close (there should be none)."""
    names = [p.name for p in folder.iterdir() if p.name in ("falkordb.sock", "falkordb.pid")]
    return names + ([socket] if os.path.exists(socket) else [])


@pytest.mark.parametrize(("opener", "group"), [("main", False), ("thread", False), ("main", True)])
def test_server_dies_when_its_owner_is_killed(tmp_path: Path, opener: str, group: bool) -> None:
    folder = tmp_path / "g"
    owner = Owner(folder, opener)
    server = owner.info["pid"]
    assert alive(server)
    owner.kill(group)
    assert wait_dead(server, 5.0), "the server outlived its owner's SIGKILL"
    assert servers_on(folder) == []
    reopened = FalkorDBStore.embedded(folder)
    assert kept(reopened) == ["kept"]
    reopened.close()


def test_an_orphan_is_adopted_and_stopped_on_close(tmp_path: Path) -> None:
    folder = tmp_path / "g"
    owner = Owner(folder)
    orphan = owner.info["pid"]
    os.kill(owner.info["watchdog"], signal.SIGKILL)  # owner and watchdog both gone: an orphan
    owner.kill()
    assert wait_dead(owner.info["watchdog"]) and alive(orphan)
    store = FalkorDBStore.embedded(folder)
    assert store.server is not None and store.server.pid == orphan
    assert servers_on(folder) == [orphan]
    assert kept(store) == ["kept"]
    socket = store.server.socket_path
    store.close()
    assert wait_dead(orphan, 5.0)
    assert left_behind(folder, socket) == []


@pytest.mark.parametrize("orphaned", [False, True])
def test_a_long_path_keeps_one_server_across_a_crash(tmp_path: Path, orphaned: bool) -> None:
    folder = long_folder(tmp_path)
    owner = Owner(folder)
    socket = owner.info["socket"]
    assert len(socket.encode()) < 100 and not socket.startswith(str(tmp_path))
    if orphaned:
        os.kill(owner.info["watchdog"], signal.SIGKILL)
    owner.kill()
    store = FalkorDBStore.embedded(folder)
    assert len(servers_on(folder)) == 1
    assert kept(store) == ["kept"]
    store.write("CREATE (:Doc {id: 'after'})")
    store.close()
    assert servers_on(folder) == []
    again = FalkorDBStore.embedded(folder)
    assert sorted(map(str, kept(again))) == ["after", "kept"]
    assert again.server is not None
    socket = again.server.socket_path
    again.close()
    assert left_behind(folder, socket) == []


def test_a_second_process_joins_a_live_owner_without_stopping_its_server(tmp_path: Path) -> None:
    folder = tmp_path / "g"
    owner = Owner(folder)
    guest = FalkorDBStore.embedded(folder)
    assert guest.server is not None and guest.server.pid is None  # not owned
    assert kept(guest) == ["kept"]
    guest.close()
    assert alive(owner.info["pid"]) and servers_on(folder) == [owner.info["pid"]]
    owner.kill()
    assert wait_dead(owner.info["pid"], 5.0)


def test_normal_close_leaves_no_runtime_files(tmp_path: Path) -> None:
    folder = tmp_path / "g"
    store = FalkorDBStore.embedded(folder)
    assert store.server is not None
    socket = store.server.socket_path
    assert (folder / "falkordb.sock").exists()  # a pointer to the socket while it runs
    store.close()
    assert left_behind(folder, socket) == []
    assert servers_on(folder) == []


def test_a_server_left_by_an_older_trilha_is_replaced_not_doubled(tmp_path: Path) -> None:
    folder = tmp_path / "g"
    folder.mkdir()
    old_socket = folder / "falkordb.sock"  # where older versions put it, with no locks
    args = _server_args(folder, str(old_socket))
    legacy = subprocess.Popen(args, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not ping(str(old_socket)) and time.monotonic() < deadline:
            time.sleep(0.02)
        old = FalkorDBStore.connect(f"unix://{old_socket}")
        old.write("CREATE (:Doc {id: 'kept'})")
        old.close()
        store = FalkorDBStore.embedded(folder)
        legacy.wait(timeout=10)  # shut down (it saved), not left running beside the new one
        assert store.server is not None and servers_on(folder) == [store.server.pid]
        assert kept(store) == ["kept"]
        store.close()
    finally:
        if legacy.poll() is None:
            legacy.kill()
            legacy.wait()
