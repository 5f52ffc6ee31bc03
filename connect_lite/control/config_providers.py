"""Builds the worker's config providers from ``config.providers`` (KIP-297, KIP-421)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from connect_lite.api.config import prefixed
from connect_lite.api.config_provider import ConfigProvider
from connect_lite.api.errors import ConfigError, NotFoundError
from connect_lite.config.resolution import (
    PROVIDERS,
    ConfigResolver,
    Redactor,
    is_provider_key,
    log_unknown_providers,
)
from connect_lite.config.worker import written_list
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType


def load_config_providers(
    props: Mapping[str, str], plugins: Plugins, redactor: Redactor | None = None
) -> ConfigResolver:
    """One configured instance per name in ``config.providers``; ConfigError naming the
    provider when its class is unknown or it refuses its ``param.*`` settings."""
    names = [name for name in written_list(props, PROVIDERS) if name]
    providers: dict[str, ConfigProvider] = {}
    try:
        for name in names:
            providers[name] = _configured(name, props, plugins)
    except BaseException:
        ConfigResolver(providers).close()
        raise
    resolver = ConfigResolver(providers, redactor)
    resolver.redactor.add_passwords(
        value for key, value in props.items() if is_provider_key(key) and _SECRET_PARAM.search(key)
    )
    return resolver


_SECRET_PARAM = re.compile(r"\.param\..*(password|secret|token|credential|auth)", re.IGNORECASE)
"""Provider settings that look like credentials (a vault token): hidden in logs and traces."""


def _configured(name: str, props: Mapping[str, str], plugins: Plugins) -> ConfigProvider:
    class_key = f"{PROVIDERS}.{name}.class"
    class_name = (props.get(class_key) or "").strip()
    if not class_name:
        raise ConfigError(
            f"{PROVIDERS} names '{name}', but {class_key} is not set",
            {class_key: ["Missing required configuration"]},
        )
    try:
        desc = plugins.find(class_name, [PluginType.CONFIG_PROVIDER])
    except NotFoundError as exc:
        raise ConfigError(
            f"Invalid value {class_name} for configuration {class_key}: {exc}"
        ) from None
    provider: ConfigProvider = plugins.new_instance(desc)
    try:
        provider.configure(prefixed(props, f"{PROVIDERS}.{name}.param."))
    except Exception as exc:
        raise ConfigError(
            f"Config provider '{name}' ({class_name}) refused its settings: {exc}"
        ) from exc
    return provider


def resolve_worker_props(props: Mapping[str, str], resolver: ConfigResolver) -> dict[str, str]:
    """KIP-421: the worker's own properties with their references resolved (the provider
    settings themselves are taken as written)."""
    own = {key: value for key, value in props.items() if not is_provider_key(key)}
    resolved = resolver.resolve(own)
    log_unknown_providers(resolved, "Worker config")
    return {**props, **resolved.values}


__all__ = ["load_config_providers", "resolve_worker_props"]
