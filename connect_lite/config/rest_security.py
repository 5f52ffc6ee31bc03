"""The REST listener's security keys (TLS, basic auth, CORS, Host check, limits), typed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from connect_lite.api.config import ConfigDef, Importance, Range, Type, ValidString, prefixed
from connect_lite.api.errors import ConfigError
from connect_lite.config.properties import load_properties

HTTPS_PREFIX = "listeners.https."
"""Kafka's prefix for the https listeners' own ``ssl.*`` keys (all or nothing, as in Kafka)."""

BASIC_AUTH_EXTENSION = (
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
)
CREDENTIALS_FILE = "rest.basic.auth.credentials.file"
MAX_REQUEST_BYTES = "rest.max.request.bytes"
DEFAULT_MAX_REQUEST_BYTES = 8 * 1024 * 1024
KEYSTORE_TYPES = ("PEM", "PKCS12")
CLIENT_AUTH = ("none", "requested", "required")

_SSL_KEYS: list[tuple[str, Type, Any, Any, str]] = [
    (
        "ssl.keystore.type",
        Type.STRING,
        "PKCS12",
        ValidString.in_ignore_case(*KEYSTORE_TYPES),
        "Keystore format of https listeners: PEM (one file, private key then certificate "
        "chain) or PKCS12.",
    ),
    ("ssl.keystore.location", Type.STRING, None, None, "Keystore file of https listeners."),
    ("ssl.keystore.password", Type.PASSWORD, None, None, "Password of the keystore file."),
    ("ssl.key.password", Type.PASSWORD, None, None, "Password of the private key."),
    (
        "ssl.truststore.type",
        Type.STRING,
        "PKCS12",
        ValidString.in_ignore_case(*KEYSTORE_TYPES),
        "Truststore format: PEM (CA certificates) or PKCS12.",
    ),
    (
        "ssl.truststore.location",
        Type.STRING,
        None,
        None,
        "CA certificates that client certificates must chain to (mTLS).",
    ),
    ("ssl.truststore.password", Type.PASSWORD, None, None, "Password of the truststore."),
    (
        "ssl.client.auth",
        Type.STRING,
        "none",
        ValidString.in_ignore_case(*CLIENT_AUTH),
        "Client certificates on https listeners: none, requested or required (mTLS).",
    ),
]


def _define_ssl(d: ConfigDef) -> ConfigDef:
    for name, type_, default, validator, doc in _SSL_KEYS:
        d.define(name, type_, default, validator, Importance.MEDIUM, doc)
    return d


_TLS_DEF = _define_ssl(ConfigDef())
"""The ``ssl.*`` keys alone, to parse the ``listeners.https.`` ones with the same rules."""


def define_rest_security(d: ConfigDef) -> None:
    """Add the REST security keys to the worker's ConfigDef."""
    _define_ssl(d)
    d.define(
        CREDENTIALS_FILE,
        Type.STRING,
        None,
        importance=Importance.HIGH,
        doc="Basic auth for every REST route: a Java properties file of user=password lines "
        "(the format of Kafka's PropertyFileLoginModule file). Unset: no authentication.",
    )
    d.define(
        "rest.extension.classes",
        Type.LIST,
        [],
        importance=Importance.LOW,
        doc=f"Only {BASIC_AUTH_EXTENSION} is known; it needs {CREDENTIALS_FILE}.",
    )
    d.define(
        "rest.allowed.hosts",
        Type.LIST,
        [],
        importance=Importance.LOW,
        doc="Host header names a loopback listener accepts besides loopback names and "
        "addresses (a defence against DNS rebinding).",
    )
    d.define(
        "access.control.allow.origin",
        Type.STRING,
        "",
        importance=Importance.LOW,
        doc="CORS: origins allowed to call the REST API from a browser, comma-separated, or "
        "*. Empty: CORS off.",
    )
    d.define(
        "access.control.allow.methods",
        Type.STRING,
        "",
        importance=Importance.LOW,
        doc="CORS: methods allowed from other origins, comma-separated. Empty: GET,POST,HEAD.",
    )
    d.define(
        MAX_REQUEST_BYTES,
        Type.LONG,
        DEFAULT_MAX_REQUEST_BYTES,
        Range.at_least(1),
        importance=Importance.LOW,
        doc="Largest request body the REST API reads; larger ones get 413.",
    )


@dataclass(frozen=True)
class TlsSettings:
    """The ``ssl.*`` keys of the https listeners."""

    keystore_type: str
    keystore_location: str
    keystore_password: str | None = field(repr=False)
    key_password: str | None = field(repr=False)
    truststore_type: str
    truststore_location: str | None
    truststore_password: str | None = field(repr=False)
    client_auth: str
    key_prefix: str  # "listeners.https." or "", to name keys in errors

    def key(self, name: str) -> str:
        return self.key_prefix + name


@dataclass(frozen=True)
class RestSecurity:
    """What the REST layer enforces before any route runs."""

    tls: TlsSettings | None = None
    credentials: Mapping[str, str] | None = field(default=None, repr=False)
    allowed_hosts: frozenset[str] = frozenset()
    cors_origins: tuple[str, ...] = ()
    cors_methods: tuple[str, ...] = ("GET", "POST", "HEAD")
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES


def rest_security(raw: Mapping[str, str], get: Callable[[str], Any], https: bool) -> RestSecurity:
    """The typed settings from a worker's raw properties and parsed values.

    Raise ConfigError naming the key when a needed file is missing or unreadable.
    """
    return RestSecurity(
        tls=tls_settings(raw) if https else None,
        credentials=_credentials(get),
        allowed_hosts=frozenset(host_name(h) for h in get("rest.allowed.hosts") or []),
        cors_origins=_split(get("access.control.allow.origin")),
        cors_methods=_split(get("access.control.allow.methods")) or ("GET", "POST", "HEAD"),
        max_request_bytes=int(get(MAX_REQUEST_BYTES)),
    )


def tls_settings(raw: Mapping[str, str]) -> TlsSettings:
    """Kafka's all-or-nothing rule: any ``listeners.https.`` key means only those are read."""
    listener_keys = prefixed(raw, HTTPS_PREFIX)
    prefix = HTTPS_PREFIX if listener_keys else ""
    source = listener_keys if listener_keys else raw
    values = _TLS_DEF.validate({k: v for k, v in source.items() if k in _TLS_DEF.keys})
    problems = [
        cv.errors[0].replace(f"configuration {name}", f"configuration {prefix}{name}")
        for name, cv in values.items()
        if cv.errors
    ]
    if problems:
        raise ConfigError("\n".join(problems))
    parsed = {name: cv.value for name, cv in values.items()}
    if not parsed["ssl.keystore.location"]:
        key = prefix + "ssl.keystore.location"
        raise ConfigError(f"{key} is required for an https listener")
    return TlsSettings(
        keystore_type=str(parsed["ssl.keystore.type"]).upper(),
        keystore_location=str(parsed["ssl.keystore.location"]),
        keystore_password=parsed["ssl.keystore.password"],
        key_password=parsed["ssl.key.password"],
        truststore_type=str(parsed["ssl.truststore.type"]).upper(),
        truststore_location=parsed["ssl.truststore.location"],
        truststore_password=parsed["ssl.truststore.password"],
        client_auth=str(parsed["ssl.client.auth"]).lower(),
        key_prefix=prefix,
    )


def _credentials(get: Callable[[str], Any]) -> Mapping[str, str] | None:
    extensions = [e.strip() for e in get("rest.extension.classes") or [] if e.strip()]
    unknown = [e for e in extensions if e != BASIC_AUTH_EXTENSION]
    if unknown:
        raise ConfigError(
            f"rest.extension.classes: {unknown[0]} is not available in connect-lite; "
            f"only {BASIC_AUTH_EXTENSION} is (with {CREDENTIALS_FILE})"
        )
    path = get(CREDENTIALS_FILE)
    if not path:
        if extensions:
            raise ConfigError(
                f"rest.extension.classes lists {BASIC_AUTH_EXTENSION}, which needs "
                f"{CREDENTIALS_FILE}: a properties file of user=password lines"
            )
        return None
    try:
        users = load_properties(str(path))
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise ConfigError(f"{CREDENTIALS_FILE}: cannot read {path}: {reason}") from None
    if not users:
        raise ConfigError(f"{CREDENTIALS_FILE}: {path} holds no user=password line")
    empty = sorted(user for user, password in users.items() if not password)
    if empty:
        raise ConfigError(f"{CREDENTIALS_FILE}: user {empty[0]} has an empty password in {path}")
    return users


def host_name(host: str) -> str:
    """A Host header (or allowed host) without its port and trailing dot, lower case; IPv6
    literals without brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name.rstrip(".")


def _split(value: Any) -> tuple[str, ...]:
    return tuple(part.strip() for part in str(value or "").split(",") if part.strip())


__all__ = [
    "BASIC_AUTH_EXTENSION",
    "CREDENTIALS_FILE",
    "HTTPS_PREFIX",
    "RestSecurity",
    "TlsSettings",
    "define_rest_security",
    "host_name",
    "rest_security",
    "tls_settings",
]
