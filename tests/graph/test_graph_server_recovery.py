"""An embedded FalkorDB server that dies (``kill -9``) comes back without reopening anything:
its owner restarts it (at once when its watchdog reports the death, else on the next graph
access), reaps the dead processes, and the retrieval jobs recorded while it was down reach the
graph once it is back, once each. A guest process reconnects to the server its owner restarts."""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.graph.process_helpers import Owner, wait_dead
from tests.memory.jobs_helpers import job
from trilha.errors import BackendUnavailableError
from trilha.graph.service import GraphService
from trilha.graph.stores.falkordb import FalkorDBStore
from trilha.memory import JobLog
from trilha.orchestrate.joblog import JobRecorder

pytestmark = pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs /proc")

RECOVERY_S = 5.0


def docs(store: FalkorDBStore) -> list[object]:
    return [r["id"] for r in store.run("MATCH (d:Doc) RETURN d.id AS id")]


def eventually(read: Callable[[], object], timeout_s: float = RECOVERY_S) -> object:
    """The first answer of ``read`` that is not an error, retried until ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return read()
        except BackendUnavailableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def zombie(pid: int) -> bool:
    """True when ``pid`` is a child that exited and that nobody has waited for."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


@pytest.fixture
def store(tmp_path: Path) -> Iterator[FalkorDBStore]:
    s = FalkorDBStore.embedded(tmp_path / "graph")
    s.write("CREATE (:Doc {id: 'kept'})")
    yield s
    s.close()


def kill_server(store: FalkorDBStore, *, watchdog_stopped: bool = False) -> tuple[int, int]:
    """SIGKILL the store's server (after SIGSTOP to its watchdog if ``watchdog_stopped``, so
    that nothing reports the death); returns the dead server's and watchdog's pids."""
    server = store.server
    assert server is not None and server.pid is not None and server.watchdog_pid is not None
    pid, watchdog = server.pid, server.watchdog_pid
    if watchdog_stopped:
        os.kill(watchdog, signal.SIGSTOP)
    os.kill(pid, signal.SIGKILL)
    assert wait_dead(pid)
    return pid, watchdog


def test_a_killed_server_is_restarted_and_leaves_no_zombie(
    store: FalkorDBStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    started = time.monotonic()
    pid, watchdog = kill_server(store)
    assert eventually(lambda: docs(store)) == ["kept"]
    assert time.monotonic() - started < RECOVERY_S
    server = store.server
    assert server is not None and server.pid not in (None, pid) and server.running
    assert server.watchdog_pid not in (None, watchdog)
    said = f"embedded FalkorDB pid {pid} in {server.data_dir} died; restarted as pid {server.pid}"
    deadline = time.monotonic() + 2  # the reviving thread logs just after the server answers
    while said not in caplog.text and time.monotonic() < deadline:
        time.sleep(0.02)
    assert said in caplog.text
    assert not zombie(pid) and not zombie(watchdog)
    store.write("CREATE (:Doc {id: 'after'})")
    assert sorted(map(str, docs(store))) == ["after", "kept"]


def test_a_read_fails_right_after_the_death_then_recovers_on_the_next_access(
    store: FalkorDBStore,
) -> None:
    pid, watchdog = kill_server(store, watchdog_stopped=True)  # no background report
    with pytest.raises(BackendUnavailableError, match="restart"):
        docs(store)  # the first access finds the server dead and asks for a restart
    assert eventually(lambda: docs(store)) == ["kept"]
    # the new server may answer a read before its reviver has recorded it (its own thread)
    server = store.server
    assert server is not None and eventually(lambda: _replaced(server.pid, pid)) is True
    assert wait_dead(watchdog, 3) and not zombie(pid) and not zombie(watchdog)


def _replaced(now: int | None, dead: int) -> bool:
    if now == dead:
        raise BackendUnavailableError("the reviver has not recorded the new server yet")
    return True


def test_jobs_recorded_while_the_graph_is_down_reach_it_once_it_is_back(
    store: FalkorDBStore, tmp_path: Path
) -> None:
    service = GraphService(store)
    recorder = JobRecorder(JobLog.in_workspace(tmp_path / "ws"), service)
    try:
        recorder.record(job(0))
        recorder.flush()
        kill_server(store, watchdog_stopped=True)
        recorder.record(job(1))  # its mirror finds the graph down: kept in SQLite, retried
        recorder.record(job(0))  # recorded again: still one node
        recorder.flush()

        def both() -> list[object]:
            rows = store.run("MATCH (j:RetrievalJob) RETURN j.id AS id ORDER BY id")
            ids = [r["id"] for r in rows]
            if ids != ["job-00", "job-01"]:
                raise BackendUnavailableError(f"not yet: {ids}")
            return ids

        assert eventually(both) == ["job-00", "job-01"]
    finally:
        recorder.close()
        service.close()


def test_a_guest_reconnects_to_the_server_its_owner_restarts(tmp_path: Path) -> None:
    owner = Owner(tmp_path / "graph")
    guest = FalkorDBStore.embedded(tmp_path / "graph")
    try:
        assert guest.server is not None and guest.server.pid is None  # joined, not owned
        os.kill(owner.info["pid"], signal.SIGKILL)
        assert eventually(lambda: docs(guest)) == ["kept"]
    finally:
        guest.close()
        owner.kill()
