"""EmbeddedConnect: a broker and a connect-lite worker process for one test, torn down fully."""

from __future__ import annotations

import atexit
import contextlib
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any
from urllib.parse import urlsplit

from connect_lite.kafka import EmbeddedBroker
from connect_lite.kafka.broker import free_port
from connect_lite.testing.actions import DEFAULT_TIMEOUT, ConnectActions
from connect_lite.testing.client import ConnectClient, HttpClient
from connect_lite.testing.kafka_helpers import KafkaHelpers
from connect_lite.testing.metrics import Metrics
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

    Without ``bootstrap_servers`` an embedded broker (Tansu, in memory) is started and owned;
    with ``start_broker=False`` none is, and ``worker_properties`` say where Kafka is (their
    ``bootstrap.servers``, or ``embedded.broker.enable=true`` for the worker's own broker).
    The worker gets free ports, its own temporary state file, the built-in plugins, those of
    installed distributions (entry points ``connect_lite.plugins``), the ``plugins/`` directory
    of a connect-lite checkout (not of an installed connect-lite) plus ``plugin_paths``, the
    importable modules or packages ``plugin_modules`` (names or module objects: the worker
    property ``plugin.modules``), and ``worker_properties`` on top of :data:`FAST_DEFAULTS`.
    The worker can import what the test process can: its ``sys.path`` is passed on. Leaving the
    block (normally, by an exception or Ctrl-C) stops the worker, Spark's JVM and the broker.

    Also, for tests of the worker itself:

    - ``workdir``: where the properties file, the state file and the log go (default: a
      temporary directory, removed on close). A given one is kept, and its paths
      (:attr:`state_file`...) are known before the start.
    - ``worker_properties`` may set ``listeners`` (several, https too): :attr:`rest_url` is the
      first http one.
    - ``rest_auth``: the basic-auth user and password of :attr:`client` and :attr:`http`.
    - ``connector_files``: connector configs (.properties or .json) on the command line, as in
      ``connect-standalone worker.properties connector1.properties ...``.
    - ``env``: the worker's environment instead of this process's.
    - ``request_timeout``: of each REST request; ``wait_timeout``: of each wait (wait_running,
      wait_state...) not given a timeout of its own.
    - ``fast_defaults=False``: without :data:`FAST_DEFAULTS`, the worker runs with its own
      defaults (as in production) where ``worker_properties`` say nothing: for benchmarks.
    - The worker process can be started, SIGTERMed, killed (kill -9) and started again on
      the same state file and port: :meth:`start_worker`, :meth:`terminate_worker`,
      :meth:`kill_worker`, :meth:`stop_worker`, :meth:`restart_worker`, with its
      :attr:`worker_exit_code`, its log (:meth:`log_text`) and its :meth:`metrics`.
    """

    def __init__(
        self,
        *,
        bootstrap_servers: str | None = None,
        start_broker: bool = True,
        plugin_paths: Sequence[str | Path] = (),
        plugin_modules: Sequence[str | ModuleType] = (),
        worker_properties: Mapping[str, str] | None = None,
        include_bundled_plugins: bool = True,
        workdir: str | Path | None = None,
        rest_auth: tuple[str, str] | None = None,
        connector_files: Sequence[str | Path] = (),
        env: Mapping[str, str] | None = None,
        startup_timeout: float = 120.0,
        stop_timeout: float = 20.0,
        request_timeout: float = 120.0,
        wait_timeout: float = DEFAULT_TIMEOUT,
        fast_defaults: bool = True,
    ) -> None:
        self._given_bootstrap = bootstrap_servers
        self._start_broker = start_broker and bootstrap_servers is None
        self._plugin_paths = [str(Path(p).resolve()) for p in plugin_paths]
        if include_bundled_plugins and BUNDLED_PLUGINS is not None:
            self._plugin_paths.insert(0, str(BUNDLED_PLUGINS))
        self._plugin_modules = [m if isinstance(m, str) else m.__name__ for m in plugin_modules]
        self._extra = dict(worker_properties or {})
        self._workdir: Path | None = Path(workdir) if workdir is not None else None
        self._own_workdir = False
        self.rest_auth = rest_auth
        self._connector_files = [str(f) for f in connector_files]
        self._env = dict(env) if env is not None else None
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.request_timeout = request_timeout
        self.wait_timeout = wait_timeout
        self._defaults = dict(FAST_DEFAULTS) if fast_defaults else {}
        self._broker: EmbeddedBroker | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._exited: list[subprocess.Popen[bytes]] = []
        """Earlier worker processes: what they left running is stopped on close."""
        self._rest_url = ""
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

    def start(self, wait_healthy: bool = True) -> EmbeddedConnect:
        """Start the broker (unless given) and the worker; wait until /health answers 200.

        With ``wait_healthy=False`` it returns once the worker process is started: for a
        worker expected to fail (see :meth:`wait_worker_exit`) or to be slow on purpose."""
        begin = time.monotonic()
        with _LIVE_LOCK:
            _LIVE.add(self)
        try:
            if self._start_broker:
                self._broker = EmbeddedBroker().start()
            self.timings["broker"] = time.monotonic() - begin
            self._prepare_workdir()
            self.start_worker(wait_healthy)
            if wait_healthy:
                self.timings["rest"] = time.monotonic() - begin
        except BaseException:
            self.close()
            raise
        return self

    def _prepare_workdir(self) -> None:
        if self._workdir is not None:
            self._workdir.mkdir(parents=True, exist_ok=True)
        else:
            self._workdir = Path(tempfile.mkdtemp(prefix="connect-lite-test-"))
            self._own_workdir = True
        props = {
            **self._defaults,
            **({"bootstrap.servers": self.bootstrap_servers} if self._has_broker() else {}),
            "listeners": f"http://127.0.0.1:{free_port()}",
            "state.storage.file": str(self._workdir / "connect-lite.db"),
            "plugin.path": ",".join(self._plugin_paths),
            # A test's own temporary files (pytest's tmp_path, tempfile's) may be read and
            # written by connectors; worker_properties can narrow or widen it.
            "connector.allowed.paths": ",".join(
                dict.fromkeys([tempfile.gettempdir(), str(self._workdir)])
            ),
            **({"plugin.modules": ",".join(self._plugin_modules)} if self._plugin_modules else {}),
            **self._extra,
        }
        self._rest_url = _rest_url(props["listeners"])
        text = "".join(f"{_escape(key, True)}={_escape(value)}\n" for key, value in props.items())
        self.properties_file.write_text(text, encoding="utf-8")

    def _has_broker(self) -> bool:
        return self._given_bootstrap is not None or self._broker is not None

    def start_worker(self, wait_healthy: bool = True) -> None:
        """Start the worker process (again, after it stopped or was killed) with the same
        properties, state file, port and log file (appended to); wait for /health 200 unless
        ``wait_healthy`` is False. Whatever the previous process left running is left alone
        (a test may check that it goes away), and stopped on close."""
        if not self._rest_url:
            raise RuntimeError("EmbeddedConnect is not started")
        if self._proc is not None:
            if self._proc.poll() is None:
                raise RuntimeError(f"the worker is running (pid {self._proc.pid})")
            self._exited.append(self._proc)
        self._proc = spawn_worker(
            self.properties_file, self.workdir, self.log_file, self._connector_files, self._env
        )
        if wait_healthy:
            self.wait_healthy()

    def wait_healthy(self, timeout: float | None = None) -> None:
        """Wait until GET /health answers 200 (default: ``startup_timeout``); WaitFailed at
        once, with the log's tail, if the worker exits."""

        def observe() -> Any:
            if self._proc is None:
                raise WaitFailed("the worker is not started")
            if self._proc.poll() is not None:
                raise WaitFailed(
                    f"the worker exited with code {self._proc.returncode}; "
                    f"log tail:\n{self.log_tail()}"
                )
            return self.client.health()

        timeout = self.startup_timeout if timeout is None else timeout
        try:
            poll(observe, lambda health: True, "worker /health 200", timeout, 0.05)
        except WaitTimeout as error:
            raise WaitTimeout(
                f"worker /health 200 (log tail:\n{self.log_tail()})", error.timeout, error.last_seen
            ) from None

    def restart_worker(self) -> None:
        """Stop the worker gracefully and start it again on the same state file and port."""
        self.stop_worker()
        self.start_worker()

    def stop_worker(self) -> int | None:
        """Stop the worker as :meth:`close` does: SIGTERM, SIGKILL after ``stop_timeout``, then
        whatever it left running (Spark's JVM...); its exit code (None if never started)."""
        if self._proc is None:
            return None
        return stop_tree(self._proc, self.stop_timeout)

    def terminate_worker(self, timeout: float = 60.0) -> int:
        """SIGTERM to the worker process, as a service manager stops it; its exit code once it
        has exited (``subprocess.TimeoutExpired`` after ``timeout``, the worker left running).
        What it leaves running is not killed, so a test can check that nothing is."""
        proc = self._running_proc()
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        return proc.wait(timeout)

    def kill_worker(self) -> int:
        """``kill -9`` of the worker process alone (its children are left to notice); its
        exit code (-9)."""
        proc = self._running_proc()
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        return proc.wait(30)

    def wait_worker_exit(self, timeout: float) -> int:
        """Wait until the worker process exits on its own; its exit code
        (``subprocess.TimeoutExpired`` after ``timeout``)."""
        if self._proc is None:
            raise RuntimeError("the worker is not started")
        return self._proc.wait(timeout)

    def _running_proc(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            raise RuntimeError("the worker is not running")
        return self._proc

    def close(self) -> None:
        """Stop the worker (and its Spark JVM), then the owned broker; remove temporary files."""
        try:
            for proc in [*self._exited, *([self._proc] if self._proc is not None else [])]:
                stop_tree(proc, self.stop_timeout)
            self._exited.clear()
        finally:
            broker, self._broker = self._broker, None
            if broker is not None:
                broker.stop()
            if self._own_workdir and self._workdir is not None:
                shutil.rmtree(self._workdir, ignore_errors=True)
                self._own_workdir = False
                self._workdir = None  # a start after close makes a new one
            with _LIVE_LOCK:
                _LIVE.discard(self)

    # -- where things are ---------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        """The broker's ``host:port``: the given one, the owned broker's, or (without a broker
        of its own) the ``bootstrap.servers`` of ``worker_properties``."""
        if self._given_bootstrap is not None:
            return self._given_bootstrap
        if self._broker is not None:
            return self._broker.bootstrap_servers
        if not self._start_broker and "bootstrap.servers" in self._extra:
            return self._extra["bootstrap.servers"]
        raise RuntimeError("EmbeddedConnect is not started, or knows no broker")

    @property
    def rest_url(self) -> str:
        """The worker's first http listener (the first listener if none is http)."""
        if not self._rest_url:
            raise RuntimeError("EmbeddedConnect is not started")
        return self._rest_url

    @property
    def client(self) -> ConnectClient:
        """The REST client (raises ConnectRestError with ``error_code`` and ``message``)."""
        return ConnectClient(self.rest_url, self.request_timeout, self.rest_auth)

    @property
    def http(self) -> HttpClient:
        """Plain HTTP to the worker: every answer (status, body, headers, raw), none raised."""
        return HttpClient(self.rest_url, self.request_timeout, self.rest_auth)

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
        """The worker's state file (``state.storage.file``)."""
        given = self._extra.get("state.storage.file")
        return Path(given) if given else self.workdir / "connect-lite.db"

    @property
    def properties_file(self) -> Path:
        return self.workdir / "worker.properties"

    @property
    def log_file(self) -> Path:
        """Everything the worker wrote (stdout and stderr), every start appended."""
        return self.workdir / "worker.log"

    @property
    def worker_pid(self) -> int | None:
        """The pid of the (latest) worker process, None before the start."""
        return self._proc.pid if self._proc is not None else None

    @property
    def worker_exit_code(self) -> int | None:
        """The exit code of the latest worker process; None while it runs (or before)."""
        return self._proc.poll() if self._proc is not None else None

    @property
    def broker_pid(self) -> int | None:
        return self._broker.pid if self._broker is not None else None

    def log_text(self) -> str:
        """The worker's whole log so far ("" before it wrote anything)."""
        try:
            return self.log_file.read_text(errors="replace")
        except (OSError, RuntimeError):
            return ""

    def log_tail(self, chars: int = 4000) -> str:
        return self.log_text()[-chars:] or "(no worker log)"

    def metrics(self) -> Metrics:
        """One scrape of GET /metrics; ValueError unless it is 200 in Prometheus text format."""
        answer = self.http.get("/metrics")
        content_type = answer.headers.get("Content-Type", "")
        if answer.status != 200 or not content_type.startswith("text/plain; version="):
            raise ValueError(f"GET /metrics: {answer.status} {content_type}: {answer.body!r}")
        return Metrics.parse(answer.raw.decode())


def _rest_url(listeners: str) -> str:
    """The URL of the first http listener in ``listeners`` (else of the first one)."""
    parsed = [urlsplit(entry.strip()) for entry in listeners.split(",") if entry.strip()]
    if not parsed:
        raise ValueError(f"no listener in listeners={listeners!r}")
    first = next((p for p in parsed if p.scheme.lower() == "http"), parsed[0])
    host = first.hostname or "127.0.0.1"
    host = "127.0.0.1" if host == "0.0.0.0" else f"[{host}]" if ":" in host else host
    return f"{first.scheme.lower()}://{host}:{first.port}"


def _escape(text: str, key: bool = False) -> str:
    """A .properties value (or key) that parse_properties reads back as ``text``."""
    out = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    if key:
        out = out.replace("=", "\\=").replace(":", "\\:").replace(" ", "\\ ")
    elif out.startswith((" ", "\t")):
        out = "\\" + out
    return out
