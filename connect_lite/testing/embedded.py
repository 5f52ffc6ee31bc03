"""EmbeddedConnect: a broker and a connect-lite worker process for one test, torn down fully."""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

from connect_lite.kafka import EmbeddedBroker
from connect_lite.kafka.broker import free_port
from connect_lite.testing.actions import ConnectActions
from connect_lite.testing.client import ConnectClient
from connect_lite.testing.kafka_helpers import KafkaHelpers
from connect_lite.testing.processes import spawn_worker, stop_tree
from connect_lite.testing.waits import WaitFailed, WaitTimeout, poll


def _checkout_plugins() -> Path | None:
    """``plugins/`` of the connect-lite checkout this module is imported from, if it is one."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "plugins").is_dir():
        return root / "plugins"
    return None


BUNDLED_PLUGINS: Path | None = _checkout_plugins()
"""The demo plugins of a connect-lite checkout (the KIP-891 counters); None when connect-lite is
installed as a package. The FileStream connectors are built in and need no plugin path."""

FAST_DEFAULTS: dict[str, str] = {
    "offset.flush.interval.ms": "1000",
    "spark.master": "local[2]",
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.driver.extraJavaOptions": "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto",
    "consumer.session.timeout.ms": "6000",
}
"""Worker properties that favour start-up time over throughput; any can be overridden."""

_LIVE: set[EmbeddedConnect] = set()
_LIVE_LOCK = threading.Lock()


def _stop_all_live() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for connect in live:
        connect.close()


atexit.register(_stop_all_live)


class EmbeddedConnect(ConnectActions):
    """A Kafka broker plus a connect-lite worker process, as a context manager.

    Without ``bootstrap_servers`` an embedded broker (Tansu, in memory) is started and owned.
    The worker gets free ports, its own temporary state file, the built-in plugins, those of
    installed distributions (entry points ``connect_lite.plugins``), the ``plugins/`` directory
    of a connect-lite checkout (not of an installed connect-lite) plus ``plugin_paths``, the
    importable modules or packages ``plugin_modules`` (names or module objects: the worker
    property ``plugin.modules``), and ``worker_properties`` on top of :data:`FAST_DEFAULTS`.
    The worker can import what the test process can: its ``sys.path`` is passed on. Leaving the
    block (normally, by an exception or Ctrl-C) stops the worker, Spark's JVM and the broker.
    """

    def __init__(
        self,
        *,
        bootstrap_servers: str | None = None,
        plugin_paths: Sequence[str | Path] = (),
        plugin_modules: Sequence[str | ModuleType] = (),
        worker_properties: Mapping[str, str] | None = None,
        include_bundled_plugins: bool = True,
        workdir: str | Path | None = None,
        startup_timeout: float = 120.0,
        stop_timeout: float = 20.0,
    ) -> None:
        self._given_bootstrap = bootstrap_servers
        self._plugin_paths = [str(Path(p).resolve()) for p in plugin_paths]
        if include_bundled_plugins and BUNDLED_PLUGINS is not None:
            self._plugin_paths.insert(0, str(BUNDLED_PLUGINS))
        self._plugin_modules = [m if isinstance(m, str) else m.__name__ for m in plugin_modules]
        self._extra = dict(worker_properties or {})
        self._given_workdir = Path(workdir) if workdir is not None else None
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self._broker: EmbeddedBroker | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._workdir: Path | None = None
        self._own_workdir = False
        self._port = 0
        self.timings: dict[str, float] = {}
        """Seconds from start(): ``broker`` and ``rest`` (worker healthy)."""

    # -- lifecycle ----------------------------------------------------------------------------
    def __enter__(self) -> EmbeddedConnect:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> EmbeddedConnect:
        """Start the broker (unless given) and the worker; wait until /health answers 200."""
        begin = time.monotonic()
        with _LIVE_LOCK:
            _LIVE.add(self)
        try:
            if self._given_bootstrap is None:
                self._broker = EmbeddedBroker().start()
            self.timings["broker"] = time.monotonic() - begin
            self._prepare_workdir()
            self._start_worker()
            self.timings["rest"] = time.monotonic() - begin
        except BaseException:
            self.close()
            raise
        return self

    def _prepare_workdir(self) -> None:
        if self._given_workdir is not None:
            self._workdir = self._given_workdir
            self._workdir.mkdir(parents=True, exist_ok=True)
        else:
            self._workdir = Path(tempfile.mkdtemp(prefix="connect-lite-test-"))
            self._own_workdir = True
        self._port = free_port()
        props = {
            **FAST_DEFAULTS,
            "bootstrap.servers": self.bootstrap_servers,
            "listeners": f"http://127.0.0.1:{self._port}",
            "state.storage.file": str(self.state_file),
            "plugin.path": ",".join(self._plugin_paths),
            # A test's own temporary files (pytest's tmp_path, tempfile's) may be read and
            # written by connectors; worker_properties can narrow or widen it.
            "connector.allowed.paths": ",".join(
                dict.fromkeys([tempfile.gettempdir(), str(self._workdir)])
            ),
            **({"plugin.modules": ",".join(self._plugin_modules)} if self._plugin_modules else {}),
            **self._extra,
        }
        text = "".join(f"{_escape(key, True)}={_escape(value)}\n" for key, value in props.items())
        self.properties_file.write_text(text, encoding="utf-8")

    def _start_worker(self) -> None:
        assert self._workdir is not None
        self._proc = spawn_worker(self.properties_file, self._workdir, self.log_file)
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        def observe() -> Any:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise WaitFailed(
                    f"the worker exited with code {self._proc.returncode}; "
                    f"log tail:\n{self.log_tail()}"
                )
            return self.client.health()

        try:
            poll(observe, lambda health: True, "worker /health 200", self.startup_timeout, 0.05)
        except WaitTimeout as error:
            raise WaitTimeout(
                f"worker /health 200 (log tail:\n{self.log_tail()})", error.timeout, error.last_seen
            ) from None

    def restart_worker(self) -> None:
        """Stop the worker gracefully and start it again on the same state file and port."""
        self._stop_worker()
        assert self._workdir is not None
        self._proc = spawn_worker(self.properties_file, self._workdir, self.log_file)
        self._wait_healthy()

    def _stop_worker(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            stop_tree(proc, self.stop_timeout)

    def close(self) -> None:
        """Stop the worker (and its Spark JVM), then the owned broker; remove temporary files."""
        try:
            self._stop_worker()
        finally:
            broker, self._broker = self._broker, None
            if broker is not None:
                broker.stop()
            if self._own_workdir and self._workdir is not None:
                shutil.rmtree(self._workdir, ignore_errors=True)
                self._own_workdir = False
            with _LIVE_LOCK:
                _LIVE.discard(self)

    # -- where things are ---------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        if self._given_bootstrap is not None:
            return self._given_bootstrap
        if self._broker is None:
            raise RuntimeError("EmbeddedConnect is not started")
        return self._broker.bootstrap_servers

    @property
    def rest_url(self) -> str:
        if not self._port:
            raise RuntimeError("EmbeddedConnect is not started")
        return f"http://127.0.0.1:{self._port}"

    @property
    def client(self) -> ConnectClient:
        """The REST client (raises ConnectRestError with ``error_code`` and ``message``)."""
        return ConnectClient(self.rest_url)

    @property
    def kafka(self) -> KafkaHelpers:
        return KafkaHelpers(self.bootstrap_servers)

    @property
    def workdir(self) -> Path:
        if self._workdir is None:
            raise RuntimeError("EmbeddedConnect is not started")
        return self._workdir

    @property
    def state_file(self) -> Path:
        return self.workdir / "connect-lite.db"

    @property
    def properties_file(self) -> Path:
        return self.workdir / "worker.properties"

    @property
    def log_file(self) -> Path:
        return self.workdir / "worker.log"

    @property
    def worker_pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def broker_pid(self) -> int | None:
        return self._broker.pid if self._broker is not None else None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-chars:]
        except (OSError, RuntimeError):
            return "(no worker log)"


def _escape(text: str, key: bool = False) -> str:
    """A .properties value (or key) that parse_properties reads back as ``text``."""
    out = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    if key:
        out = out.replace("=", "\\=").replace(":", "\\:").replace(" ", "\\ ")
    elif out.startswith((" ", "\t")):
        out = "\\" + out
    return out
