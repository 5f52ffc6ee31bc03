"""A real MariaDB server for tests and demos of JDBC pipelines with the MySQL dialect: the
installed MariaDB (Debian's ``mariadb-server`` package), a fresh data directory made by
``mariadb-install-db`` in a temporary directory, and ``mariadbd`` on a free port on 127.0.0.1.
No system service is used, and ``stop`` stops the server and removes its directory.
``MariaDbServer().start()``, then ``url(create_database("shop"))`` is the ``connection.url``
of a JDBC connector (user ``root``, no password); ``query`` needs PyMySQL
(``pip install 'connect-lite[mysql]'``).

mariadbd refuses to run as root, so as root it runs as ``nobody``, which owns the directory. A
checkout's ``scripts/setup.sh --tests`` installs the package.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from connect_lite.kafka.broker import free_port
from connect_lite.testing.server_dir import ServerDir


def _program(*names: str) -> Path:
    for name in names:
        found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")
        if found:
            return Path(found)
    raise RuntimeError(
        "MariaDB is not installed (Debian and Ubuntu: sudo apt-get install mariadb-server; "
        "macOS: brew install mariadb), or mariadbd is not on PATH"
    )


class MariaDbServer:
    """One MariaDB server; ``start`` it, make databases with ``create_database``."""

    def __init__(self) -> None:
        self.server = _program("mariadbd", "mysqld")
        self.install = _program("mariadb-install-db", "mysql_install_db")
        self.dir = ServerDir("connect-lite-mariadb-")
        self.root = self.dir.root
        self.data = self.root / "data"
        self.pid_file = self.root / "server.pid"
        self.port = free_port()
        self.host = "127.0.0.1"
        self.user = "root"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> MariaDbServer:
        """mariadb-install-db, then the server; a watchdog stops it if this process dies."""
        self.dir.run(self.install, "--no-defaults", f"--datadir={self.data}",
                     "--auth-root-authentication-method=normal", "--skip-test-db",
                     "--skip-name-resolve", *([f"--user={self.dir.user}"] if self.dir.user
                                              else []))  # fmt: skip
        self._serve()
        self.dir.guard('kill -9 "$(cat "$1" 2>/dev/null)"', str(self.pid_file))
        return self

    def _serve(self) -> None:
        self._process = subprocess.Popen(
            [str(self.server), "--no-defaults", f"--datadir={self.data}", f"--port={self.port}",
             f"--bind-address={self.host}", f"--socket={self.root / 'server.sock'}",
             f"--pid-file={self.pid_file}", f"--log-error={self.root / 'log'}",
             "--skip-name-resolve", "--innodb-flush-log-at-trx-commit=2",
             "--innodb-buffer-pool-size=64M", "--max-connections=100",
             *([f"--user={self.dir.user}"] if self.dir.user else [])],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            **self.dir.run_as,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            try:
                self.query("", "SELECT 1")
                return
            except Exception as error:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    log = self.root / "log"
                    text = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                    raise RuntimeError(f"mariadbd did not start: {error}\n{text}") from error
                time.sleep(0.1)

    def stop(self) -> None:
        try:
            self.halt()
        finally:
            self.dir.remove()

    def halt(self) -> None:
        """Stop the server as a crash would (its data stays); ``resume`` starts it again."""
        if self._process is not None:
            self._process.kill()
            self._process.wait(30)
            self._process = None

    def resume(self) -> None:
        self._serve()

    def url(self, database: str) -> str:
        """The database's JDBC URL, as a Confluent config names it."""
        return f"jdbc:mysql://{self.host}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        self.query("", f"CREATE DATABASE `{name}`")
        return name

    def query(self, database: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        import pymysql

        conn = pymysql.connect(host=self.host, port=self.port, user=self.user,
                               database=database or None, autocommit=True,
                               connect_timeout=5)  # fmt: skip
        try:
            with conn.cursor() as cursor:
                cursor.execute(sql, params or None)
                return list(cursor.fetchall()) if cursor.description else []
        finally:
            conn.close()
