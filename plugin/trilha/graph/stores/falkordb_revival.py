"""Restarting the embedded FalkorDB server its owner did not stop (``kill -9``, the OOM killer,
a crash).

The owner learns of a death two ways: a daemon thread waits on the server's watchdog, which
exits as soon as the server does (so the thread also reaps it: no zombie), and a failed query
asks for a check (:meth:`Reviver.kick`), for the case the watchdog cannot tell. Either way
one thread at a time calls the server's ``revive`` (:class:`Revivable`; the one server is
:class:`~trilha.graph.stores.falkordb_server.EmbeddedFalkorServer`) until it succeeds, waiting
between attempts as :class:`Backoff` says. Only the owner restarts; a guest's connections reach
the restarted server on the same socket when they next connect.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from trilha.graph.stores.falkordb_ownership import Ownership

logger = logging.getLogger(__name__)


class Revivable(Protocol):
    """What the :class:`Reviver` restarts: a server with a folder that starts again when it
    died on its own (no import of the server module, which owns the reviver)."""

    data_dir: Path

    def revive(self) -> bool: ...


@dataclass
class Backoff:
    """The wait before each restart attempt: none after a server that ran a while, then
    ``first_s``, doubling up to ``max_s`` while attempts follow one another (a server that fails
    to start, or dies again soon after each start). Quiet for ``2 * max_s``: back to none."""

    first_s: float = 0.5
    max_s: float = 30.0
    delay_s: float = 0.0
    last: float = -math.inf

    def wait_s(self, now: float) -> float:
        """Seconds to wait at ``now`` before the next attempt."""
        if now - self.last > 2 * self.max_s:
            self.delay_s = 0.0
        return max(0.0, self.last + self.delay_s - now)

    def attempted(self, now: float) -> None:
        """Note an attempt made at ``now``."""
        self.last = now
        self.delay_s = min(max(2 * self.delay_s, self.first_s), self.max_s)


class Reviver:
    """Restarts the server an embedded FalkorDB owner holds when it dies; holds it only
    through a weak reference, so the server object can still be collected (and stop)."""

    def __init__(self, server: Revivable, clock: Callable[[], float] = time.monotonic) -> None:
        self._server = weakref.ref(server)
        self._clock = clock
        self.backoff = Backoff()
        self._lock = threading.Lock()
        self._busy = False
        self._wanted = False
        self._closed = threading.Event()

    def watch(self, own: Ownership) -> None:
        """Wait in a daemon thread for ``own``'s watchdog to exit, then check the server (it
        died, unless ``own`` was released)."""
        self._closed.clear()
        thread = threading.Thread(
            target=self._watch, args=(own,), name="trilha-falkordb-watch", daemon=True
        )
        thread.start()

    def _watch(self, own: Ownership) -> None:
        own.watchdog.wait()
        if not own.released:
            self.kick(here=True)

    def kick(self, *, here: bool = False) -> None:
        """Check the server and restart it if it died: in this thread if ``here``, else in a
        new one; at once when another restart is under way (it checks again after)."""
        with self._lock:
            self._wanted = True
            if self._busy or self._closed.is_set():
                return
            self._busy = True
        if here:
            self._run()
        else:
            threading.Thread(target=self._run, name="trilha-falkordb-revive", daemon=True).start()

    def close(self) -> None:
        """Stop waiting and attempting (the server is being stopped)."""
        self._closed.set()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._wanted or self._closed.is_set():
                    self._busy = False
                    return
                self._wanted = False
            while not self._closed.wait(self.backoff.wait_s(self._clock())):
                if self._attempt():
                    break

    def _attempt(self) -> bool:
        """One restart attempt; True when there is nothing more to do."""
        server = self._server()
        if server is None:
            return True
        self.backoff.attempted(self._clock())
        try:
            server.revive()
        except Exception as e:  # any failure to start is retried after the backoff
            logger.warning(
                "restarting embedded FalkorDB in %s failed (%s); next attempt in %gs",
                server.data_dir,
                e,
                self.backoff.delay_s,
            )
            return False
        return True
