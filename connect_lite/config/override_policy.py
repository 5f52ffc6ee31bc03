"""Connector client config override policies: which ``*.override.*`` keys a connector may set."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from connect_lite.api.config import ConfigValue, invalid

_KAFKA_PACKAGE = "org.apache.kafka.connect.connector.policy."

POLICY_NAMES = ("All", "None", "Principal", "Allowlist")
"""The policies ``connector.client.config.override.policy`` accepts (also as Kafka class names)."""

PRINCIPAL_KEYS = frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"})

OVERRIDE_PREFIXES = {
    "producer": "producer.override.",
    "consumer": "consumer.override.",
    "admin": "admin.override.",
}


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

    def __init__(self, name: str, allowed: Iterable[str] | None = None) -> None:
        self.name = name
        self._allowed = None if allowed is None else frozenset(allowed)

    def is_allowed(self, key: str) -> bool:
        """Whether ``key`` (without its ``*.override.`` prefix) may be overridden."""
        return self._allowed is None or key in self._allowed

    def validate(self, client_props: Mapping[str, Any]) -> list[ConfigValue]:
        """One ConfigValue per key (unprefixed names), with Kafka's error when not allowed."""
        values = []
        for key, value in client_props.items():
            cv = ConfigValue(key, value)
            if not self.is_allowed(key):
                cv.errors.append(
                    f"The '{self.name}' policy does not allow '{key}' to be overridden "
                    "in the connector configuration."
                )
            values.append(cv)
        return values


def override_policy(name: str, allowlist: Iterable[str] = ()) -> OverridePolicy:
    """The policy for a (canonical or Kafka class) name; ``allowlist`` is used by Allowlist."""
    canonical = canonical_policy_name(name)
    if canonical == "All":
        return OverridePolicy("All")
    if canonical == "None":
        return OverridePolicy("None", ())
    if canonical == "Principal":
        return OverridePolicy("Principal", PRINCIPAL_KEYS)
    if canonical == "Allowlist":
        return OverridePolicy("Allowlist", allowlist)
    raise ValueError(f"Unknown connector client config override policy {name}")


__all__ = [
    "OVERRIDE_PREFIXES",
    "POLICY_NAMES",
    "PRINCIPAL_KEYS",
    "OverridePolicy",
    "canonical_policy_name",
    "override_policy",
    "validate_policy_name",
]
