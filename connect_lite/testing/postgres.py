"""A real PostgreSQL server for tests and demos of JDBC pipelines: the installed PostgreSQL
(Debian's ``postgresql`` package, or ``pg_ctl`` on PATH), a fresh cluster made by ``initdb`` in a
temporary directory, and ``pg_ctl`` on a free port on 127.0.0.1. No system service is used, and
``stop`` stops the server and removes its directory. ``PostgresServer().start()``, then
``url(create_database("shop"))`` is the ``connection.url`` of a JDBC connector; ``query`` needs
psycopg (``pip install 'connect-lite[postgres]'``).

initdb and the server refuse to run as root, so as root both run as ``nobody``, which owns
the cluster's directory. A checkout's ``scripts/setup.sh --tests`` installs the package.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

from connect_lite.kafka.broker import free_port
from connect_lite.testing.processes import alive, descendants
from connect_lite.testing.server_dir import ServerDir


def _bin_dir() -> Path:
    """The newest installed PostgreSQL's bin directory (Debian keeps them off PATH)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name))
    if found:
        return Path(found[-1])
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).resolve().parent
    raise RuntimeError(
        "PostgreSQL is not installed (Debian and Ubuntu: sudo apt-get install postgresql; "
        "macOS: brew install postgresql@15), or pg_ctl is not on PATH"
    )


class PostgresServer:
    """One PostgreSQL cluster; ``start`` it, make databases with ``create_database``."""

    def __init__(self) -> None:
        self.bin = _bin_dir()
        self.dir = ServerDir("connect-lite-pg-")
        self.root = self.dir.root
        self.data = self.root / "data"
        self.port = free_port()
        self.host = "127.0.0.1"
        self.user = "postgres"

    def _run(self, *args: str) -> None:
        self.dir.run(self.bin / args[0], *args[1:])

    def start(self) -> PostgresServer:
        """initdb, then the server; a watchdog stops it if this process dies first."""
        self._run("initdb", "-D", str(self.data), "-U", self.user, "-A", "trust", "-E", "UTF8",
                  "--no-sync", "--locale=C.UTF-8")  # fmt: skip
        self._serve()
        self.dir.guard('"$1" -D "$2" -m immediate -w stop', str(self.bin / "pg_ctl"),
                       str(self.data))  # fmt: skip
        return self

    def _serve(self) -> None:
        options = (
            f"-p {self.port} -h {self.host} -k {self.root} -c fsync=off -c max_connections=60 "
            "-c wal_level=logical -c max_replication_slots=20 -c max_wal_senders=20"
        )  # logical decoding: the CDC connector's slots
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"),
                  "-w", "-t", "60", "start")  # fmt: skip

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            self.dir.remove()

    def halt(self) -> None:
        """Stop the server as a crash would (its data stays); ``resume`` starts it again."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def crash(self) -> None:
        """``kill -9`` of the server: the postmaster and every process it started at once (as
        the machine's OOM killer or a power cut would end them); ``resume`` starts it again,
        and it recovers from its write-ahead log."""
        pid_file = self.data / "postmaster.pid"
        postmaster = int(pid_file.read_text().split()[0])
        victims = [postmaster, *descendants(postmaster)]
        for pid in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while any(alive(pid) for pid in victims):
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL's processes outlived kill -9: {victims}")
            time.sleep(0.05)
        # Dead, but the postmaster may wait a while to be reaped (by whatever adopted it),
        # and PostgreSQL takes a zombie's pid in postmaster.pid for a running server.
        deadline = time.monotonic() + 5
        while Path(f"/proc/{postmaster}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pid_file.unlink(missing_ok=True)

    def resume(self) -> None:
        self._serve()

    def dsn(self, database: str = "postgres") -> str:
        return f"host={self.host} port={self.port} user={self.user} dbname={database}"

    def url(self, database: str) -> str:
        """The database's JDBC URL, as a Confluent config names it."""
        return f"jdbc:postgresql://{self.host}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    def query(self, database: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.dsn(database), autocommit=True) as conn:
            cursor = conn.execute(sql, params or None)
            return list(cursor.fetchall()) if cursor.description else []
