"""A real Mosquitto 2 MQTT broker for tests and demos of the MQTT connectors: the installed
``mosquitto`` (Debian's package), its own config file in a temporary directory, and listeners
on free ports on 127.0.0.1. No system service is used, and ``stop`` stops the broker and
removes its directory.

``MosquittoServer().start()`` listens anonymously on ``uri``; with ``users`` it also has a
listener that takes only those users and passwords (``auth_uri``), and with ``tls`` (the
server's certificate files) a TLS listener (``tls_uri``). Sessions and queued messages persist
in the directory, so ``restart`` (a clean stop, then a start on the same ports) keeps the
persistent sessions, as a broker's restart does. A checkout's ``scripts/setup.sh --tests``
installs the package.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from connect_lite.kafka.broker import free_port
from connect_lite.testing.server_dir import ServerDir


@dataclass(frozen=True)
class MosquittoTls:
    """The TLS listener's files: the CA that signed the certificates, the server's
    certificate chain and its key (PEM), and whether a client certificate is required."""

    cafile: Path
    certfile: Path
    keyfile: Path
    require_certificate: bool = False


def _program() -> Path:
    found = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/bin")
    if not found:
        raise RuntimeError(
            "Mosquitto is not installed (Debian and Ubuntu: sudo apt-get install mosquitto; "
            "macOS: brew install mosquitto), or mosquitto is not on PATH"
        )
    return Path(found)


class MosquittoServer:
    """One Mosquitto broker; ``start`` it, ``restart`` it, ``stop`` it."""

    def __init__(
        self,
        users: dict[str, str] | None = None,
        tls: MosquittoTls | None = None,
        max_inflight_messages: int = 1000,
        max_queued_messages: int = 100_000,
        save_every_change: bool = False,
    ) -> None:
        self.program = _program()
        self.dir = ServerDir("connect-lite-mosquitto-")
        self.root = self.dir.root
        self.host = "127.0.0.1"
        self.port = free_port()
        self.auth_port = free_port() if users else None
        self.tls_port = free_port() if tls else None
        self.users = dict(users or {})
        self.tls = tls
        self.max_inflight_messages = max_inflight_messages
        self.max_queued_messages = max_queued_messages
        self.save_every_change = save_every_change
        self.pid_file = self.root / "mosquitto.pid"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"tcp://{self.host}:{self.port}"

    @property
    def auth_uri(self) -> str:
        assert self.auth_port, "started without users"
        return f"tcp://{self.host}:{self.auth_port}"

    @property
    def tls_uri(self) -> str:
        assert self.tls_port, "started without tls"
        return f"ssl://{self.host}:{self.tls_port}"

    def start(self) -> MosquittoServer:
        """Write the config (and the password file), start the broker; a watchdog stops it
        if this process dies."""
        self._write_config()
        self._serve()
        self.dir.guard('kill -9 "$(cat "$1" 2>/dev/null)"', str(self.pid_file))
        return self

    def _write_config(self) -> None:
        persistence = self.root / "data"
        persistence.mkdir()
        lines = [
            "per_listener_settings true",
            "persistence true",
            f"persistence_location {persistence}/",
            "autosave_interval 1",
            f"autosave_on_changes {'true' if self.save_every_change else 'false'}",
            f"pid_file {self.pid_file}",
            f"log_dest file {self.root / 'log'}",
            "log_type error",
            "log_type warning",
            "log_type notice",
            f"max_inflight_messages {self.max_inflight_messages}",
            f"max_queued_messages {self.max_queued_messages}",
            f"listener {self.port} {self.host}",
            "allow_anonymous true",
        ]
        if self.auth_port:
            passwords = self.root / "passwords"
            passwords.write_text("".join(f"{u}:{p}\n" for u, p in self.users.items()))
            shutil.chown(passwords, self.dir.user or "root")
            passwords.chmod(0o600)
            subprocess.run(["mosquitto_passwd", "-U", str(passwords)], check=True,
                           capture_output=True, **self.dir.run_as)  # fmt: skip
            lines += [f"listener {self.auth_port} {self.host}", "allow_anonymous false",
                      f"password_file {passwords}"]  # fmt: skip
        if self.tls is not None and self.tls_port:
            files = {}  # copied in: the broker (nobody, as root) may not reach the originals
            for name in ("cafile", "certfile", "keyfile"):
                copy = self.root / f"{name}.pem"
                shutil.copyfile(getattr(self.tls, name), copy)
                shutil.chown(copy, self.dir.user or "root")
                copy.chmod(0o600)
                files[name] = copy
            lines += [
                f"listener {self.tls_port} {self.host}",
                "allow_anonymous true",
                *(f"{name} {path}" for name, path in files.items()),
                f"require_certificate {'true' if self.tls.require_certificate else 'false'}",
            ]
        config = self.root / "mosquitto.conf"
        config.write_text("\n".join(lines) + "\n")
        if self.dir.user:
            shutil.chown(persistence, self.dir.user)

    def _serve(self) -> None:
        self._process = subprocess.Popen(
            [str(self.program), "-c", str(self.root / "mosquitto.conf")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            cwd=self.root,
            **self.dir.run_as,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection((self.host, self.port), timeout=1).close()
                return
            except OSError as error:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    log = self.root / "log"
                    text = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                    raise RuntimeError(f"mosquitto did not start: {error}\n{text}") from error
                time.sleep(0.05)

    def halt(self) -> None:
        """Stop the broker cleanly (it saves its sessions and queued messages)."""
        if self._process is not None:
            self._process.send_signal(signal.SIGTERM)
            self._process.wait(30)
            self._process = None

    def crash(self) -> None:
        """``kill -9`` the broker: what it has not saved yet is gone (each second's changes,
        or with ``save_every_change`` the changes of the moment it died)."""
        if self._process is not None:
            self._process.kill()
            self._process.wait(30)
            self._process = None
        self.pid_file.unlink(missing_ok=True)

    def resume(self) -> None:
        """Start the broker again on the same ports, from what it saved."""
        self._serve()

    def restart(self) -> None:
        """A clean stop, then a start on the same ports with the saved sessions."""
        self.halt()
        self._serve()

    def stop(self) -> None:
        try:
            self.halt()
        finally:
            self.dir.remove()

    def log(self) -> str:
        path = self.root / "log"
        return path.read_text(errors="replace") if path.exists() else ""

    def __enter__(self) -> MosquittoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
