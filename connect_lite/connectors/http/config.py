"""The HTTP sink's configuration: Confluent's HttpSinkConnector keys (CP 1.7), their defaults,
and the keys connect-lite refuses (a validate error that names the key)."""

from __future__ import annotations

import functools
import logging
import re
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api import ConfigDef, ConfigError, Importance, Range, Type, ValidString
from connect_lite.api.tls import TlsStores, client_context

log = logging.getLogger(__name__)

URL = "http.api.url"
DEFAULT_RETRY_CODES = "408,429,500-"
"""Confluent's default is ``400-``: every 4xx too. Here a 4xx other than 408 and 429 is the
record's fault, not the server's (docs/http.md says so)."""


def config_def() -> ConfigDef:
    d = ConfigDef()
    d.define(
        URL,
        Type.STRING,
        importance=Importance.HIGH,
        doc="HTTP API URL; ${topic} and ${key} are replaced by the record's topic and "
        "key (URL-encoded).",
    )
    d.define(
        "request.method",
        Type.STRING,
        "POST",
        ValidString.in_ignore_case("POST", "PUT", "PATCH"),
        Importance.HIGH,
        "HTTP request method for the records' batches.",
    )
    d.define(
        "headers",
        Type.STRING,
        "",
        None,
        Importance.MEDIUM,
        "Headers of every request, Name:Value, separated by header.separator.",
    )
    d.define(
        "header.separator",
        Type.STRING,
        "|",
        None,
        Importance.LOW,
        "Separator of the entries of headers.",
    )
    d.define(
        "sensitive.headers",
        Type.PASSWORD,
        None,
        None,
        Importance.MEDIUM,
        "Headers like 'headers', kept secret (Confluent Cloud's key).",
    )
    d.define(
        "request.body.format",
        Type.STRING,
        "string",
        ValidString.in_ignore_case("string", "json"),
        Importance.MEDIUM,
        "Each record's value in the body as its string form or as JSON.",
    )
    d.define(
        "batch.max.size",
        Type.INT,
        1,
        Range.at_least(1),
        Importance.MEDIUM,
        "The most records in one request.",
    )
    d.define(
        "batch.prefix", Type.STRING, "", None, Importance.LOW, "Text before a batch's records."
    )
    d.define("batch.suffix", Type.STRING, "", None, Importance.LOW, "Text after a batch's records.")
    d.define(
        "batch.separator", Type.STRING, ",", None, Importance.LOW, "Text between a batch's records."
    )
    d.define(
        "batch.seperator",
        Type.STRING,
        None,
        None,
        Importance.LOW,
        "Confluent's misspelled alias of batch.separator.",
    )
    d.define(
        "batch.json.as.array",
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "With request.body.format=json, send a batch as a JSON array.",
    )
    d.define(
        "batch.key.pattern",
        Type.STRING,
        "someKey",
        None,
        Importance.LOW,
        "Records go into one batch only while this pattern (with ${topic} and ${key}) "
        "gives them the same text.",
    )
    d.define(
        "json.decimal.format",
        Type.STRING,
        "BASE64",
        ValidString.in_ignore_case("BASE64", "NUMERIC"),
        Importance.LOW,
        "How Decimal values are written in JSON bodies.",
    )
    d.define(
        "behavior.on.null.values",
        Type.STRING,
        "ignore",
        ValidString.in_ignore_case("ignore", "delete", "log", "fail"),
        Importance.LOW,
        "What a record with a null value does: nothing, a DELETE request, a log line, "
        "or a failure.",
    )
    d.define(
        "behavior.on.error",
        Type.STRING,
        "fail",
        ValidString.in_ignore_case("fail", "log", "ignore"),
        Importance.LOW,
        "What a request refused for good does when errors.tolerance is none: fail the "
        "task, log and go on, or go on.",
    )
    d.define(
        "max.retries",
        Type.INT,
        5,
        Range.at_least(0),
        Importance.MEDIUM,
        "Retries of a request that failed with a listed status or an I/O error.",
    )
    d.define(
        "retry.backoff.ms",
        Type.INT,
        3000,
        Range.at_least(0),
        Importance.MEDIUM,
        "The wait before a retry (a Retry-After header of the answer wins).",
    )
    d.define(
        "retry.backoff.policy",
        Type.STRING,
        "CONSTANT_VALUE",
        ValidString.in_ignore_case("CONSTANT_VALUE", "EXPONENTIAL_WITH_JITTER"),
        Importance.LOW,
        "Constant waits, or doubling ones with jitter.",
    )
    d.define(
        "retry.on.status.codes",
        Type.STRING,
        DEFAULT_RETRY_CODES,
        None,
        Importance.MEDIUM,
        "Statuses that are retried: codes and ranges, e.g. 408,429,500- or 500-599.",
    )
    d.define(
        "http.connect.timeout.ms",
        Type.INT,
        30000,
        Range.at_least(1),
        Importance.LOW,
        "How long a connection may take.",
    )
    d.define(
        "http.request.timeout.ms",
        Type.INT,
        30000,
        Range.at_least(1),
        Importance.LOW,
        "How long an answer may take.",
    )
    d.define(
        "auth.type",
        Type.STRING,
        "NONE",
        ValidString.in_ignore_case("NONE", "BASIC", "OAUTH2"),
        Importance.HIGH,
        "NONE, BASIC, or OAUTH2 (the client credentials grant).",
    )
    d.define(
        "connection.user",
        Type.STRING,
        None,
        None,
        Importance.HIGH,
        "The user of BASIC authentication.",
    )
    d.define(
        "connection.password",
        Type.PASSWORD,
        None,
        None,
        Importance.HIGH,
        "The password of BASIC authentication.",
    )
    d.define(
        "oauth2.token.url",
        Type.STRING,
        None,
        None,
        Importance.HIGH,
        "The OAuth2 token endpoint (client credentials).",
    )
    d.define("oauth2.client.id", Type.STRING, None, None, Importance.HIGH, "The OAuth2 client id.")
    d.define(
        "oauth2.client.secret",
        Type.PASSWORD,
        None,
        None,
        Importance.HIGH,
        "The OAuth2 client secret.",
    )
    d.define(
        "oauth2.token.property",
        Type.STRING,
        "access_token",
        None,
        Importance.LOW,
        "The property of the token endpoint's JSON answer that holds the token.",
    )
    d.define(
        "oauth2.client.auth.mode",
        Type.STRING,
        "header",
        ValidString.in_ignore_case("header", "url"),
        Importance.LOW,
        "Client id and secret as a Basic Authorization header, or in the form body.",
    )
    d.define(
        "oauth2.client.scope",
        Type.STRING,
        "any",
        None,
        Importance.LOW,
        "The scope asked for (empty: none).",
    )
    d.define(
        "oauth2.client.headers",
        Type.STRING,
        "",
        None,
        Importance.LOW,
        "Headers of the token request, Name:Value, separated by oauth2.client.header.separator.",
    )
    d.define(
        "oauth2.client.header.separator",
        Type.STRING,
        "|",
        None,
        Importance.LOW,
        "Separator of the entries of oauth2.client.headers.",
    )
    _tls_keys(d)
    _reporter_keys(d)
    d.define(
        "report.errors.as",
        Type.STRING,
        "error_string",
        ValidString.in_ignore_case("error_string", "http_response"),
        Importance.LOW,
        "An error record's value: Confluent's error text, or the answer's content.",
    )
    d.define(
        "deletes.send.in.order",
        Type.BOOLEAN,
        False,
        None,
        Importance.LOW,
        "Accepted: connect-lite always sends deletes in order with the other records.",
    )
    return d  # fmt: skip


_TLS = "https.ssl."
_TLS_IGNORED = (
    "provider", "engine.factory.class", "keymanager.algorithm", "trustmanager.algorithm",
    "secure.random.implementation",
)  # fmt: skip
"""Kafka's SSL keys that name parts of Java's TLS: accepted and not used (Python's ssl)."""


def _tls_keys(d: ConfigDef) -> None:
    """Kafka's SSL keys with the ``https.`` prefix, as Confluent's HTTP sink has them."""
    for part, kind, doc in (
        (
            "truststore.location",
            Type.STRING,
            "The certificates to trust (PEM or PKCS12); else the system's.",
        ),
        ("truststore.password", Type.PASSWORD, "The PKCS12 truststore's password."),
        (
            "truststore.type",
            Type.STRING,
            "PEM, PKCS12, or JKS (Kafka's default; the file "
            "tells PEM from PKCS12, and a real JKS is refused).",
        ),
        (
            "keystore.location",
            Type.STRING,
            "The client's key and certificate chain, for servers that ask for one (PEM or PKCS12).",
        ),
        ("keystore.password", Type.PASSWORD, "The keystore's password."),
        ("keystore.type", Type.STRING, "As https.ssl.truststore.type."),
        ("key.password", Type.PASSWORD, "The private key's password."),
    ):
        d.define(_TLS + part, kind, None, None, Importance.MEDIUM, doc)
    d.define(_TLS + "protocol", Type.STRING, "TLSv1.3", None, Importance.LOW,
             "The lowest TLS version used: TLSv1.2 or TLSv1.3.")  # fmt: skip
    d.define(_TLS + "enabled.protocols", Type.LIST, "TLSv1.2,TLSv1.3", None, Importance.LOW,
             "The TLS versions allowed: the lowest listed is the least used.")  # fmt: skip
    d.define(_TLS + "endpoint.identification.algorithm", Type.STRING, "https", None,
             Importance.LOW, "https checks the server's name against its certificate; empty "
                             "does not.")  # fmt: skip
    d.define("https.host.verifier.enabled", Type.BOOLEAN, True, None, Importance.LOW,
             "Confluent Cloud's name for the server name check.")  # fmt: skip
    for part in _TLS_IGNORED:
        d.define(_TLS + part, Type.STRING, None, None, Importance.LOW,
                 "Names a part of Java's TLS: accepted, not used.")  # fmt: skip


def tls_context(values: Mapping[str, Any]) -> Callable[[], ssl.SSLContext]:
    """The HTTPS client's context from the ``https.ssl.*`` values (ConfigError naming the key
    when a store does not load)."""

    def secret(key: str) -> str | None:
        value = values.get(key)
        return getattr(value, "value", value) or None

    stores = TlsStores(
        keystore_location=values.get(_TLS + "keystore.location") or None,
        keystore_password=secret(_TLS + "keystore.password"),
        key_password=secret(_TLS + "key.password"),
        truststore_location=values.get(_TLS + "truststore.location") or None,
        truststore_password=secret(_TLS + "truststore.password"),
        keystore_type=values.get(_TLS + "keystore.type"),
        truststore_type=values.get(_TLS + "truststore.type"),
        prefix="https.",  # Kafka's ssl.* keys, as https.ssl.*
    )
    # connect-lite never speaks below TLS 1.2: older versions listed are passed over.
    enabled = [p for p in values.get(_TLS + "enabled.protocols") or []
               if p.strip().upper() in ("TLSV1.2", "TLSV1.3")]  # fmt: skip
    lowest = min(enabled, key=str.upper) if enabled else values.get(_TLS + "protocol")
    check = (bool(values.get(_TLS + "endpoint.identification.algorithm"))
             and values.get("https.host.verifier.enabled") is not False)  # fmt: skip
    return functools.partial(client_context, stores, check_hostname=check,
                             minimum_version=lowest)  # fmt: skip


REPORTER = "reporter."


def _reporter_keys(d: ConfigDef) -> None:
    """Confluent's reporter: a record per sink record on a result and an error topic."""
    d.define(REPORTER + "bootstrap.servers", Type.STRING, None, None, Importance.MEDIUM,
             "The Kafka of the result and error topics; unset: no reporter.")  # fmt: skip
    for kind, what in (("result", "success"), ("error", "error")):
        prefix = f"{REPORTER}{kind}.topic."
        d.define(prefix + "name", Type.STRING, f"${{connector}}-{what}", None,
                 Importance.MEDIUM, f"The {kind} topic (${{connector}}: the connector's name); "
                                    "empty: none.")  # fmt: skip
        d.define(prefix + "replication.factor", Type.INT, 3, Range.at_least(-1), Importance.LOW,
                 "Its replication factor when the sink creates it.")  # fmt: skip
        d.define(prefix + "partitions", Type.INT, 1, Range.at_least(1), Importance.LOW,
                 "Its partitions when the sink creates it.")  # fmt: skip
        for side in ("key", "value"):
            d.define(f"{prefix}{side}.format", Type.STRING, "json",
                     ValidString.in_ignore_case("json", "string"), Importance.LOW,
                     f"The {side}'s form: a JSON string or the text itself.")  # fmt: skip
            d.define(f"{prefix}{side}.format.schemas.enable", Type.BOOLEAN, False, None,
                     Importance.LOW, "JSON with a schema: not supported (false only).")  # fmt: skip
            d.define(f"{prefix}{side}.format.schemas.cache.size", Type.INT, 128, None,
                     Importance.LOW, "Accepted: a text needs no schema cache.")  # fmt: skip
            d.define(f"{prefix}{side}.format.decimal.format", Type.STRING, "BASE64",
                     ValidString.in_ignore_case("BASE64", "NUMERIC"), Importance.LOW,
                     "Accepted: the records hold texts only.")  # fmt: skip


@dataclass(frozen=True)
class Reporter:
    """Where the reporter writes: topics with ``${connector}`` replaced (None: that one off)."""

    bootstrap_servers: str
    result_topic: str | None
    error_topic: str | None
    partitions: dict[str, int]
    replication: dict[str, int]
    json_values: dict[str, bool]
    errors_as_content: bool

    @staticmethod
    def of(values: Mapping[str, Any], connector: str) -> Reporter | None:
        servers = values.get(REPORTER + "bootstrap.servers")
        if not servers:
            return None
        topics: dict[str, str | None] = {}
        partitions, replication, json_values = {}, {}, {}
        for kind in ("result", "error"):
            prefix = f"{REPORTER}{kind}.topic."
            name = (values.get(prefix + "name") or "").replace("${connector}", connector)
            topics[kind] = name or None
            partitions[kind] = values[prefix + "partitions"]
            replication[kind] = values[prefix + "replication.factor"]
            json_values[kind] = values[prefix + "value.format"].lower() == "json"
        return Reporter(
            bootstrap_servers=servers,
            result_topic=topics["result"],
            error_topic=topics["error"],
            partitions=partitions,
            replication=replication,
            json_values=json_values,
            errors_as_content=values["report.errors.as"].lower() == "http_response",
        )


UNSUPPORTED_PREFIXES = (
    "oauth2.jwt.", "http.proxy.", "reporter.admin.", "reporter.producer.", "regex.",
    "connection.disallow.",
    "connection.allow.",
)  # fmt: skip
"""Confluent keys connect-lite does not build yet: set, they are validate errors."""
UNSUPPORTED = {"csfle.enabled": "false", "ssl.enabled": None}
UNSUPPORTED_TLS = ("https.ssl.truststore.certificates", "https.ssl.keystore.key",
                   "https.ssl.keystore.certificate.chain", "https.ssl.cipher.suites")  # fmt: skip
"""Store contents in the config itself, and Java's cipher names: not built yet."""
"""Keys refused unless they hold the value given (None: always accepted as a no-op)."""


def _refused(config: Mapping[str, str]) -> list[tuple[str, str]]:
    """The keys set that connect-lite does not build, with their errors."""
    refused = []
    for key, value in config.items():
        given = value not in ("", None)
        if given and (
            key.startswith(UNSUPPORTED_PREFIXES)
            or key in UNSUPPORTED_TLS
            or (
                key.endswith(".format.schemas.enable")
                and key.startswith(REPORTER)
                and str(value).strip().lower() != "false"
            )
        ):
            refused.append((key, f"connect-lite does not support {key} yet; remove it"))
        wanted = UNSUPPORTED.get(key)
        if wanted is not None and str(value).strip().lower() != wanted:
            refused.append((key, f"connect-lite does not support {key}={value}; remove it"))
    return refused


def cross_errors(values: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}

    def error(key: str, message: str) -> None:
        errors.setdefault(key, []).append(message)

    if not values.get(URL):
        error(URL, f'Missing required configuration "{URL}" which has no default value.')
    elif not str(values[URL]).lower().startswith(("http://", "https://")):
        error(URL, f"{URL} must be an http:// or https:// URL, not {values[URL]}")
    for key, message in _refused(config):
        error(key, message)
    if str(values.get("auth.type") or "").upper() == "OAUTH2":
        for key in ("oauth2.token.url", "oauth2.client.id", "oauth2.client.secret"):
            if not values.get(key):
                error(key, f"auth.type=OAUTH2 needs {key}")
    if str(values.get("auth.type") or "").upper() == "BASIC" and not values.get("connection.user"):
        error("connection.user", "auth.type=BASIC needs connection.user")
    try:
        status_codes(str(values.get("retry.on.status.codes") or ""))
    except ValueError as e:
        error("retry.on.status.codes", str(e))
    for key, separator in (
        ("headers", "header.separator"),
        ("oauth2.client.headers", "oauth2.client.header.separator"),
    ):
        try:
            header_pairs(str(values.get(key) or ""), str(values.get(separator) or "|"))
        except ValueError as e:
            error(key, str(e))
    try:
        tls_context(values)()  # the stores load and the protocols are known
    except ConfigError as e:
        for key, messages in e.errors.items():  # each names its https.ssl.* key
            errors.setdefault(key, []).extend(messages)
    fmt = str(values.get("request.body.format") or "").lower()
    if (
        fmt == "json"
        and not values.get("batch.json.as.array")
        and (values.get("batch.max.size") or 1) > 1
    ):
        error(
            "batch.json.as.array",
            "batch.json.as.array=false needs batch.max.size=1: a body holds one JSON value",
        )
    return errors  # fmt: skip


_CODES = re.compile(r"^(\d{3})(-(\d{3})?)?$")


def status_codes(text: str) -> list[tuple[int, int]]:
    """``retry.on.status.codes``: inclusive ranges of codes (``429``, ``500-599``, ``500-``)."""
    ranges = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        found = _CODES.match(part)
        if found is None:
            raise ValueError(f"Invalid status code or range in retry.on.status.codes: {part}")
        low = int(found.group(1))
        high = int(found.group(3)) if found.group(3) else (999 if found.group(2) else low)
        if high < low:
            raise ValueError(f"Invalid range in retry.on.status.codes: {part}")
        ranges.append((low, high))
    return ranges


def header_pairs(text: str, separator: str) -> list[tuple[str, str]]:
    """``headers``: ``Name:Value`` entries (split at the first colon, trimmed)."""
    pairs = []
    for entry in text.split(separator) if text else []:
        if not entry.strip():
            continue
        name, colon, value = entry.partition(":")
        if not colon or not name.strip():
            raise ValueError(f"Invalid header {entry!r}: expected Name:Value")
        pairs.append((name.strip(), value.strip()))
    return pairs


@dataclass(frozen=True)
class OAuth:
    token_url: str
    client_id: str
    secret: str
    token_property: str
    in_header: bool
    scope: str
    headers: tuple[tuple[str, str], ...]

    @staticmethod
    def of(values: Mapping[str, Any]) -> OAuth:
        secret = values["oauth2.client.secret"]
        separator = values["oauth2.client.header.separator"] or "|"
        return OAuth(
            token_url=values["oauth2.token.url"],
            client_id=values["oauth2.client.id"],
            secret=getattr(secret, "value", secret) or "",
            token_property=values["oauth2.token.property"] or "access_token",
            in_header=values["oauth2.client.auth.mode"].lower() == "header",
            scope=values["oauth2.client.scope"] or "",
            headers=tuple(header_pairs(values["oauth2.client.headers"] or "", separator)),
        )


@dataclass(frozen=True)
class Settings:
    url: str
    method: str
    headers: tuple[tuple[str, str], ...]
    json: bool
    batch_max: int
    prefix: str
    suffix: str
    separator: str
    as_array: bool
    batch_key: str
    numeric_decimals: bool
    on_null: str
    on_error: str
    max_retries: int
    backoff_ms: int
    exponential: bool
    retry_codes: tuple[tuple[int, int], ...]
    connect_timeout_s: float
    request_timeout_s: float
    user: str | None
    password: str | None
    oauth: OAuth | None
    tls: Callable[[], ssl.SSLContext]
    reporter: Reporter | None

    @staticmethod
    def parse(config: Mapping[str, str]) -> Settings:
        checked = config_def().validate(dict(config))
        values = {k: v.value for k, v in checked.items()}
        errors = {k: v.errors for k, v in checked.items() if v.errors}
        for key, messages in cross_errors(values, config).items():
            errors.setdefault(key, []).extend(messages)
        from connect_lite.connectors.jdbc.config import raise_errors  # the connectors' one

        raise_errors(errors)
        separator = values["header.separator"] or "|"
        headers = header_pairs(values["headers"] or "", separator)
        sensitive = values.get("sensitive.headers")
        if sensitive is not None:
            headers += header_pairs(getattr(sensitive, "value", sensitive) or "", separator)
        password = values.get("connection.password")
        basic = values["auth.type"].upper() == "BASIC"
        given_separator = config.get("batch.separator")
        return Settings(
            url=values[URL],
            method=values["request.method"].upper(),
            headers=tuple(headers),
            json=values["request.body.format"].lower() == "json",
            batch_max=values["batch.max.size"],
            prefix=values["batch.prefix"] or "",
            suffix=values["batch.suffix"] or "",
            separator=(given_separator if given_separator is not None
                       else values["batch.seperator"] or values["batch.separator"] or ""),
            as_array=values["batch.json.as.array"],
            batch_key=values["batch.key.pattern"] or "",
            numeric_decimals=values["json.decimal.format"].upper() == "NUMERIC",
            on_null=values["behavior.on.null.values"].lower(),
            on_error=values["behavior.on.error"].lower(),
            max_retries=values["max.retries"],
            backoff_ms=values["retry.backoff.ms"],
            exponential=values["retry.backoff.policy"].upper() == "EXPONENTIAL_WITH_JITTER",
            retry_codes=tuple(status_codes(values["retry.on.status.codes"] or "")),
            connect_timeout_s=values["http.connect.timeout.ms"] / 1000,
            request_timeout_s=values["http.request.timeout.ms"] / 1000,
            oauth=OAuth.of(values) if values["auth.type"].upper() == "OAUTH2" else None,
            user=values["connection.user"] if basic else None,
            password=getattr(password, "value", password) if basic else None,
            tls=tls_context(values),
            reporter=Reporter.of(values, config.get("name", "http-sink")),
        )  # fmt: skip

    def retries_status(self, status: int) -> bool:
        return any(low <= status <= high for low, high in self.retry_codes)
