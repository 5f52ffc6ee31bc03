"""Connector client config override policies: which ``*.override.*`` keys a connector may set."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from connect_lite.api.config import ConfigValue, Type, invalid
from connect_lite.api.errors import ConfigError

_KAFKA_PACKAGE = "org.apache.kafka.connect.connector.policy."

POLICY_NAMES = ("All", "None", "Principal", "Allowlist")
"""The policies ``connector.client.config.override.policy`` accepts (also as Kafka class names)."""

PRINCIPAL_KEYS = frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"})

ALLOWED_OAUTH_URLS = "org.apache.kafka.sasl.oauthbearer.allowed.urls"
"""Worker key (a JVM system property in Kafka): the OAuth endpoints connectors may name."""

DENIED_KEYS: dict[str, str] = {
    "plugin.library.paths": "loads native libraries into the worker",
    "ssl.engine.location": "loads an OpenSSL engine library into the worker",
    "ssl.providers": "loads OpenSSL provider modules into the worker",
    "sasl.kerberos.kinit.cmd": "runs a shell command on the worker",
    "sasl.kerberos.principal": "is put into the worker's kinit shell command",
    "sasl.kerberos.keytab": "is put into the worker's kinit shell command",
}
"""librdkafka keys a connector may never override, whatever the policy: each loads code or runs
a command inside the worker. The worker's own ``producer.*``/``consumer.*``/``admin.*`` keys
are trusted and may set them."""

URL_KEYS = frozenset({"sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.jwks.endpoint.url"})
"""Keys that make the worker call a URL: allowed only for URLs in ``ALLOWED_OAUTH_URLS``
(Kafka's answer to CVE-2025-27817)."""

METADATA_AUTH = "sasl.oauthbearer.metadata.authentication.type"
"""librdkafka fetches tokens from a cloud metadata endpoint (and fills in the token URL itself)
unless this is ``none``: refused, as it would hand the worker's identity to any broker."""

CLIENT_PASSWORD_KEYS = frozenset(
    {
        "sasl.jaas.config",
        "sasl.password",
        "sasl.oauthbearer.client.secret",
        "sasl.oauthbearer.client.credentials.client.secret",
        "sasl.oauthbearer.assertion.private.key.passphrase",
        "ssl.key.password",
        "ssl.keystore.password",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.truststore.password",
        "ssl.truststore.certificates",
        "ssl.key.pem",
    }
)
"""Client keys whose values are secrets: Kafka's PASSWORD-typed client keys, and their
librdkafka counterparts (``sasl.password``, ``ssl.key.pem``, ...). Shown as ``[hidden]``."""

OVERRIDE_PREFIXES = {
    "producer": "producer.override.",
    "consumer": "consumer.override.",
    "admin": "admin.override.",
}


def client_key_type(key: str) -> Type | None:
    """PASSWORD for a client key that holds a secret; None (untyped) for the others."""
    return Type.PASSWORD if key in CLIENT_PASSWORD_KEYS else None


def client_passwords(config: Mapping[str, str | None]) -> list[str]:
    """The secret client values in a config: keys that are a client password key, or end
    with one after a prefix (``producer.override.ssl.key.password``,
    ``listeners.https.ssl.key.password``)."""
    return [value for key, value in config.items() if value and _is_secret_key(key)]


def _is_secret_key(key: str) -> bool:
    return key in CLIENT_PASSWORD_KEYS or any(
        key.endswith("." + secret) for secret in CLIENT_PASSWORD_KEYS
    )


def canonical_policy_name(value: str) -> str | None:
    """``All`` for ``All`` or ``org.apache...AllConnectorClientConfigOverridePolicy``; else None."""
    text = value.strip()
    if text.startswith(_KAFKA_PACKAGE):
        text = text[len(_KAFKA_PACKAGE) :]
    if text.endswith("ConnectorClientConfigOverridePolicy"):
        text = text[: -len("ConnectorClientConfigOverridePolicy")]
    return text if text in POLICY_NAMES else None


def validate_policy_name(name: str, value: Any) -> str | None:
    """ConfigDef validator for ``connector.client.config.override.policy``."""
    if value is not None and canonical_policy_name(str(value)) is not None:
        return None
    return invalid(name, value, "Policy must be one of: " + ", ".join(POLICY_NAMES))


class OverridePolicy:
    """A policy: decides, key by key, whether a connector may override a client config."""

    def __init__(
        self, name: str, allowed: Iterable[str] | None = None, allowed_urls: Iterable[str] = ()
    ) -> None:
        self.name = name
        self._allowed = None if allowed is None else frozenset(allowed)
        self._allowed_urls = frozenset(url.strip() for url in allowed_urls if url.strip())

    def is_allowed(self, key: str) -> bool:
        """Whether ``key`` (without its ``*.override.`` prefix) may be overridden."""
        return self._allowed is None or key in self._allowed

    def denied(self, key: str, value: Any) -> str | None:
        """Why ``key`` may never be overridden with ``value``, whatever the policy, or None."""
        name = key.strip().lower()
        if name in DENIED_KEYS:
            return (
                f"'{key}' may not be overridden in the connector configuration: it "
                f"{DENIED_KEYS[name]}. Set it in the worker configuration instead."
            )
        if name == METADATA_AUTH and str(value).strip().lower() != "none":
            return (
                f"'{key}' may not be overridden in the connector configuration: it makes the "
                "worker fetch its cloud identity token. Set it in the worker configuration "
                "instead."
            )
        if name in URL_KEYS and str(value).strip() not in self._allowed_urls:
            return (
                f"{value} is not allowed for '{key}'. Add it to the worker property "
                f"'{ALLOWED_OAUTH_URLS}' to allow it."
            )
        return None

    def validate(self, client_props: Mapping[str, Any], used: bool = True) -> list[ConfigValue]:
        """One ConfigValue per key (unprefixed names), with Kafka's error when not allowed.

        For a client the connector does not use, only the keys it may never override are
        reported (they are refused whether or not the client is built).
        """
        values = []
        for key, value in client_props.items():
            cv = ConfigValue(key, value)
            reason = self.denied(key, value)
            if reason is not None:
                cv.errors.append(reason)
            elif not used:
                continue
            elif not self.is_allowed(key):
                cv.errors.append(
                    f"The '{self.name}' policy does not allow '{key}' to be overridden "
                    "in the connector configuration."
                )
            values.append(cv)
        return values

    def client_overrides(self, config: Mapping[str, str], client: str) -> dict[str, str]:
        """A connector's ``<client>.override.*`` keys, prefix stripped, for building a client.

        Checked again here, not only at validation: a config stored by an older version could
        hold a key that may never be overridden. Raise ConfigError naming the first one.
        """
        prefix = OVERRIDE_PREFIXES[client]
        overrides = {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}
        for key, value in overrides.items():
            reason = self.denied(key, value)
            if reason is not None:
                raise ConfigError(reason.replace(f"'{key}'", f"'{prefix}{key}'", 1))
        return overrides


def override_policy(
    name: str, allowlist: Iterable[str] = (), allowed_urls: Iterable[str] = ()
) -> OverridePolicy:
    """The policy for a (canonical or Kafka class) name; ``allowlist`` is used by Allowlist,
    ``allowed_urls`` (``org.apache.kafka.sasl.oauthbearer.allowed.urls``) by every policy."""
    canonical = canonical_policy_name(name)
    allowed: dict[str, Iterable[str] | None] = {
        "All": None,
        "None": (),
        "Principal": PRINCIPAL_KEYS,
        "Allowlist": allowlist,
    }
    if canonical is None:
        raise ValueError(f"Unknown connector client config override policy {name}")
    return OverridePolicy(canonical, allowed[canonical], allowed_urls)


__all__ = [
    "ALLOWED_OAUTH_URLS",
    "CLIENT_PASSWORD_KEYS",
    "DENIED_KEYS",
    "OVERRIDE_PREFIXES",
    "POLICY_NAMES",
    "PRINCIPAL_KEYS",
    "URL_KEYS",
    "OverridePolicy",
    "canonical_policy_name",
    "client_key_type",
    "client_passwords",
    "override_policy",
    "validate_policy_name",
]
