"""What the database servers of tests and demos share: a temporary directory that an
unprivileged user owns when this process is root (initdb and mariadbd refuse root), and a
watchdog that stops the server and removes the directory once the process that started it is
gone, however it ended."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

UNPRIVILEGED = "nobody"


class ServerDir:
    """A server's directory, and how to run its programs (as ``nobody`` when root)."""

    def __init__(self, prefix: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix=prefix))
        self.run_as: dict[str, Any] = {}
        self.user: str | None = None
        self._watchdog: subprocess.Popen[bytes] | None = None
        if os.geteuid() == 0:
            account = pwd.getpwnam(UNPRIVILEGED)
            os.chmod(self.root, 0o755)
            os.chown(self.root, account.pw_uid, account.pw_gid)
            self.run_as = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
            self.user = UNPRIVILEGED

    def run(self, program: str | Path, *args: str) -> str:
        """Run a program of the server to its end; its output, or RuntimeError saying why not."""
        done = subprocess.run(
            [str(program), *args],
            capture_output=True,
            text=True,
            cwd=self.root,
            check=False,
            **self.run_as,
        )
        if done.returncode != 0:
            name = Path(program).name
            raise RuntimeError(f"{name} failed ({done.returncode}): {done.stderr or done.stdout}")
        return done.stdout

    def guard(self, stop_command: str, *args: str) -> None:
        """Start the watchdog: once this process is gone (the pipe to the watchdog closes),
        it runs ``stop_command`` (a shell command; ``$1``... are ``args``) and removes the
        directory."""
        script = f'cat >/dev/null; {stop_command} >/dev/null 2>&1; rm -rf "$0"'
        self._watchdog = subprocess.Popen(
            ["/bin/sh", "-c", script, str(self.root), *args],
            stdin=subprocess.PIPE,
            start_new_session=True,
            **self.run_as,
        )

    def remove(self) -> None:
        """Remove the directory, and let the watchdog go (it finds nothing left to stop)."""
        shutil.rmtree(self.root, ignore_errors=True)
        if self._watchdog is not None and self._watchdog.stdin is not None:
            self._watchdog.stdin.close()
            self._watchdog.wait(30)
            self._watchdog = None
