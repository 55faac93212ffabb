"""Watchdog of an embedded FalkorDB server, run as a script by
``trilha.graph.stores.falkordb_server``.

Usage: ``_falkordb_watchdog.py PID GRACE_S``. Its stdin is a pipe whose only writer is the
server's owner. End of file there means the owner closed it (a normal stop) or died: the kernel
closes a dead process's pipes even after ``kill -9``, from whichever thread it started the server.
Either way the watchdog sends the server SIGTERM (redis saves and exits), SIGKILL if it still runs
after ``GRACE_S`` seconds, and exits. It also exits when the server ends on its own.

On Linux the server is watched through a pidfd, so a recycled pid is never signalled.
It imports nothing from trilha so it starts fast and stays independent of the package.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time


class Server:
    """The watched process: a pidfd where the system has them, else its pid."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.fd: int | None = None
        if hasattr(os, "pidfd_open"):
            try:
                self.fd = os.pidfd_open(pid)
            except OSError:
                self.fd = None

    def alive(self) -> bool:
        """True while the server runs."""
        if self.fd is not None:
            return not select.select([self.fd], [], [], 0)[0]
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the server, if it still runs."""
        try:
            if self.fd is not None:
                signal.pidfd_send_signal(self.fd, sig)
            else:
                os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def wait(self, timeout_s: float) -> bool:
        """Wait until the server ends; False if it still runs after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while self.alive():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self.fd is not None:
                select.select([self.fd], [], [], left)
            else:
                time.sleep(min(left, 0.05))
        return True


def owner_gone(server: Server) -> bool:
    """Block until stdin ends (True) or the server ends on its own (False)."""
    watched = [0] if server.fd is None else [0, server.fd]
    while True:
        ready = select.select(watched, [], [], None if server.fd is not None else 0.5)[0]
        if 0 in ready and not os.read(0, 4096):
            return True
        if not server.alive():
            return False


def main(pid: int, grace_s: float) -> None:
    """Stop the server ``pid`` when the owner goes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    server = Server(pid)
    if owner_gone(server):
        server.signal(signal.SIGTERM)
        if not server.wait(grace_s):
            server.signal(signal.SIGKILL)


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]))
