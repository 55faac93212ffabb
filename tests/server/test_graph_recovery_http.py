"""Over HTTP: after ``kill -9`` of the embedded graph server, the graph routes answer again
within seconds, without restarting the service; in between a call may get a 503 with
``Retry-After``, never a 500."""

from __future__ import annotations

import os
import signal
import time

from tests.graph.process_helpers import wait_dead
from tests.server.conftest import Service
from trilha.graph.stores.falkordb import FalkorDBStore


def test_graph_routes_answer_again_after_the_graph_server_is_killed(service: Service) -> None:
    acme = next(p for p in service.projects if p.project_id == "acme")
    store = acme.workspace.require_graph().store
    assert isinstance(store, FalkorDBStore)
    server = store.server
    assert server is not None and server.pid is not None
    pid = server.pid
    os.kill(pid, signal.SIGKILL)
    assert wait_dead(pid)
    statuses = []
    deadline = time.monotonic() + 5
    for attempt in range(1000):  # new arguments each time: no answer comes from the cache
        body = {"entity_names": [f"Atlas{attempt}"], "limit": 3}
        r = service.post("/graphrag/topn", "maria", body)
        statuses.append(r.status_code)
        if r.status_code == 200 or time.monotonic() > deadline:
            break
        assert r.status_code == 503 and r.headers["Retry-After"], r.text
        time.sleep(0.05)
    assert statuses[-1] == 200, statuses
    assert server.pid not in (None, pid)
