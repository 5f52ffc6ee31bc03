"""Composition root: builds a worker from its properties and starts every part in order."""

from __future__ import annotations

import gc
import logging
import os
import ssl
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from connect_lite.api.errors import ConfigError, ConnectError
from connect_lite.config.client_configs import WORKER_CLIENT_PREFIXES, client_key_problems
from connect_lite.config.override_policy import client_passwords
from connect_lite.config.properties import ConnectorFile
from connect_lite.config.resolution import ConfigResolver, Redactor
from connect_lite.config.rest_security import RestSecurity
from connect_lite.config.worker import (
    WorkerConfig,
    plugin_modules_of,
    plugin_path_of,
    replaced_key_warnings,
)
from connect_lite.control.concealed_stores import ConcealedOffsets
from connect_lite.control.config_providers import load_config_providers, resolve_worker_props
from connect_lite.control.connector_details import ConnectorDetails
from connect_lite.control.connector_offsets import ConnectorOffsetsAPI
from connect_lite.control.dataplane_process import DataPlaneProcess
from connect_lite.control.entities import WorkerHealth
from connect_lite.control.herder import StandaloneHerder
from connect_lite.control.herder_api import WorkerStartingError
from connect_lite.control.lost_topics import lost_topics, restart_warning
from connect_lite.control.metric_samples import MetricSources
from connect_lite.control.metrics import WorkerMetrics
from connect_lite.control.status import StatusReporter
from connect_lite.control.topic_tracking import TopicTracker
from connect_lite.control.worker import Worker
from connect_lite.kafka.admin import Admin, wait_for_cluster_id
from connect_lite.kafka.broker import EmbeddedBroker
from connect_lite.kafka.clients import admin_config, librdkafka_refusal
from connect_lite.logs.loggers import Loggers, install_redaction
from connect_lite.pipeline.java import check_java
from connect_lite.plugins.registry import Plugins
from connect_lite.protocol.host import TaskHost
from connect_lite.protocol.messages import DataPlaneSettings, EngineState
from connect_lite.rest.app import create_app
from connect_lite.rest.server import RestServer
from connect_lite.rest.tls import server_context
from connect_lite.storage.base import Stores
from connect_lite.storage.sqlite import open_sqlite_stores

if TYPE_CHECKING:
    from connect_lite.pipeline.session import SparkEngine

log = logging.getLogger(__name__)

SESSION_TIMEOUT_KEY = "consumer.session.timeout.ms"
EMBEDDED_SESSION_TIMEOUT_MS = "6000"
"""The sink consumers' session timeout with the embedded broker, unless the worker sets one."""

STORE_BUSY_TIMEOUT_S = 1.0
"""How long one state-store write waits for a lock held by another process."""

TOPIC_LISTING_TIMEOUT_S = 5.0
"""How long the start waits for the embedded broker's topic list (for the restart WARN)."""


class ConnectorFileError(ConnectError):
    """A connector file given on the command line could not be created."""


@dataclass
class StartedParts:
    """Everything one running worker owns, in start order; stopped in reverse."""

    parts: list[tuple[str, Any]] = field(default_factory=list)

    def add(self, name: str, stop: Any) -> None:
        self.parts.append((name, stop))

    def stop(self) -> None:
        for name, stop in reversed(self.parts):
            try:
                stop()
            except Exception:
                log.exception("Error while stopping %s", name)
        self.parts.clear()


@dataclass
class RunningWorker:
    herder: StandaloneHerder
    rest_url: str
    parts: StartedParts
    broker: EmbeddedBroker | None

    def stop(self) -> None:
        self.parts.stop()


def start_worker(props: Mapping[str, str], connectors: Sequence[ConnectorFile]) -> RunningWorker:
    """Start a worker and create the connectors of its command line (read already, so a bad
    file fails before anything starts); on any failure, stop what was started and re-raise."""
    parts = StartedParts()
    try:
        return _Startup(dict(props), parts).run(connectors)
    except BaseException:
        parts.stop()
        raise


class _Startup:
    """The worker's start, step by step, in this order: what can fail fast goes first, and
    what is slow (Spark, Kafka) starts early, beside the rest. Each started part is added to
    ``parts``, which stops them in reverse."""

    def __init__(self, props: dict[str, str], parts: StartedParts) -> None:
        self.props = props
        self.parts = parts
        self.timer = StartupTimer()
        self.redactor = Redactor()
        self.starting = StartingHerder()
        """Until the herder exists, /health answers 503 "starting" with the step, as Kafka's."""
        self.loggers = Loggers()

    def run(self, connectors: Sequence[ConnectorFile]) -> RunningWorker:
        plugins, resolver, config = self.read_config()
        security, tls = self.read_security(config)
        stores = self.open_state_file(config)
        server = self.start_rest(config, security, tls)
        self.check_java()
        broker = self.embedded_broker(config)
        data_plane = self.start_data_plane(config)
        if broker is not None:
            self.start_broker(broker, config)
        cluster_id = self.connect_to_kafka(config)
        herder = self.start_herder(
            config, stores, plugins, data_plane, cluster_id, resolver, server, connectors
        )
        herder.ready()
        log.info("%s", self.timer.summary(spark_progress(data_plane.engine)))
        gc.collect()
        gc.freeze()  # start-up's objects are never garbage: no collection looks at them again
        return RunningWorker(herder, server.url, self.parts, broker)

    def read_config(self) -> tuple[Plugins, ConfigResolver, WorkerConfig]:
        """The plugins first (config providers are plugins, and the worker's own keys may
        refer to them), then the worker config, built once, with its references resolved,
        and its ``producer.*``, ``consumer.*`` and ``admin.*`` keys checked as connector
        overrides are (``client_configs``)."""
        self.redactor.add_passwords(client_passwords(self.props))
        self.parts.add("log redaction", install_redaction(self.redactor))
        with self.timer.phase("plugins"):
            plugins = Plugins(
                plugin_path_of(self.props), plugin_modules=plugin_modules_of(self.props)
            )
        resolver = load_config_providers(self.props, plugins, self.redactor)
        self.parts.add("config providers", resolver.close)
        config = WorkerConfig(resolve_worker_props(self.props, resolver))
        problems = client_key_problems(config.raw, WORKER_CLIENT_PREFIXES, librdkafka_refusal)
        if problems:  # each would fail every task that builds the client
            raise ConfigError("\n".join(problems))
        for warning in replaced_key_warnings(config.raw):
            log.warning("%s", warning)
        return plugins, resolver, config

    def read_security(self, config: WorkerConfig) -> tuple[RestSecurity, ssl.SSLContext | None]:
        """Keystores and the credentials file: a bad one fails before anything starts."""
        security = config.rest_security()
        return security, server_context(security.tls) if security.tls is not None else None

    def open_state_file(self, config: WorkerConfig) -> Stores:
        """Before the broker starts or Kafka is contacted: a second worker on a file another
        one owns, or a damaged or newer file, stops here having done nothing. Stopped last, so
        the file stays owned until everything else has stopped."""
        with self.timer.phase("state file"):
            stores = _open_state_file(config)
        if stores.close is not None:
            self.parts.add("state store", stores.close)
        return stores

    def start_rest(
        self, config: WorkerConfig, security: RestSecurity, tls: ssl.SSLContext | None
    ) -> RestServer:
        """Before anything slow: a taken port stops the start at once, having started nothing."""
        with self.timer.phase("REST"):
            app = create_app(self.starting, self.loggers, security)
            server = RestServer(app, config.listeners, tls)
            server.start()
        self.parts.add("REST server", server.stop)
        return server

    def check_java(self) -> None:
        """Before the broker, Kafka and Spark: without Java, Spark cannot run."""
        self.starting.step = "Checking Java."
        with self.timer.phase("Java"):
            check_java()

    def embedded_broker(self, config: WorkerConfig) -> EmbeddedBroker | None:
        """The embedded broker, not started yet. Added before the data plane, so stopped after
        it (a broker not started stops at once): Tansu exits on SIGTERM only once its clients
        are gone, else it is killed after 5 s."""
        if not config.embedded_broker_enable:
            return None
        broker = EmbeddedBroker(
            port=config.embedded_broker_port, niceness=config.data_plane_niceness
        )
        self.parts.add("embedded broker", broker.stop)
        return broker

    def start_data_plane(self, config: WorkerConfig) -> DataPlaneProcess:
        """The tasks and Spark, in a process of their own: Spark takes longest to start, so it
        starts now, beside the broker, Kafka and the herder."""
        with self.timer.phase("data plane"):
            data_plane = start_data_plane(config)
        self.parts.add("data plane", data_plane.close)
        self.loggers.peer = data_plane
        return data_plane

    def start_broker(self, broker: EmbeddedBroker, config: WorkerConfig) -> None:
        self.starting.step = "Starting the embedded broker."
        with self.timer.phase("broker"):
            broker.start()
        # Tansu holds a group join for half the session timeout (Kafka's default: 45 s), so a
        # sink would wait 22 s for its partitions, and again for each new topic.
        defaults = {SESSION_TIMEOUT_KEY: EMBEDDED_SESSION_TIMEOUT_MS}
        config.use_embedded_broker(broker.bootstrap_servers, defaults)
        log.info("Embedded broker listening at %s", broker.bootstrap_servers)

    def connect_to_kafka(self, config: WorkerConfig) -> str:
        self.starting.step = f"Connecting to Kafka at {','.join(config.bootstrap_servers)}."
        with self.timer.phase("Kafka"):
            return connect_to_kafka(config)

    def start_herder(
        self,
        config: WorkerConfig,
        stores: Stores,
        plugins: Plugins,
        data_plane: DataPlaneProcess,
        cluster_id: str,
        resolver: ConfigResolver,
        server: RestServer,
        connectors: Sequence[ConnectorFile],
    ) -> StandaloneHerder:
        """The herder, its stored connectors, then those of the command line."""
        self.starting.step = "Starting connectors."
        with self.timer.phase("connectors"):
            worker_id = config.worker_id(server.host, server.port)
            status = StatusReporter(
                stores.statuses, worker_id, config.status_retry_policy, redactor=self.redactor
            )
            self.parts.add("status retries", status.close)
            herder = build_herder(config, stores, plugins, data_plane, status, cluster_id, resolver)
            self.starting.herder = herder
            self.parts.add("herder", herder.stop)
            # Stopped first (stop runs in reverse): no request reaches a stopping herder.
            self.parts.add("REST server (stops first)", server.stop)
            if config.embedded_broker_enable:
                warn_of_lost_topics(config, stores, herder.worker.connector_type)
            herder.start()
            for connector in connectors:
                _create_from_file(herder, connector)
        return herder


def connect_to_kafka(config: WorkerConfig) -> str:
    """The cluster id, logged as it is asked for; a failure names bootstrap.servers and the
    embedded broker as the way to run without a Kafka cluster."""
    servers = ",".join(config.bootstrap_servers)
    timeout = config.bootstrap_timeout_s
    log.info("Connecting to Kafka at %s", servers)

    def waiting(cause: str) -> None:
        log.warning(
            "Kafka at %s does not answer yet (%s); waiting up to %g s in all "
            "(bootstrap.timeout.ms)",
            servers,
            cause,
            timeout,
        )

    try:
        return wait_for_cluster_id(admin_config(config.raw, {}), timeout, waiting)
    except ConfigError:
        raise
    except ConnectError as error:
        advice = (
            ""
            if config.embedded_broker_enable
            else " or set embedded.broker.enable=true to run a broker inside the worker"
        )
        raise ConnectError(
            f"Cannot connect to Kafka at {servers} (bootstrap.servers) within {timeout:g} s: "
            f"{error}. Check that the brokers are running and that bootstrap.servers names "
            f"them,{advice}."
        ) from error


def warn_of_lost_topics(
    config: WorkerConfig, stores: Stores, connector_type: Callable[[Mapping[str, str]], str]
) -> None:
    """Before the stored connectors start: one WARN naming those whose stored offsets or
    active topics refer to topics the embedded broker (in memory, new at each start) does not
    have, and what they will do. A broker that cannot list its topics only skips the check.
    A state file without connectors (a first start) asks the broker nothing."""
    if not stores.configs.connector_names():
        return
    try:
        with Admin(admin_config(config.raw, {}), TOPIC_LISTING_TIMEOUT_S) as admin:
            topics = admin.list_topics()
    except ConnectError as error:
        log.debug("Could not list the embedded broker's topics: %s", error)
        return
    lost = lost_topics(stores, connector_type, topics)
    if lost:
        log.warning("%s", restart_warning(lost, os.path.abspath(config.state_storage_file)))


def start_data_plane(config: WorkerConfig) -> DataPlaneProcess:
    """Start the data-plane process, at the worker's data.plane.niceness, with the worker's
    Spark settings and log levels."""
    settings = DataPlaneSettings(
        spark_conf=config.spark_conf(),
        shutdown_timeout_ms=config.task_shutdown_graceful_timeout_ms,
        niceness=config.data_plane_niceness,
        sys_path=tuple(sys.path),
    )
    data_plane = DataPlaneProcess(settings)
    data_plane.start_process()
    return data_plane


def spark_progress(spark: EngineState) -> str:
    """Spark's part of the ready line: it starts in the background, so it may not be done."""
    if spark.start_error is not None:
        return "Spark failed to start (see the ERROR above)"
    if spark.unavailable is not None:
        return "Spark's cluster is unreachable (see the ERROR above); retrying with backoff"
    if spark.started_in is not None:
        return f"Spark {spark.started_in:.2f} s"
    return "Spark still starting in the background"


class StartupTimer:
    """Seconds spent on each part of the start, for the one INFO line when the worker is ready."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._began = clock()
        self.phases: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        begin = self._clock()
        try:
            yield
        finally:
            self.phases[name] = self.phases.get(name, 0.0) + self._clock() - begin

    def summary(self, spark: str) -> str:
        parts = [f"{name} {seconds:.2f} s" for name, seconds in self.phases.items()]
        total = self._clock() - self._began
        return f"Worker started in {total:.2f} s ({', '.join([*parts, spark])})"


def _open_state_file(config: WorkerConfig) -> Stores:
    """Own (lock), check and open the state file; see ``open_sqlite_stores``."""
    state_file = os.path.abspath(config.state_storage_file)
    os.makedirs(os.path.dirname(state_file), exist_ok=True)
    # Short: status writes are retried on a scheduler and offset commits at the next flush
    # interval, so a task thread waits at most this long on another process's lock.
    stores = open_sqlite_stores(state_file, busy_timeout_s=STORE_BUSY_TIMEOUT_S)
    log.info("State file %s opened; this worker (pid %d) owns it", state_file, os.getpid())
    return stores


def build_herder(
    config: WorkerConfig,
    stores: Stores,
    plugins: Plugins,
    tasks: DataPlaneProcess | SparkEngine,
    status: StatusReporter,
    cluster_id: str | None,
    resolver: ConfigResolver | None = None,
) -> StandaloneHerder:
    """The worker and its herder, wired from their parts. Its tasks run in the data-plane
    process, attached here to the status reporter, offset store and topic tracker they
    report to; tests may pass memory stores, and a SparkEngine to run tasks as threads of
    this process instead.

    The herder and the tasks share one topic tracker; the metrics read the worker's
    running plugins and tasks and the status reporter's counters."""
    worker_props = dict(config.raw)
    for kind in ("key", "value", "header"):
        worker_props.setdefault(f"{kind}.converter", config.converter(kind))
    # A name that is, whole, a resolved secret is kept as its reference (topics, partitions).
    conceal = resolver.redactor.exact if resolver is not None else None
    topic_tracker = TopicTracker(
        stores.topics, config.topic_tracking_enable, config.topic_tracking_allow_reset, conceal
    )
    offsets = stores.offsets if conceal is None else ConcealedOffsets(stores.offsets, conceal)
    host: TaskHost
    if isinstance(tasks, DataPlaneProcess):
        tasks.attach(status, offsets, topic_tracker)
        host = tasks
    else:  # imported here: the worker process itself runs no task, and needs none of it
        from connect_lite.dataplane.local_tasks import LocalTasks, TaskServices, shared

        services = TaskServices(tasks, status, offsets, topic_tracker)
        host = LocalTasks(tasks, shared(services), config.task_shutdown_graceful_timeout_ms)
    worker = Worker(
        worker_props,
        plugins,
        host,
        status,
        flush_interval_ms=config.offset_flush_interval_ms,
        flush_timeout_ms=config.offset_flush_timeout_ms,
        batching=config.batching,
        topic_creation_enable=config.topic_creation_enable,
        transforms_columns=config.transforms_columns_enable,
        override_policy=config.override_policy,
        resolver=resolver,
        local_paths=config.local_paths,
    )
    sources = MetricSources(status.counters, worker.running_tasks, stores.statuses)
    details = ConnectorDetails(
        plugins, stores.configs, lambda config: worker.resolver.resolve(config).values
    )
    return StandaloneHerder(
        worker,
        stores,
        config,
        plugins=plugins,
        topic_tracker=topic_tracker,
        metrics=WorkerMetrics(
            stores.configs,
            topic_tracker,
            worker.running_plugins,
            sources=sources,
            details=details.all,
        ),
        offsets=ConnectorOffsetsAPI(
            plugins, offsets, worker_props, override_policy=config.override_policy
        ),
        worker_id=status.worker_id,
        cluster_id=cluster_id,
        details=details,
    )


def _create_from_file(herder: StandaloneHerder, file: ConnectorFile) -> None:
    name, path = file.name, file.path
    try:
        if name in herder.connectors():
            log.info("[%s] Connector from %s already exists; keeping the stored one", name, path)
            return
        herder.create_connector(name, file.config, file.initial_state)
    except Exception as error:
        raise ConnectorFileError(f"Failed to create connector from {path}: {error}") from error


class StartingHerder:
    """Stands in for the herder while the worker starts, so that the REST listeners can bind
    first: /health answers 503 "starting" with the current step, every other route 503."""

    def __init__(self) -> None:
        self.herder: StandaloneHerder | None = None
        self.step = "Starting."

    def __getattr__(self, name: str) -> Any:
        herder = self.herder
        if herder is not None:
            return getattr(herder, name)
        if name == "health":
            return self._health
        raise WorkerStartingError("Worker is still starting up.")

    def _health(self) -> WorkerHealth:
        return WorkerHealth("starting", f"Worker is still starting up. {self.step}")
