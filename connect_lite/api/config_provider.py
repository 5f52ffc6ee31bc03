"""Config providers (KIP-297): where ``${provider:path:key}`` references in configs resolve."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ConfigData:
    """What a provider returns for one path: the values by key, and how long they stay valid
    (``ttl_ms``; None means until the worker restarts the connector)."""

    data: Mapping[str, str] = field(default_factory=dict)
    ttl_ms: int | None = None


class ConfigProvider(ABC):
    """Resolves references ``${name:path:key}`` and ``${name:key}`` (an empty path).

    The worker configures one instance per name in ``config.providers``, with the
    ``config.providers.<name>.param.*`` keys (prefix stripped). ``get`` raises ConfigError
    for an unknown path or key, and its messages never contain a value."""

    def version(self) -> str:
        return "undefined"

    def configure(self, config: dict[str, str]) -> None:  # noqa: B027  # optional
        """Receives the provider's ``param.*`` settings."""

    @abstractmethod
    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        """The values under ``path``: only ``keys`` when given, else all of them."""

    def close(self) -> None:  # noqa: B027  # optional
        """Releases what the provider holds."""


__all__ = ["ConfigData", "ConfigProvider"]
