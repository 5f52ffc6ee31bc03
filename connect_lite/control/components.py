"""Builds a task's converters, transforms and predicates as picklable factories (its job spec)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from connect_lite.api.config import prefixed
from connect_lite.api.errors import ConfigError
from connect_lite.config.connector_config import ConnectorConfig
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginDesc, PluginRef, PluginType

_CONVERTER_KEYS = {
    "key": PluginType.CONVERTER,
    "value": PluginType.CONVERTER,
    "header": PluginType.HEADER_CONVERTER,
}
Chosen = list[tuple[str, str, PluginDesc]]
"""(role, alias, desc) of each component picked for a task; alias is "" for converters."""

_RESERVED_TRANSFORM_KEYS = {"type", "predicate", "negate", "plugin.version"}


def build_converter(ref: PluginRef, config: dict[str, str], is_key: bool) -> Any:
    """Instantiate and configure a converter; runs on Spark executors too."""
    instance = ref.load()()
    instance.configure(dict(config), is_key)
    return instance


def build_header_converter(ref: PluginRef, config: dict[str, str]) -> Any:
    instance = ref.load()()
    instance.configure(dict(config))
    return instance


def build_configured(ref: PluginRef, config: dict[str, str]) -> Any:
    """Instantiate a transformation or predicate and configure it."""
    instance = ref.load()()
    instance.configure(dict(config))
    return instance


def converter_factory(
    plugins: Plugins,
    which: str,
    connector_config: Mapping[str, str],
    worker_props: Mapping[str, str],
    prefer_location: str | None = None,
    chosen: Chosen | None = None,
) -> Callable[[], Any]:
    """The factory for the key, value or header converter of a connector.

    As in Kafka, a converter named in the connector config takes its settings (and its
    ``.plugin.version``) from the connector config; otherwise the worker's converter,
    settings and version apply. A matching copy in ``prefer_location`` (the connector's
    own location) wins over other copies."""
    key = f"{which}.converter"
    source = connector_config if connector_config.get(key) else worker_props
    class_name = source.get(key)
    if not class_name:
        raise ConfigError(f'Missing required configuration "{key}" which has no default value.')
    version = source.get(f"{key}.plugin.version")
    desc = plugins.find(class_name, [_CONVERTER_KEYS[which]], version, prefer_location)
    if chosen is not None:
        chosen.append((f"{which}_converter", "", desc))
    settings = {k: v for k, v in prefixed(source, key + ".").items() if k != "plugin.version"}
    if which == "header":
        return functools.partial(build_header_converter, desc.ref, settings)
    return functools.partial(build_converter, desc.ref, settings, which == "key")


def transform_chain(
    plugins: Plugins,
    connector_config: ConnectorConfig,
    prefer_location: str | None = None,
    chosen: Chosen | None = None,
) -> list[tuple[Callable[[], Any], Callable[[], Any] | None, bool]]:
    """(transform factory, predicate factory or None, negate) per alias in ``transforms``."""
    chain: list[tuple[Callable[[], Any], Callable[[], Any] | None, bool]] = []
    for alias in connector_config.transforms:
        settings = connector_config.prefixed(f"transforms.{alias}.")
        desc = plugins.find(
            settings.get("type", ""),
            [PluginType.TRANSFORMATION],
            settings.get("plugin.version"),
            prefer_location,
        )
        if chosen is not None:
            chosen.append(("transform", alias, desc))
        own = {k: v for k, v in settings.items() if k not in _RESERVED_TRANSFORM_KEYS}
        predicate = None
        if settings.get("predicate"):
            predicate = _predicate_factory(
                plugins, connector_config.raw, settings["predicate"], prefer_location, chosen
            )
        negate = str(settings.get("negate", "false")).strip().lower() == "true"
        chain.append((functools.partial(build_configured, desc.ref, own), predicate, negate))
    return chain


def _predicate_factory(
    plugins: Plugins,
    connector_config: Mapping[str, str],
    alias: str,
    prefer_location: str | None,
    chosen: Chosen | None,
) -> Callable[[], Any]:
    settings = prefixed(connector_config, f"predicates.{alias}.")
    if "type" not in settings:
        raise ConfigError(f"Predicate {alias} is used but not defined in 'predicates'")
    desc = plugins.find(
        settings["type"], [PluginType.PREDICATE], settings.get("plugin.version"), prefer_location
    )
    if chosen is not None:
        chosen.append(("predicate", alias, desc))
    own = {k: v for k, v in settings.items() if k not in ("type", "plugin.version")}
    return functools.partial(build_configured, desc.ref, own)
