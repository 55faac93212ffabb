"""Stopping the graph servers trilha starts itself (embedded FalkorDB, the ArcadeDB test server)."""

from __future__ import annotations

import subprocess


def terminate(proc: subprocess.Popen[bytes], grace_s: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if the process is still alive after ``grace_s``; waits for it."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)
