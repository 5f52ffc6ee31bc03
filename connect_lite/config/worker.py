"""The worker configuration, declared once: parsing, validation, typed access, the key table."""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api.config import (
    ConfigDef,
    Importance,
    Range,
    Type,
    Validator,
    ValidString,
    format_value,
    invalid,
    parse_value,
    prefixed,
    valid_list,
)
from connect_lite.api.errors import ConfigError
from connect_lite.config.batching import DEFAULT_BATCHING, MAX_BYTES_KEY, MAX_RECORDS_KEY, Batching
from connect_lite.config.local_paths import ALLOWED_PATHS, LocalPaths
from connect_lite.config.override_policy import (
    ALLOWED_OAUTH_URLS,
    POLICY_NAMES,
    OverridePolicy,
    override_policy,
    validate_policy_name,
)
from connect_lite.config.rest_security import RestSecurity, define_rest_security, rest_security
from connect_lite.config.retry_policy import RetryPolicy

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
SIMPLE_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
DEFAULT_LISTENER = "http://127.0.0.1:8083"
DEFAULT_SPARK_MASTER = "local[*]"

_LISTENER = re.compile(r"^(https?)://(\[[0-9A-Fa-f:.%]+\]|[^:/\[\]\s]*):(\d+)/?$", re.IGNORECASE)

PASSTHROUGH_PREFIXES: dict[str, str] = {
    "producer.": "Passed to the producers of source tasks and of dead letter queues.",
    "consumer.": "Passed to the consumers of sink tasks.",
    "admin.": "Passed to the admin clients (topic creation, offsets).",
    "spark.": "Passed to the SparkSession builder (defaults: spark.master=local[*], "
    "spark.driver.memory=2g, spark.sql.session.timeZone=UTC, spark.scheduler.mode=FAIR). "
    "The driver JVM gets `-XX:G1PeriodicGCInterval=5000 -XX:MinHeapFreeRatio=10 "
    "-XX:MaxHeapFreeRatio=30` (an idle JVM gives its free heap back), "
    "`-XX:TieredStopAtLevel=1` (C1 only: a faster start on few cores) and the class-data-sharing "
    "archive that `scripts/setup.sh` builds (see [Start-up and memory](#start-up-and-memory)); "
    "options given in `spark.driver.extraJavaOptions` come after these, so a repeated option "
    "is the user's (give them as a worker key: one in Spark's `spark-defaults.conf` is "
    "replaced).",
    "key.converter.": "Passed to the worker's key converter (prefix stripped).",
    "value.converter.": "Passed to the worker's value converter (prefix stripped).",
    "header.converter.": "Passed to the worker's header converter (prefix stripped).",
    "config.providers.": "<name>.class: a provider's class (FileConfigProvider, "
    "DirectoryConfigProvider, EnvVarConfigProvider or a plugin); <name>.param.*: its settings "
    "(allowed.paths, allowlist.pattern). Read as written, never resolved.",
}


def optional(validator: Validator) -> Validator:
    """Run ``validator`` only on a value that is set."""

    def check(name: str, value: Any) -> str | None:
        return None if value is None else validator(name, value)

    return check


@dataclass(frozen=True)
class Listener:
    """One REST listener, ``http(s)://host:port``: the one grammar of ``listeners``, for the
    worker config and the REST server alike. ``written_host`` is the host as written: empty
    (every interface, as in Kafka) or an IPv6 address in brackets. Port 0 asks for a free port."""

    written_host: str
    port: int
    scheme: str = "http"

    @property
    def host(self) -> str:
        """The address to bind: brackets off, every interface for an empty host."""
        return self.written_host.strip("[]") or "0.0.0.0"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.written_host or '0.0.0.0'}:{self.port}"

    @property
    def loopback(self) -> bool:
        if self.host.lower() == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_listener(text: str) -> Listener | None:
    """The listener ``text`` names, or None if it is not ``http(s)://host:port``."""
    match = _LISTENER.match(text.strip())
    if not match or int(match.group(3)) > 65535:
        return None
    return Listener(match.group(2), int(match.group(3)), match.group(1).lower())


def listener_of(text: str) -> Listener:
    """The listener ``text`` names; ConfigError if it is not ``http(s)://host:port``."""
    listener = parse_listener(text)
    if listener is None:
        raise ConfigError(f"Could not parse listener {text}: expected http(s)://host:port")
    return listener


def _validate_listeners(name: str, value: Any) -> str | None:
    if not value:
        return invalid(name, value, "Must contain at least one listener")
    bad = [item for item in value if parse_listener(item) is None]
    if bad:
        return invalid(
            name,
            value,
            f"Listener '{bad[0]}' is not of the form http://host:port or https://host:port",
        )
    return None


def _define_worker_config() -> ConfigDef:
    high, medium, low = Importance.HIGH, Importance.MEDIUM, Importance.LOW
    port = optional(Range.between(0, 65535))
    d = ConfigDef()
    d.define(
        "bootstrap.servers",
        Type.LIST,
        validator=valid_list(allow_empty=False),
        importance=high,
        doc="Kafka brokers to connect to, host:port,... Required unless "
        "embedded.broker.enable=true, which fills it with the embedded broker's address.",
    )
    d.define(
        "bootstrap.timeout.ms",
        Type.LONG,
        30000,
        Range.at_least(1),
        importance=low,
        doc="How long start-up waits for the cluster at bootstrap.servers to answer before "
        "the worker stops (exit 2). A WARN names the cause after the first failed attempt.",
    )
    d.define(
        "embedded.broker.enable",
        Type.BOOLEAN,
        False,
        importance=high,
        doc="Start a Kafka-compatible broker (Tansu) as a child process on loopback. "
        "Its data is in memory only.",
    )
    d.define(
        "embedded.broker.port",
        Type.INT,
        0,
        Range.between(0, 65535),
        importance=low,
        doc="Port of the embedded broker; 0 picks a free port.",
    )
    d.define(
        "listeners",
        Type.LIST,
        [DEFAULT_LISTENER],
        _validate_listeners,
        importance=high,
        doc="REST listeners, comma-separated, each http://host:port or https://host:port.",
    )
    define_rest_security(d)
    d.define(
        "rest.advertised.host.name",
        Type.STRING,
        None,
        importance=low,
        doc="Host name in the worker id; default: the listener's host.",
    )
    d.define(
        "rest.advertised.port",
        Type.INT,
        None,
        port,
        importance=low,
        doc="Port in the worker id; default: the listener's bound port.",
    )
    d.define(
        "plugin.path",
        Type.LIST,
        [],
        importance=low,
        doc="Directories whose immediate subdirectories are plugin locations.",
    )
    d.define(
        "plugin.modules",
        Type.LIST,
        [],
        importance=low,
        doc="Importable Python modules or packages (scanned with their submodules) that hold "
        "plugins, besides plugin.path, the built-ins and the connect_lite.plugins entry points "
        "of installed distributions. They must be importable by the worker and its Spark "
        "Python workers.",
    )
    d.define(
        "config.providers",
        Type.LIST,
        [],
        importance=low,
        doc="Names of config providers (KIP-297) that ${name:path:key} references in connector "
        "and worker configs resolve through; each needs config.providers.<name>.class.",
    )
    d.define(
        "state.storage.file",
        Type.STRING,
        "connect-lite.db",
        importance=high,
        doc="SQLite file holding connector configs, statuses, offsets and topics.",
    )
    d.define(
        ALLOWED_PATHS,
        Type.LIST,
        [],
        importance=high,
        doc="Directories in which connectors may read and write local files (FileStream's file, "
        "a lake sink's file:// store.url, and every other key that names a local path); links "
        "and .. are resolved first. Empty: the directory of state.storage.file. The state file "
        "and its companions, plugin.path and the Python installation are never allowed. A "
        "worker key only: a connector config may not set it.",
    )
    d.define(
        "offset.flush.interval.ms",
        Type.LONG,
        60000,
        Range.at_least(1),
        importance=low,
        doc="How often source offsets of acknowledged records are committed.",
    )
    d.define(
        "offset.flush.timeout.ms",
        Type.LONG,
        5000,
        Range.at_least(0),
        importance=low,
        doc="Maximum time to wait for records to be acknowledged before an offset commit.",
    )
    d.define(
        "data.plane.niceness",
        Type.INT,
        10,
        Range.between(0, 19),
        importance=medium,
        doc="The Unix niceness of the data plane: the process that runs the tasks (their "
        "polls, puts and Kafka clients, and Spark's driver), with Spark's JVM and Python "
        "workers, and the embedded broker. The worker's own process (the REST API, the "
        "herder and the state file) keeps its priority, so that the REST API answers as "
        "fast under load as idle. 0 runs both at the same priority.",
    )
    d.define(
        MAX_RECORDS_KEY,
        Type.INT,
        DEFAULT_BATCHING.max_records,
        Range.at_least(1),
        importance=low,
        doc="The most records a task's batch (one Spark job) holds. A batch grows only while "
        "the one before it is in its job, so a lone record never waits for more; under load, "
        "larger batches move more records a second and take more memory in the data plane, "
        "Spark's JVM and its Python workers. A sink's max.poll.records (consumer. or "
        "consumer.override.) sets it for that sink.",
    )
    d.define(
        MAX_BYTES_KEY,
        Type.LONG,
        DEFAULT_BATCHING.max_bytes,
        Range.at_least(1),
        importance=low,
        doc="The most bytes of record keys, values and headers a task's batch holds (a "
        "batch passes it by at most one poll or fetch), so that a batch of large records "
        "cannot fill the data plane's memory whatever their count. A source record's key "
        "or value that is not a string or bytes (a Struct, a map) counts its own size only. "
        "Sinks that let Spark's executors read their records (put_dataframe) hold none in "
        "the data plane and are bounded by records only.",
    )
    d.define(
        "task.shutdown.graceful.timeout.ms",
        Type.LONG,
        5000,
        Range.at_least(0),
        importance=low,
        doc="Total time to wait for tasks to stop on shutdown.",
    )
    for kind, default in (
        ("key", JSON_CONVERTER),
        ("value", JSON_CONVERTER),
        ("header", SIMPLE_HEADER_CONVERTER),
    ):
        d.define(
            f"{kind}.converter",
            Type.CLASS,
            default,
            importance=high if kind != "header" else low,
            doc=f"Default {kind} converter of connectors (class name or alias).",
        )
        d.define(
            f"{kind}.converter.plugin.version",
            Type.STRING,
            None,
            importance=low,
            doc=f"Version or version range of {kind}.converter; unset = latest installed.",
        )
    d.define(
        "connector.client.config.override.policy",
        Type.STRING,
        "All",
        validate_policy_name,
        importance=medium,
        doc="Which producer/consumer/admin .override. keys connectors may set: "
        + ", ".join(POLICY_NAMES)
        + ".",
    )
    d.define(
        "connector.client.config.override.allowlist",
        Type.LIST,
        [],
        importance=medium,
        doc="Client config keys connectors may override under the Allowlist policy.",
    )
    d.define(
        ALLOWED_OAUTH_URLS,
        Type.LIST,
        [],
        importance=low,
        doc="OAuth token and JWKS endpoint URLs that connectors may set in "
        "*.override.sasl.oauthbearer.*.endpoint.url (Kafka's system property of this name).",
    )
    d.define(
        "topic.creation.enable",
        Type.BOOLEAN,
        True,
        importance=low,
        doc="Let source connectors create topics with topic.creation.* rules (KIP-158).",
    )
    d.define(
        "transforms.columns.enable",
        Type.BOOLEAN,
        True,
        importance=low,
        doc="Run chains of Kafka's built-in transforms as Spark column expressions when a "
        "batch has a schema; false runs every chain record by record in Python workers "
        "(mapInArrow), which is faster on small machines (see Benchmark).",
    )
    d.define(
        "topic.tracking.enable",
        Type.BOOLEAN,
        True,
        importance=low,
        doc="Record the topics each connector uses (KIP-558).",
    )
    d.define(
        "topic.tracking.allow.reset",
        Type.BOOLEAN,
        True,
        importance=low,
        doc="Allow PUT /connectors/{name}/topics/reset.",
    )
    d.define(
        "log.format",
        Type.STRING,
        "text",
        ValidString.in_ignore_case("text", "json"),
        importance=low,
        doc="text: Kafka's log layout; json: one JSON object a line. The command line's "
        "--log-format wins over it.",
    )
    _define_status_retry(d)
    return d


STATUS_RETRY = "status.storage.retry."


def _define_status_retry(d: ConfigDef) -> None:
    """The status-store retry keys (asynchronous retries with exponential backoff and jitter)."""
    low = Importance.LOW
    for suffix, type_, default, validator, doc in (
        (
            "max.retries",
            Type.INT,
            5,
            Range.between(0, 2**31 - 1),
            "Retries of a status write that failed for a retriable reason before it is dropped.",
        ),
        (
            "initial.backoff.ms",
            Type.LONG,
            300,
            Range.at_least(0),
            "Delay before the first retry of a status write.",
        ),
        (
            "max.backoff.ms",
            Type.LONG,
            10000,
            Range.at_least(0),
            "Cap of the exponential backoff between status write retries.",
        ),
        (
            "backoff.multiplier",
            Type.DOUBLE,
            2.0,
            Range.at_least(1.0),
            "Factor by which the backoff grows after each retry.",
        ),
        (
            "jitter.factor",
            Type.DOUBLE,
            0.25,
            Range.between(0.0, 1.0),
            "Random extra delay, as a fraction of the capped backoff (0 = none).",
        ),
    ):
        d.define(STATUS_RETRY + suffix, type_, default, validator, importance=low, doc=doc)


WORKER_CONFIG_DEF = _define_worker_config()
"""The one declaration of the worker's keys."""


@dataclass(frozen=True)
class ReplacedKey:
    """A Kafka worker key that connect-lite does not read: the key that takes its place, and
    the rest of the WARN line (which names that key)."""

    replacement: str
    why: str


_DISTRIBUTED = "it belongs to Kafka Connect's distributed mode; connect-lite keeps {} in {}"
REPLACED_KAFKA_KEYS: dict[str, ReplacedKey] = {
    "offset.storage.file.filename": ReplacedKey(
        "state.storage.file",
        "source offsets are kept in state.storage.file, with the rest of the worker's state",
    ),
    **{
        key: ReplacedKey("state.storage.file", _DISTRIBUTED.format(what, "state.storage.file"))
        for key, what in (
            ("group.id", "its state"),
            ("offset.storage.topic", "source offsets"),
            ("offset.storage.partitions", "source offsets"),
            ("offset.storage.replication.factor", "source offsets"),
            ("config.storage.topic", "connector configs"),
            ("config.storage.replication.factor", "connector configs"),
            ("status.storage.topic", "statuses"),
            ("status.storage.partitions", "statuses"),
            ("status.storage.replication.factor", "statuses"),
        )
    },
    "rest.host.name": ReplacedKey("listeners", "Kafka 3.0 replaced it with listeners"),
    "rest.port": ReplacedKey("listeners", "Kafka 3.0 replaced it with listeners"),
    "admin.listeners": ReplacedKey(
        "listeners", "/admin/loggers is served on listeners, with every other route"
    ),
}
"""Kafka worker keys that connect-lite replaces: a worker config that sets one gets a WARN."""


def replaced_key_warnings(props: Mapping[str, str]) -> list[str]:
    """One line for each Kafka key in ``props`` that connect-lite replaces, naming the
    replacement (a Kafka ``connect-standalone.properties`` has some of them)."""
    return [
        f"Worker config key {key} is not used by connect-lite: {replaced.why}."
        for key, replaced in REPLACED_KAFKA_KEYS.items()
        if key in props
    ]


class WorkerConfig:
    """A validated worker configuration. Unknown keys are kept in ``raw`` and allowed."""

    def __init__(self, props: Mapping[str, str]) -> None:
        self.raw: dict[str, str] = dict(props)
        self._values = _parse_worker(self.raw)

    def get(self, key: str) -> Any:
        """The parsed value (or default) of a declared key."""
        return self._values[key]

    def use_embedded_broker(self, servers: str, defaults: Mapping[str, str]) -> None:
        """Point this config at the embedded broker once it listens at ``servers``;
        ``defaults`` fill keys the worker does not set (the consumers' session timeout)."""
        self.raw = {**defaults, **self.raw, "bootstrap.servers": servers}
        self._values = _parse_worker(self.raw)

    @property
    def bootstrap_servers(self) -> list[str]:
        return list(self.get("bootstrap.servers") or [])

    @property
    def bootstrap_timeout_s(self) -> float:
        return int(self.get("bootstrap.timeout.ms")) / 1000

    @property
    def embedded_broker_enable(self) -> bool:
        return bool(self.get("embedded.broker.enable"))

    @property
    def batching(self) -> Batching:
        """Every task's batching (a sink's max.poll.records may lower its record count)."""
        return Batching(
            max_records=int(self.get(MAX_RECORDS_KEY)), max_bytes=int(self.get(MAX_BYTES_KEY))
        )

    @property
    def data_plane_niceness(self) -> int:
        return int(self.get("data.plane.niceness"))

    @property
    def embedded_broker_port(self) -> int:
        return int(self.get("embedded.broker.port"))

    @property
    def rest_advertised_host_name(self) -> str | None:
        return self.get("rest.advertised.host.name") or None

    @property
    def rest_advertised_port(self) -> int | None:
        return self.get("rest.advertised.port")

    @property
    def plugin_path(self) -> list[str]:
        return list(self.get("plugin.path") or [])

    @property
    def plugin_modules(self) -> list[str]:
        return list(self.get("plugin.modules") or [])

    @property
    def state_storage_file(self) -> str:
        return str(self.get("state.storage.file"))

    @functools.cached_property
    def local_paths(self) -> LocalPaths:
        """The bound on the local files connectors may use (``connector.allowed.paths``)."""
        state = self.state_storage_file
        allowed = [p for p in self.get(ALLOWED_PATHS) or [] if p.strip()]
        return LocalPaths.of(allowed or LocalPaths.default_allowed(state), state, self.plugin_path)

    @property
    def offset_flush_interval_ms(self) -> int:
        return int(self.get("offset.flush.interval.ms"))

    @property
    def offset_flush_timeout_ms(self) -> int:
        return int(self.get("offset.flush.timeout.ms"))

    @property
    def task_shutdown_graceful_timeout_ms(self) -> int:
        return int(self.get("task.shutdown.graceful.timeout.ms"))

    def converter(self, kind: str) -> str:
        """The class name of the ``key``, ``value`` or ``header`` converter."""
        return str(self.get(f"{kind}.converter"))

    def converter_version(self, kind: str) -> str | None:
        """The requested version (range) of the ``key``, ``value`` or ``header`` converter."""
        return self.get(f"{kind}.converter.plugin.version")

    @property
    def override_policy(self) -> OverridePolicy:
        return override_policy(
            self.get("connector.client.config.override.policy"),
            self.get("connector.client.config.override.allowlist") or [],
            self.get(ALLOWED_OAUTH_URLS) or [],
        )

    @property
    def topic_creation_enable(self) -> bool:
        return bool(self.get("topic.creation.enable"))

    @property
    def transforms_columns_enable(self) -> bool:
        return bool(self.get("transforms.columns.enable"))

    @property
    def topic_tracking_enable(self) -> bool:
        return bool(self.get("topic.tracking.enable"))

    @property
    def status_retry_policy(self) -> RetryPolicy:
        return RetryPolicy.from_config(self.get)

    @property
    def topic_tracking_allow_reset(self) -> bool:
        return bool(self.get("topic.tracking.allow.reset"))

    def prefixed(self, prefix: str) -> dict[str, str]:
        """Every raw key starting with ``prefix``, with the prefix stripped."""
        return prefixed(self.raw, prefix)

    def spark_conf(self) -> dict[str, str]:
        """The ``spark.*`` keys, prefix kept, with ``spark.master`` defaulting to local[*]."""
        conf = {"spark.master": DEFAULT_SPARK_MASTER}
        conf.update({k: v for k, v in self.raw.items() if k.startswith("spark.")})
        return conf

    @property
    def listeners(self) -> list[str]:
        """The ``listeners`` entries as configured."""
        return list(self.get("listeners"))

    def parsed_listeners(self) -> list[Listener]:
        parsed = (parse_listener(text) for text in self.listeners)
        return [listener for listener in parsed if listener is not None]

    def rest_security(self) -> RestSecurity:
        """The REST edge's settings; ConfigError naming the key if a file cannot be read."""
        https = any(listener.scheme == "https" for listener in self.parsed_listeners())
        return rest_security(self.raw, self.get, https)

    def listener_urls(self) -> list[str]:
        """The listeners normalised as ``scheme://host:port``."""
        return [listener.url for listener in self.parsed_listeners()]

    def worker_id(self, bound_host: str, bound_port: int) -> str:
        """``host:port``: advertised host/port, else the first listener's, else what was bound."""
        listener = self.parsed_listeners()[0]
        host = self.rest_advertised_host_name or listener.written_host or bound_host
        port = self.rest_advertised_port
        if port is None:
            port = listener.port or bound_port
        return f"{host}:{port}"


def written_list(props: Mapping[str, str], key: str) -> list[str]:
    """A LIST key as written, read before the rest of the worker config: ``plugin.path``,
    ``plugin.modules`` and ``config.providers`` are needed to resolve the other keys'
    provider references (KIP-421)."""
    return list(parse_value(WORKER_CONFIG_DEF.keys[key], props.get(key)) or [])


def plugin_path_of(props: Mapping[str, str]) -> list[str]:
    return written_list(props, "plugin.path")


def plugin_modules_of(props: Mapping[str, str]) -> list[str]:
    return written_list(props, "plugin.modules")


def _parse_worker(props: Mapping[str, str]) -> dict[str, Any]:
    values = WORKER_CONFIG_DEF.validate(props)
    embedded = values["embedded.broker.enable"].value is True
    problems: list[str] = []
    errors: dict[str, list[str]] = {}
    for name, cv in values.items():
        if not cv.errors:
            continue
        if name == "bootstrap.servers" and embedded and "bootstrap.servers" not in props:
            continue
        problems.append(cv.errors[0])  # a failed parse also fails the validator: report it once
        errors[name] = cv.errors
    _check_backoff_bounds(values, problems, errors)
    if problems:
        raise ConfigError("\n".join(problems), errors)
    return {name: cv.value for name, cv in values.items()}


def _check_backoff_bounds(
    values: Mapping[str, Any], problems: list[str], errors: dict[str, list[str]]
) -> None:
    """``status.storage.retry.initial.backoff.ms`` may not exceed ``...max.backoff.ms``."""
    initial, maximum = (
        values[STATUS_RETRY + "initial.backoff.ms"],
        values[STATUS_RETRY + "max.backoff.ms"],
    )
    if initial.errors or maximum.errors or initial.value <= maximum.value:
        return
    key = STATUS_RETRY + "initial.backoff.ms"
    message = invalid(
        key, initial.value, f"Must not exceed {STATUS_RETRY}max.backoff.ms ({maximum.value})"
    )
    problems.append(message)
    errors[key] = [message]


def worker_config_markdown() -> str:
    """A Markdown table of every worker key (key, type, default, description), then the prefixes."""
    rows = ["| key | type | default | description |", "|---|---|---|---|"]
    for key in WORKER_CONFIG_DEF.keys.values():
        if key.required:
            default = "*required*"
        else:
            text = format_value(key.type, key.default)
            default = "*unset*" if text is None else f"`{text}`" if text else '`""`'
        rows.append(f"| `{key.name}` | {key.type.value} | {default} | {key.doc} |")
    for prefix, doc in PASSTHROUGH_PREFIXES.items():
        rows.append(f"| `{prefix}*` | prefix | | {doc} |")
    return "\n".join(rows) + "\n"


__all__ = [
    "DEFAULT_LISTENER",
    "JSON_CONVERTER",
    "PASSTHROUGH_PREFIXES",
    "REPLACED_KAFKA_KEYS",
    "SIMPLE_HEADER_CONVERTER",
    "STATUS_RETRY",
    "WORKER_CONFIG_DEF",
    "Listener",
    "ReplacedKey",
    "WorkerConfig",
    "listener_of",
    "optional",
    "parse_listener",
    "plugin_modules_of",
    "plugin_path_of",
    "replaced_key_warnings",
    "worker_config_markdown",
    "written_list",
]
