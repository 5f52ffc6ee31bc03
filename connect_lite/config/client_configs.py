"""Kafka's client configs (ProducerConfig, ConsumerConfig, AdminClientConfig): the type and
validator of each key, to check connector client overrides and the worker's client keys.

Kafka's herder parses a connector's ``producer.override.*``, ``consumer.override.*`` and
``admin.override.*`` values by the client's ConfigDef types when it validates; connect-lite
also runs each key's validator (``max.poll.records`` is at least 1), then asks the client
library (librdkafka, through a :class:`NativeCheck` from ``connect_lite.kafka``) whether it
takes the value, so that a config no client could run is refused when it is written.

The table follows Apache Kafka trunk of 2026-08 (4.x): keys, types and validators, not docs
or defaults. CLASS keys are read as strings: they name Java classes, which connect-lite never
loads (serializers, partitioners and interceptors are not used; see ``kafka/clients.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol

from connect_lite.api.config import (
    ConfigKey,
    Range,
    Type,
    Validator,
    ValidString,
    invalid,
    parse_value,
)
from connect_lite.config.override_policy import CLIENT_PASSWORD_KEYS

INT_MAX = 2**31 - 1


class NativeCheck(Protocol):
    """Whether the client library takes ``value`` for the Java-named client key ``key``:
    None, or the library's reason for refusing it (which may quote the value)."""

    def __call__(self, key: str, value: str) -> str | None: ...


def _list(allow_empty: bool) -> Validator:
    """Kafka's ``ValidList.anyNonDuplicateValues(allow_empty, false)``."""

    def check(name: str, value: Any) -> str | None:
        if not allow_empty and not value:
            return (
                f"Configuration '{name}' must not be empty. Valid values include: "
                "any non-empty value"
            )
        if len(set(value)) != len(value):
            return f"Configuration '{name}' values must not be duplicated."
        if any(item == "" for item in value):
            return f"Configuration '{name}' values must not be empty."
        return None

    return check


def _non_empty_string(name: str, value: Any) -> str | None:
    """Kafka's ``NonEmptyString`` (an unset value is fine)."""
    return invalid(name, value, "String must be non-empty") if value == "" else None


_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?[0-9]+)D)?"
    r"(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?",
    re.IGNORECASE,
)


def _iso_duration_seconds(text: str) -> float | None:
    """Seconds of an ISO-8601 duration as Java's ``Duration.parse`` reads it, or None."""
    match = _DURATION.fullmatch(text)
    if match is None:
        return None
    sign, days, time_part, hours, minutes, seconds, fraction = match.groups()
    if days is None and time_part is None:
        return None  # "P": no part at all
    if time_part is not None and hours is None and minutes is None and seconds is None:
        return None  # "P1DT": a T needs a part after it
    part_seconds = float(f"{seconds or 0}.{fraction or 0}")  # "-1.5S": both negative
    whole = int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60
    total = whole + part_seconds
    return -total if sign == "-" else total


def _auto_offset_reset(name: str, value: Any) -> str | None:
    """Kafka's ``AutoOffsetResetStrategy.Validator`` (KIP-1106's ``by_duration:<ISO-8601>``)."""
    text = "" if value is None else str(value)
    if text in ("latest", "earliest", "none"):
        return None
    if text.startswith("by_duration:"):
        seconds = _iso_duration_seconds(text[len("by_duration:") :])
        if seconds is not None and seconds >= 0:
            return None
    return invalid(
        name,
        value,
        f"Invalid value `{text}` for configuration {name}. The value must be either "
        "'earliest', 'latest', 'none' or of the format 'by_duration:<PnDTnHnMn.nS.>'.",
    )


def _either(first: str, second: str, ignore_case: bool = False) -> Validator:
    """Kafka's share-consumer mode validators: one of two names."""

    def check(name: str, value: Any) -> str | None:
        text = "" if value is None else str(value)
        given = text.lower() if ignore_case else text
        if given in (first, second):
            return None
        return invalid(
            name,
            value,
            f"Invalid value `{text}` for configuration {name}. The value must either be "
            f"'{first}' or '{second}'.",
        )

    return check


def _gzip_level(name: str, value: Any) -> str | None:
    """Kafka's GZIP level validator: 1 to 9, or -1 (zlib's default)."""
    if value is None:
        return invalid(name, None, "Value must be non-null")
    if value > 9 or (value < 1 and value != -1):
        return invalid(name, value, "Value must be between 1 and 9 or equal to -1")
    return None


def _keys(*specs: tuple[str, Type] | tuple[str, Type, Validator]) -> dict[str, ConfigKey]:
    keys = {}
    for spec in specs:
        name, type_ = spec[0], spec[1]
        keys[name] = ConfigKey(name, type_, validator=spec[2] if len(spec) > 2 else None)
    return keys


_AT_LEAST_0 = Range.at_least(0)
_BUFFER = Range.at_least(-1)  # CommonClientConfigs.SEND/RECEIVE_BUFFER_LOWER_BOUND

_SSL = _keys(
    ("ssl.protocol", Type.STRING),
    ("ssl.provider", Type.STRING),
    ("ssl.cipher.suites", Type.LIST, _list(True)),
    ("ssl.enabled.protocols", Type.LIST, _list(True)),
    ("ssl.keystore.type", Type.STRING),
    ("ssl.keystore.location", Type.STRING),
    ("ssl.keystore.password", Type.PASSWORD),
    ("ssl.key.password", Type.PASSWORD),
    ("ssl.keystore.key", Type.PASSWORD),
    ("ssl.keystore.certificate.chain", Type.PASSWORD),
    ("ssl.truststore.certificates", Type.PASSWORD),
    ("ssl.truststore.type", Type.STRING),
    ("ssl.truststore.location", Type.STRING),
    ("ssl.truststore.password", Type.PASSWORD),
    ("ssl.keymanager.algorithm", Type.STRING),
    ("ssl.trustmanager.algorithm", Type.STRING),
    ("ssl.endpoint.identification.algorithm", Type.STRING),
    ("ssl.secure.random.implementation", Type.STRING),
    ("ssl.engine.factory.class", Type.CLASS),
)

_OAUTH = "sasl.oauthbearer."
_SASL = _keys(
    ("sasl.kerberos.service.name", Type.STRING),
    ("sasl.kerberos.kinit.cmd", Type.STRING),
    ("sasl.kerberos.ticket.renew.window.factor", Type.DOUBLE),
    ("sasl.kerberos.ticket.renew.jitter", Type.DOUBLE),
    ("sasl.kerberos.min.time.before.relogin", Type.LONG),
    ("sasl.login.refresh.window.factor", Type.DOUBLE, Range.between(0.5, 1.0)),
    ("sasl.login.refresh.window.jitter", Type.DOUBLE, Range.between(0.0, 0.25)),
    ("sasl.login.refresh.min.period.seconds", Type.SHORT, Range.between(0, 900)),
    ("sasl.login.refresh.buffer.seconds", Type.SHORT, Range.between(0, 3600)),
    ("sasl.mechanism", Type.STRING),
    ("sasl.jaas.config", Type.PASSWORD),
    ("sasl.client.callback.handler.class", Type.CLASS),
    ("sasl.login.callback.handler.class", Type.CLASS),
    ("sasl.login.class", Type.CLASS),
    ("sasl.login.connect.timeout.ms", Type.INT),
    ("sasl.login.read.timeout.ms", Type.INT),
    ("sasl.login.retry.backoff.max.ms", Type.LONG),
    ("sasl.login.retry.backoff.ms", Type.LONG),
    (_OAUTH + "jwt.retriever.class", Type.CLASS),
    (_OAUTH + "jwt.validator.class", Type.CLASS),
    (_OAUTH + "scope", Type.STRING),
    (_OAUTH + "client.credentials.client.id", Type.STRING),
    (_OAUTH + "client.credentials.client.secret", Type.PASSWORD),
    (_OAUTH + "assertion.algorithm", Type.STRING, ValidString.in_ignore_case("ES256", "RS256")),
    (_OAUTH + "assertion.claim.aud", Type.STRING),
    (_OAUTH + "assertion.claim.exp.seconds", Type.INT, Range.between(0, 86400)),
    (_OAUTH + "assertion.claim.iss", Type.STRING),
    (_OAUTH + "assertion.claim.jti.include", Type.BOOLEAN),
    (_OAUTH + "assertion.claim.nbf.seconds", Type.INT, Range.between(0, 3600)),
    (_OAUTH + "assertion.claim.sub", Type.STRING),
    (_OAUTH + "assertion.file", Type.STRING),
    (_OAUTH + "assertion.private.key.file", Type.STRING),
    (_OAUTH + "assertion.private.key.passphrase", Type.PASSWORD),
    (_OAUTH + "assertion.template.file", Type.STRING),
    (_OAUTH + "scope.claim.name", Type.STRING),
    (_OAUTH + "sub.claim.name", Type.STRING),
    (_OAUTH + "token.endpoint.url", Type.STRING),
    (_OAUTH + "jwks.endpoint.url", Type.STRING),
    (_OAUTH + "jwks.endpoint.refresh.ms", Type.LONG),
    (_OAUTH + "jwks.endpoint.retry.backoff.max.ms", Type.LONG),
    (_OAUTH + "jwks.endpoint.retry.backoff.ms", Type.LONG),
    (_OAUTH + "clock.skew.seconds", Type.INT),
    (_OAUTH + "allow.unverified.audience", Type.BOOLEAN),
    (_OAUTH + "expected.audience", Type.LIST, _list(True)),
    (_OAUTH + "allow.unverified.issuer", Type.BOOLEAN),
    (_OAUTH + "expected.issuer", Type.STRING),
    (_OAUTH + "header.urlencode", Type.BOOLEAN),
)

_COMMON = (
    _keys(
        ("client.id", Type.STRING),
        (
            "client.dns.lookup",
            Type.STRING,
            ValidString.in_("use_all_dns_ips", "resolve_canonical_bootstrap_servers_only"),
        ),
        ("bootstrap.resolve.timeout.ms", Type.LONG, _AT_LEAST_0),
        ("metadata.max.age.ms", Type.LONG, _AT_LEAST_0),
        ("send.buffer.bytes", Type.INT, _BUFFER),
        ("receive.buffer.bytes", Type.INT, _BUFFER),
        ("reconnect.backoff.ms", Type.LONG, _AT_LEAST_0),
        ("reconnect.backoff.max.ms", Type.LONG, _AT_LEAST_0),
        ("retry.backoff.ms", Type.LONG, _AT_LEAST_0),
        ("retry.backoff.max.ms", Type.LONG, _AT_LEAST_0),
        ("enable.metrics.push", Type.BOOLEAN),
        ("request.timeout.ms", Type.INT, _AT_LEAST_0),
        ("socket.connection.setup.timeout.ms", Type.LONG),
        ("socket.connection.setup.timeout.max.ms", Type.LONG),
        ("connections.max.idle.ms", Type.LONG),
        ("metrics.sample.window.ms", Type.LONG, _AT_LEAST_0),
        ("metrics.num.samples", Type.INT, Range.at_least(1)),
        ("metrics.recording.level", Type.STRING, ValidString.in_("INFO", "DEBUG", "TRACE")),
        ("metric.reporters", Type.LIST, _list(True)),
        ("security.providers", Type.STRING),
        (
            "security.protocol",
            Type.STRING,
            ValidString.in_ignore_case("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
        ),
        (
            "metadata.recovery.strategy",
            Type.STRING,
            ValidString.in_ignore_case("NONE", "REBOOTSTRAP"),
        ),
        ("metadata.recovery.rebootstrap.trigger.ms", Type.LONG, _AT_LEAST_0),
        ("metadata.cluster.check.enable", Type.BOOLEAN),
        ("config.providers", Type.LIST, _list(True)),
    )
    | _SSL
    | _SASL
)
"""Keys every client has (CommonClientConfigs, SslConfigs, SaslConfigs)."""


_PRODUCER = (
    _keys(
        ("bootstrap.servers", Type.LIST, _list(False)),
        ("buffer.memory", Type.LONG, _AT_LEAST_0),
        (
            "buffer.memory.allocation.strategy",
            Type.STRING,
            ValidString.in_ignore_case("FULL", "INCREMENTAL"),
        ),
        ("retries", Type.INT, Range.between(0, INT_MAX)),
        ("acks", Type.STRING, ValidString.in_("all", "-1", "0", "1")),
        ("compression.type", Type.STRING, ValidString.in_("none", "gzip", "snappy", "lz4", "zstd")),
        ("compression.gzip.level", Type.INT, _gzip_level),
        ("compression.lz4.level", Type.INT, Range.between(1, 17)),
        ("compression.zstd.level", Type.INT, Range.between(-131072, 22)),
        ("batch.size", Type.INT, _AT_LEAST_0),
        ("partitioner.adaptive.partitioning.enable", Type.BOOLEAN),
        ("partitioner.availability.timeout.ms", Type.LONG, _AT_LEAST_0),
        ("partitioner.ignore.keys", Type.BOOLEAN),
        ("partitioner.rack.aware", Type.BOOLEAN),
        ("linger.ms", Type.LONG, _AT_LEAST_0),
        ("delivery.timeout.ms", Type.INT, _AT_LEAST_0),
        ("client.rack", Type.STRING),
        ("max.request.size", Type.INT, _AT_LEAST_0),
        ("max.block.ms", Type.LONG, _AT_LEAST_0),
        ("metadata.max.idle.ms", Type.LONG, Range.at_least(5000)),
        ("max.in.flight.requests.per.connection", Type.INT, Range.at_least(1)),
        ("key.serializer", Type.CLASS),
        ("value.serializer", Type.CLASS),
        ("partitioner.class", Type.CLASS),
        ("interceptor.classes", Type.LIST, _list(True)),
        ("enable.idempotence", Type.BOOLEAN),
        ("transaction.timeout.ms", Type.INT),
        ("transactional.id", Type.STRING, _non_empty_string),
        ("transaction.two.phase.commit.enable", Type.BOOLEAN),
    )
    | _COMMON
)

_CONSUMER = (
    _keys(
        ("bootstrap.servers", Type.LIST, _list(False)),
        ("group.id", Type.STRING),
        ("group.instance.id", Type.STRING, _non_empty_string),
        ("session.timeout.ms", Type.INT),
        ("heartbeat.interval.ms", Type.INT),
        ("partition.assignment.strategy", Type.LIST, _list(True)),
        ("enable.auto.commit", Type.BOOLEAN),
        ("auto.commit.interval.ms", Type.INT, _AT_LEAST_0),
        ("client.rack", Type.STRING),
        ("max.partition.fetch.bytes", Type.INT, _AT_LEAST_0),
        ("fetch.min.bytes", Type.INT, _AT_LEAST_0),
        ("fetch.max.bytes", Type.INT, _AT_LEAST_0),
        ("fetch.max.wait.ms", Type.INT, _AT_LEAST_0),
        ("auto.offset.reset", Type.STRING, _auto_offset_reset),
        ("check.crcs", Type.BOOLEAN),
        ("key.deserializer", Type.CLASS),
        ("value.deserializer", Type.CLASS),
        ("default.api.timeout.ms", Type.INT, _AT_LEAST_0),
        ("interceptor.classes", Type.LIST, _list(True)),
        ("max.poll.records", Type.INT, Range.at_least(1)),
        ("max.poll.interval.ms", Type.INT, Range.at_least(1)),
        ("exclude.internal.topics", Type.BOOLEAN),
        ("internal.throw.on.fetch.stable.offset.unsupported", Type.BOOLEAN),
        ("isolation.level", Type.STRING, ValidString.in_("read_committed", "read_uncommitted")),
        ("allow.auto.create.topics", Type.BOOLEAN),
        ("group.protocol", Type.STRING, ValidString.in_ignore_case("CLASSIC", "CONSUMER")),
        ("group.remote.assignor", Type.STRING),
        ("share.acknowledgement.mode", Type.STRING, _either("implicit", "explicit")),
        ("share.acquire.mode", Type.STRING, _either("batch_optimized", "record_limit", True)),
    )
    | _COMMON
)

_ADMIN = (
    _keys(
        ("bootstrap.servers", Type.LIST, _list(True)),
        ("bootstrap.controllers", Type.LIST, _list(True)),
        ("retries", Type.INT, Range.between(0, INT_MAX)),
        ("default.api.timeout.ms", Type.INT, _AT_LEAST_0),
    )
    | _COMMON
)

CLIENT_KEYS: Mapping[str, Mapping[str, ConfigKey]] = {
    "producer": _PRODUCER,
    "consumer": _CONSUMER,
    "admin": _ADMIN,
}
"""Each client's keys (``producer``, ``consumer``, ``admin``), by Java name."""


def client_key(client: str, key: str) -> ConfigKey | None:
    """The declaration of a Java client key, or None for a key the Java client lacks."""
    return CLIENT_KEYS[client].get(key)


WORKER_CLIENT_PREFIXES = {"producer.": "producer", "consumer.": "consumer", "admin.": "admin"}
"""The worker's own client keys, by prefix: its ``producer.*``, ``consumer.*``, ``admin.*``."""


def check_client_value(
    client: str, key: str, raw: Any, native: NativeCheck | None = None
) -> tuple[Any, str | None]:
    """``(parsed value, problem)`` for one client key (its override prefix stripped).

    First Kafka's parse by the key's type, then its validator, then, for a key that passes
    both, the client library through ``native``.
    The problem is Kafka's ``Invalid value <v> for configuration <key>: ...`` text, naming
    the unprefixed key as Kafka does; a secret's value is never shown in it.
    """
    definition = client_key(client, key)
    value = raw
    if definition is not None:
        try:
            value = parse_value(definition, raw)
        except ValueError as exc:
            return raw, str(exc)
        problem = definition.validator(key, value) if definition.validator else None
        if problem:
            return value, problem
    if native is None or raw is None:
        return value, None
    reason = native(key, str(raw))
    if reason is None:
        return value, None
    if is_secret(client, key):
        return value, invalid(key, "[hidden]", "the client library refuses it")
    # librdkafka quotes the value ("Invalid value "x" for ..."): it is shown once, in front
    reason = reason.replace(f'"{raw}" ', "")
    return value, invalid(key, raw, f"librdkafka refuses it: {reason}")


def is_secret(client: str, key: str) -> bool:
    """A PASSWORD key of the Java client, or a librdkafka key that holds a secret."""
    definition = client_key(client, key)
    return key in CLIENT_PASSWORD_KEYS or (
        definition is not None and definition.type is Type.PASSWORD
    )


def client_key_problems(
    props: Mapping[str, str], prefixes: Mapping[str, str], native: NativeCheck | None = None
) -> list[str]:
    """The problems of the client keys in ``props``, each naming the key with its prefix:
    ``prefixes`` maps a prefix (``producer.``, ``consumer.override.``) to its client."""
    problems = []
    for prefix, client in prefixes.items():
        for key, raw in props.items():
            if not key.startswith(prefix) or raw is None:
                continue
            _, problem = check_client_value(client, key[len(prefix) :], raw, native)
            if problem is not None:
                problems.append(_prefixed_key(problem, key[len(prefix) :], key))
    return problems


def _prefixed_key(problem: str, key: str, full: str) -> str:
    for form in (" for configuration {}", "Configuration '{}'"):
        problem = problem.replace(form.format(key), form.format(full), 1)
    return problem


__all__ = [
    "CLIENT_KEYS",
    "WORKER_CLIENT_PREFIXES",
    "NativeCheck",
    "check_client_value",
    "client_key",
    "client_key_problems",
    "is_secret",
]
