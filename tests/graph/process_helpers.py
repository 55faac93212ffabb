"""Helpers for the embedded FalkorDB process tests: liveness, servers of a folder, owners."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

OWNER = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from trilha.graph.stores.falkordb import FalkorDBStore

def open_store():
    return FalkorDBStore.embedded(Path(sys.argv[1]))

if sys.argv[2] == "thread":  # opened by a worker thread that ends before the owner does
    with ThreadPoolExecutor(1) as pool:
        store = pool.submit(open_store).result()
else:
    store = open_store()
store.write("CREATE (:Doc {id: 'kept'})")
server = store.server
print(json.dumps({"pid": server.pid, "socket": server.socket_path,
                  "watchdog": getattr(server, "watchdog_pid", None)}), flush=True)
sys.stdin.read()
"""


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().split()[2] != "Z"
    except (OSError, IndexError):
        return not stat.parent.exists()


def wait_dead(pid: int, timeout_s: float = 10.0) -> bool:
    """Wait until ``pid`` is gone; False if it still runs after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def servers_on(data_dir: Path) -> list[int]:
    """Pids of the live ``redis-server`` processes serving ``data_dir`` (Linux).

    redis rewrites its command line, but it runs in its ``--dir``: match the working directory.
    """
    found = []
    for entry in Path("/proc").iterdir():
        try:
            exe, cwd = os.readlink(entry / "exe"), os.readlink(entry / "cwd")
        except OSError:
            continue
        if exe.endswith("redis-server") and cwd == str(data_dir) and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


class Owner:
    """A child Python process that opens an embedded store on ``data_dir`` and waits."""

    def __init__(self, data_dir: Path, opener: str = "main") -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", OWNER, str(data_dir), opener],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, so kill(group=True) spares pytest
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the owner process failed (exit {self.proc.wait()})"
        self.info: dict[str, Any] = json.loads(line)

    def kill(self, group: bool = False) -> None:
        """SIGKILL the owner (with its whole process group if ``group``) and reap it."""
        if group:
            os.killpg(self.proc.pid, signal.SIGKILL)
        else:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
