"""Connector ConfigDefs enriched from installed plugins: versions, converters, transforms."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from connect_lite.api.config import (
    NO_DEFAULT,
    ConfigDef,
    ConfigKey,
    Importance,
    Type,
    Validator,
    Width,
    invalid,
)
from connect_lite.api.errors import BadRequestError, ConfigError, NotFoundError
from connect_lite.config.framework import CONVERTER_KINDS
from connect_lite.config.worker import WorkerConfig
from connect_lite.plugins.types import PluginDesc, PluginType

CONNECTOR_TYPES = (PluginType.SOURCE, PluginType.SINK)
CONVERTER_TYPES = {
    "key": (PluginType.CONVERTER,),
    "value": (PluginType.CONVERTER,),
    "header": (PluginType.HEADER_CONVERTER,),
}
_KIND_NAMES = {
    PluginType.CONVERTER: "Converter",
    PluginType.HEADER_CONVERTER: "HeaderConverter",
    PluginType.TRANSFORMATION: "Transformation",
    PluginType.PREDICATE: "Predicate",
}


class PluginLookup(Protocol):
    """What configuration needs of the plugin registry (connect_lite.plugins.registry.Plugins)."""

    def find(
        self,
        name: str,
        types: Iterable[PluginType],
        version: str | None = None,
        prefer_location: str | None = None,
    ) -> PluginDesc: ...

    def versions(self, name: str, types: Iterable[PluginType]) -> list[str]: ...

    def all(self, types: Iterable[PluginType] | None = None) -> list[PluginDesc]: ...

    def new_instance(self, desc: PluginDesc) -> Any: ...

    def connector_type(self, cls: type) -> str: ...


@dataclass(frozen=True)
class Fixed:
    """A recommender with precomputed values and visibility."""

    values: tuple[Any, ...] = ()
    shown: bool = True

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return list(self.values)

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return self.shown


def version_requirement(spec: str | None) -> str | None:
    """None for no requirement (unset or ``latest``), else the spec as given."""
    return None if spec is None or spec.strip() in ("", "latest") else spec


def is_version_not_found(error: ConfigError) -> bool:
    return "not found that matches the version range" in str(error)


def _versions(plugins: PluginLookup, name: str | None, types: Iterable[PluginType]) -> list[str]:
    """The installed versions of a plugin, ascending: the ``.plugin.version`` keys recommend
    them in this order, as Kafka's recommenders list its sorted plugin set."""
    if not name:
        return []
    try:
        return plugins.versions(name, types)
    except (NotFoundError, ConfigError):
        return []


def _class_names(plugins: PluginLookup, types: Iterable[PluginType]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(desc.class_name for desc in plugins.all(list(types))))


def class_problem(
    plugins: PluginLookup, name: str, value: str, types: tuple[PluginType, ...]
) -> str | None:
    """Kafka's message when ``value`` is not an installed plugin class of ``types``."""
    try:
        plugins.find(value, types)
        return None
    except NotFoundError:
        pass
    try:
        plugins.find(value, list(PluginType))
    except NotFoundError:
        return invalid(name, value, f"Class {value} could not be found.")
    return invalid(name, value, f"Not a {_KIND_NAMES.get(types[0], types[0].value)}")


def class_validator(
    plugins: PluginLookup, types: tuple[PluginType, ...], version: str | None = None
) -> Validator:
    """Errors for a class key: unknown class, wrong type, or (KIP-891) no installed version
    matching ``version``, which is then reported on the class and the version key alike."""

    def check(name: str, value: Any) -> str | None:
        if value is None:
            return None
        problem = class_problem(plugins, name, str(value), types)
        if problem is None and version is not None:
            problem = _version_not_found(plugins, str(value), types, version)
        return problem

    return check


def _version_not_found(
    plugins: PluginLookup, class_name: str, types: tuple[PluginType, ...], version: str
) -> str | None:
    try:
        plugins.find(class_name, types, version_requirement(version))
    except ConfigError as exc:
        return str(exc) if is_version_not_found(exc) else None
    except (NotFoundError, BadRequestError):
        return None
    return None


def version_validator(
    plugins: PluginLookup, class_name: str | None, types: tuple[PluginType, ...]
) -> Validator:
    """Errors for a ``*.plugin.version`` value that no installed copy of the class matches."""

    def check(name: str, value: Any) -> str | None:
        if not class_name or value is None:
            return None
        try:
            plugins.find(class_name, types, version_requirement(value))
        except NotFoundError:
            return None  # the class key reports that
        except (ConfigError, BadRequestError) as exc:
            return str(exc)
        return None

    return check


def _latest(plugins: PluginLookup, name: str | None, types: tuple[PluginType, ...]) -> str | None:
    versions = _versions(plugins, name, types)
    return versions[-1] if versions else None


def _bundled(
    plugins: PluginLookup, name: str | None, types: tuple[PluginType, ...], location: str | None
) -> str | None:
    """The version picked when none is given: the connector's bundled copy, else the latest."""
    if not name:
        return None
    try:
        return plugins.find(name, types, None, location).version
    except (NotFoundError, ConfigError):
        return None


def connector_location(plugins: PluginLookup, props: Mapping[str, str | None]) -> str | None:
    """The plugin location of the connector version the config selects (None if none)."""
    conn_class = props.get("connector.class")
    if not conn_class:
        return None
    try:
        requirement = version_requirement(props.get("connector.plugin.version"))
        return plugins.find(conn_class, CONNECTOR_TYPES, requirement).location
    except (NotFoundError, ConfigError, BadRequestError):
        return None


def _converter_keys(
    d: ConfigDef,
    plugins: PluginLookup,
    worker: WorkerConfig,
    props: Mapping[str, str | None],
    location: str | None,
) -> None:
    """Worker defaults, class validators and version recommenders for the converter keys."""
    for kind in CONVERTER_KINDS:
        types = CONVERTER_TYPES[kind]
        class_key, version_key = f"{kind}.converter", f"{kind}.converter.plugin.version"
        chosen = props.get(class_key) or worker.converter(kind)
        if props.get(class_key):
            requirement = props.get(version_key)
            default_version = _bundled(plugins, chosen, types, location)
        else:
            requirement = worker.converter_version(kind)
            default_version = requirement or _latest(plugins, chosen, types)
        d.keys[class_key] = replace(
            d.keys[class_key],
            default=worker.converter(kind),
            validator=class_validator(plugins, types, requirement),
            recommender=Fixed(_class_names(plugins, types)),
        )
        d.keys[version_key] = replace(
            d.keys[version_key],
            default=default_version,
            validator=version_validator(plugins, chosen, types),
            recommender=Fixed(tuple(_versions(plugins, chosen, types)), bool(chosen)),
        )


def connector_version_key(d: ConfigDef, plugins: PluginLookup, props: Mapping[str, Any]) -> None:
    """``connector.plugin.version`` defaults to the newest installed version and recommends
    every installed one, oldest first (Kafka's ConnectorConfig.enrich)."""
    conn_class = props.get("connector.class")
    versions = _versions(plugins, conn_class, CONNECTOR_TYPES)
    d.keys["connector.plugin.version"] = replace(
        d.keys["connector.plugin.version"],
        default=versions[-1] if versions else None,
        recommender=Fixed(tuple(versions), conn_class is not None),
    )


def _alias_header_keys(alias_kind: str, prefix: str, alias: str, group: str) -> list[ConfigKey]:
    keys = [
        ConfigKey(
            f"{prefix}predicate",
            Type.STRING,
            None,
            None,
            Importance.MEDIUM,
            "The alias of a predicate used to determine whether to apply this transformation.",
            group=group,
        ),
        ConfigKey(
            f"{prefix}negate",
            Type.BOOLEAN,
            False,
            None,
            Importance.MEDIUM,
            "Whether the configured predicate should be negated.",
            group=group,
        ),
    ]
    return keys if alias_kind == "transforms" else []


def _plugin_own_keys(
    plugins: PluginLookup,
    cls_name: str | None,
    version: str | None,
    types: tuple[PluginType, ...],
    location: str | None,
) -> list[ConfigKey]:
    """The config keys of the version of the plugin that would be picked."""
    if not cls_name:
        return []
    try:
        desc = plugins.find(cls_name, types, version_requirement(version), location)
        config_def = plugins.new_instance(desc).config()
    except (NotFoundError, ConfigError, BadRequestError):
        return []  # reported on the .type / .plugin.version keys
    return list(config_def.keys.values())


def _embed_alias(
    d: ConfigDef,
    plugins: PluginLookup,
    props: Mapping[str, str | None],
    alias_kind: str,
    alias: str,
    location: str | None = None,
) -> None:
    """Declare ``<alias_kind>.<alias>.*``: type, plugin.version, implicit keys, plugin keys."""
    types = (PluginType.TRANSFORMATION,) if alias_kind == "transforms" else (PluginType.PREDICATE,)
    kind = _KIND_NAMES[types[0]]
    prefix = f"{alias_kind}.{alias}."
    group = f"{'Transforms' if alias_kind == 'transforms' else 'Predicates'}: {alias}"
    cls_name = props.get(f"{prefix}type")
    version = props.get(f"{prefix}plugin.version")
    type_check = class_validator(plugins, types, version)

    def type_validator(name: str, value: Any) -> str | None:
        negate, predicate = f"{prefix}negate", f"{prefix}predicate"
        if alias_kind == "transforms" and negate in props and predicate not in props:
            return (
                f"Config '{negate}' was provided but there is no config '{predicate}' "
                "defining a predicate to be negated."
            )
        return type_check(name, value)

    versions = _versions(plugins, cls_name, types)
    keys = [
        ConfigKey(
            f"{prefix}type",
            Type.CLASS,
            NO_DEFAULT,
            type_validator,
            Importance.HIGH,
            f"Class for the '{alias}' {kind.lower()}.",
            Fixed(_class_names(plugins, types)),
            f"{kind} type for {alias}",
            group,
            width=Width.LONG,
        ),
        ConfigKey(
            f"{prefix}plugin.version",
            Type.STRING,
            _bundled(plugins, cls_name, types, location),
            version_validator(plugins, cls_name, types),
            Importance.LOW,
            f"Version or version range of the '{alias}' {kind.lower()}.",
            Fixed(tuple(versions), cls_name is not None),
            f"Version for {alias}",
            group,
        ),
        *_alias_header_keys(alias_kind, prefix, alias, group),
    ]
    taken = {key.name for key in keys}
    own = _plugin_own_keys(plugins, cls_name, version, types, location)
    for key in own:
        if prefix + key.name not in taken:
            keys.append(_embedded(key, prefix, group))
    for order, key in enumerate(keys):
        d.keys[key.name] = replace(key, order_in_group=order)


def _embedded(key: ConfigKey, prefix: str, group: str) -> ConfigKey:
    """A plugin's key under ``prefix``; as Kafka's ``ConfigDef.embed``, its validator still
    sees (and names in its message) the plugin's own key."""
    return replace(
        key,
        name=prefix + key.name,
        group=group,
        validator=None if key.validator is None else functools.partial(_as_own, key),
        dependents=[prefix + dep for dep in key.dependents],
    )


def _as_own(key: ConfigKey, _embedded_name: str, value: Any) -> str | None:
    assert key.validator is not None
    return key.validator(key.name, value)


def _aliases(props: Mapping[str, str | None], key: str) -> list[str]:
    raw = props.get(key)
    items = [item.strip() for item in (raw or "").split(",") if item.strip()]
    return list(dict.fromkeys(items))


def enrich(
    plugins: PluginLookup, worker: WorkerConfig, base: ConfigDef, props: Mapping[str, str | None]
) -> ConfigDef:
    """A copy of ``base`` with plugin-aware defaults, validators and the alias keys."""
    d = ConfigDef(base.keys.values())
    connector_version_key(d, plugins, props)
    location = connector_location(plugins, props)
    _converter_keys(d, plugins, worker, props, location)
    for alias_kind in ("transforms", "predicates"):
        for alias in _aliases(props, alias_kind):
            _embed_alias(d, plugins, props, alias_kind, alias, location)
    return d


__all__ = [
    "CONNECTOR_TYPES",
    "CONVERTER_TYPES",
    "Fixed",
    "PluginLookup",
    "class_problem",
    "connector_location",
    "connector_version_key",
    "enrich",
    "is_version_not_found",
    "version_requirement",
]
