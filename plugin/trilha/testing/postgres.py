"""A real PostgreSQL server in a folder of its own, on a free loopback port, for tests and demos
of a unit store on a server (``TRILHA_STORE_URL``).

It runs the server binaries already installed (Debian's ``postgresql`` package puts them in
``/usr/lib/postgresql/<version>/bin``; any ``initdb`` on the ``PATH`` is used first): ``initdb``
makes a cluster with trust authentication for the user ``trilha``, ``pg_ctl`` starts it with
``fsync`` off (a test's data is thrown away), and stops it when the block ends::

    with PostgresTestServer() as pg:
        settings = TrilhaSettings(store_url=pg.url)

PostgreSQL refuses to run as root: as root, the cluster is made and run by the ``postgres``
user (through ``runuser``), which gets the folder (a new one under the system's temporary
folder, which that user can reach; removed when the block ends). :func:`postgres_binaries`
says why none can run here, so a test skips with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Self

from trilha.testing.loopback import free_port

#: The database user the cluster is made for.
USER = "trilha"


def postgres_binaries() -> tuple[Path | None, str]:
    """The folder with ``initdb``, ``pg_ctl`` and ``postgres``, or None and why there is none
    that can run here."""
    found = shutil.which("initdb")
    folders = [Path(found).resolve().parent] if found else []
    folders += sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    folder = next((f for f in folders if (f / "pg_ctl").exists() and (f / "postgres").exists()),
                  None)  # fmt: skip
    if folder is None:
        return None, "no PostgreSQL server binaries (initdb, pg_ctl): apt install postgresql"
    if os.geteuid() == 0 and (shutil.which("runuser") is None or not _has_user("postgres")):
        return None, "PostgreSQL will not run as root, and there is no postgres user to run it"
    return folder, ""


def _has_user(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


class PostgresTestServer:
    """A PostgreSQL cluster in a new temporary folder, serving on 127.0.0.1 while the block
    runs."""

    def __init__(self) -> None:
        binaries, why = postgres_binaries()
        if binaries is None:
            raise RuntimeError(why)
        self._bin = binaries
        self.folder = Path(tempfile.mkdtemp(prefix="trilha-postgres-"))
        self.port = free_port()
        self.url = f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"
        self._databases = 0

    def _run(self, *args: str) -> None:
        cmd = [str(self._bin / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stderr.strip() or done.stdout.strip()}")

    def __enter__(self) -> Self:
        try:
            self._start()
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        return self

    def _start(self) -> None:
        data = self.folder / "data"
        data.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
            shutil.chown(data, "postgres")
        self._run("initdb", "-D", str(data), "-A", "trust", "-U", USER, "--no-sync")
        options = (
            f"-p {self.port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off"
        )
        log = str(self.folder / "server.log")
        self._run("pg_ctl", "-D", str(data), "-o", options, "-l", log, "-w", "start")

    def new_database(self) -> str:
        """The URL of a new, empty database on the server (``db<n>``)."""
        import psycopg

        self._databases += 1
        name = f"db{self._databases}"
        with psycopg.connect(self.url, autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}".encode())
        return f"{self.url.rsplit('/', 1)[0]}/{name}"

    def __exit__(self, *exc: object) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
