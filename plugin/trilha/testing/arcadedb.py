"""A local Bolt server for tests, benchmarks and development: ArcadeDB from ``arcadedb-embedded``.

``arcadedb-embedded`` runs ArcadeDB inside a JVM it bundles (JPype). To keep that JVM, its
threads and its ``./log`` folder out of the caller's process, the server runs in a child Python
process (``_arcadedb_child.py``, stdlib and ``arcadedb_embedded`` only) that enables the Bolt plugin
(``com.arcadedb.bolt.BoltProtocolPlugin``), binds 127.0.0.1 only, creates the database, writes
a ready file and serves until its stdin closes. :meth:`ArcadeDBBoltServer.stop` closes stdin
(then terminates it), and a ``weakref.finalize`` hook does the same at interpreter exit.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import Any

from trilha.errors import BackendUnavailableError, requires_extra
from trilha.graph.stores.process import terminate
from trilha.testing.loopback import free_port

logger = logging.getLogger(__name__)

_CHILD = Path(__file__).with_name("_arcadedb_child.py")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        terminate(proc)


class ArcadeDBBoltServer:
    """ArcadeDB with its Bolt plugin, in a child process, on 127.0.0.1."""

    def __init__(
        self,
        root: Path,
        *,
        database: str = "trilha",
        user: str = "root",
        password: str = "trilha-bolt-pw",
        bolt_port: int | None = None,
        heap: str = "2g",
        startup_timeout_s: float = 120.0,
    ) -> None:
        self.root = Path(root).resolve()
        self.database, self.user, self.password = database, user, password
        self.host = "127.0.0.1"
        self.bolt_port = bolt_port or free_port()
        self.heap = heap
        self.startup_timeout_s = startup_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    @property
    def url(self) -> str:
        """``bolt://127.0.0.1:<port>``."""
        return f"bolt://{self.host}:{self.bolt_port}"

    @property
    def pid(self) -> int | None:
        """The child process id."""
        return self._proc.pid if self._proc is not None else None

    def start(self) -> str:
        """Start the server and wait until Bolt accepts connections; returns the URL."""
        with requires_extra("arcadedb", "the ArcadeDB Bolt server"):
            import arcadedb_embedded  # noqa: F401
        self.root.mkdir(parents=True, exist_ok=True)
        ready = self.root / "ready.json"
        ready.unlink(missing_ok=True)
        config = self._config(ready)
        with open(self.root / "server.log", "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, str(_CHILD), json.dumps(config)],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.root,
            )
        self._proc = proc
        self._finalizer = weakref.finalize(self, _stop, proc)
        self._wait_until(ready, proc)
        logger.info("ArcadeDB Bolt server pid %s on %s", proc.pid, self.url)
        return self.url

    def _config(self, ready: Path) -> dict[str, Any]:
        """What the child process is told: folders, ports, credentials, heap, ready file."""
        return {
            "root": str(self.root / "databases"),
            "database": self.database,
            "password": self.password,
            "host": self.host,
            "bolt_port": self.bolt_port,
            "http_port": free_port(),
            "https_port": free_port(),
            "heap": self.heap,
            "ready": str(ready),
        }

    def _wait_until(self, ready: Path, proc: subprocess.Popen[bytes]) -> None:
        """Wait for the child's ready file; stop it and raise with the log's tail when it
        exits or ``startup_timeout_s`` passes first."""
        deadline = time.monotonic() + self.startup_timeout_s
        while not ready.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = (self.root / "server.log").read_text(errors="replace")[-1500:]
                raise BackendUnavailableError(f"ArcadeDB did not start; log tail:\n{tail}")
            time.sleep(0.05)

    def stop(self) -> None:
        """Stop the server. Idempotent."""
        if self._finalizer is not None:
            self._finalizer()
        self._proc = None
