"""The plugin registry: scans built-ins and plugin.path, then finds plugins by name and version."""

from __future__ import annotations

import importlib
import inspect
import logging
import os
import pkgutil
import types
from collections.abc import Iterable
from typing import Any

from connect_lite.api.components import Converter, HeaderConverter, Predicate, Transformation
from connect_lite.api.config_provider import ConfigProvider
from connect_lite.api.connector import SinkConnector, SourceConnector
from connect_lite.api.errors import NotFoundError
from connect_lite.plugins import isolation
from connect_lite.plugins.types import LISTED_TYPES, PluginDesc, PluginRef, PluginType
from connect_lite.plugins.versions import select_version, sorted_versions, version_key

log = logging.getLogger(__name__)

BUILTIN_MODULES: list[str] = [
    "connect_lite.converters",
    "connect_lite.transforms",
    "connect_lite.config.providers",
]
"""Modules (or packages, scanned with all their submodules) that hold the built-in plugins."""

UNDEFINED = "undefined"
NULL = "null"

LISTING_ORDER = LISTED_TYPES  # sink, source, transformation, predicate, converter, header
_TYPE_ORDER = list(PluginType)
_BASES: list[tuple[type, PluginType]] = [
    (SinkConnector, PluginType.SINK),
    (SourceConnector, PluginType.SOURCE),
    (Transformation, PluginType.TRANSFORMATION),
    (Predicate, PluginType.PREDICATE),
    (Converter, PluginType.CONVERTER),
    (HeaderConverter, PluginType.HEADER_CONVERTER),
    (ConfigProvider, PluginType.CONFIG_PROVIDER),
]
_SUFFIX = {
    PluginType.SINK: "Connector",
    PluginType.SOURCE: "Connector",
    PluginType.TRANSFORMATION: "Transformation",
    PluginType.PREDICATE: "Predicate",
    PluginType.CONVERTER: "Converter",
    PluginType.HEADER_CONVERTER: "HeaderConverter",
    PluginType.CONFIG_PROVIDER: "ConfigProvider",
}
_TYPE_WORDS = {  # (interface name, plural noun) for "not found" messages
    PluginType.TRANSFORMATION: ("Transformation", "transformations"),
    PluginType.PREDICATE: ("Predicate", "predicates"),
    PluginType.CONVERTER: ("Converter", "converters"),
    PluginType.HEADER_CONVERTER: ("HeaderConverter", "header converters"),
    PluginType.CONFIG_PROVIDER: ("ConfigProvider", "config providers"),
}


class Plugins:
    """Every installed plugin class at every installed version, scanned once at start-up."""

    def __init__(self, plugin_path: list[str], builtin_modules: list[str] | None = None) -> None:
        self._descs: dict[tuple[str, PluginType, str], PluginDesc] = {}
        for module_name in BUILTIN_MODULES if builtin_modules is None else builtin_modules:
            self._scan_builtin(module_name)
        for entry in plugin_path:
            for location in _locations_in(entry):
                self._scan_location(location)
        self._aliases = _compute_aliases(self._descs.values())

    # scanning

    def _scan_builtin(self, module_name: str) -> None:
        try:
            modules = _import_with_submodules(module_name)
        except Exception:
            log.warning("Failed to import built-in plugin module %s", module_name, exc_info=True)
            return
        for module in modules:
            for cls in _classes_defined_in(module):
                ref = PluginRef(None, cls.__module__, cls.__qualname__)
                self._add(f"{cls.__module__}.{cls.__qualname__}", cls, ref)

    def _scan_location(self, location: str) -> None:
        try:
            isolation.load_location(location)
        except Exception:
            log.warning("Failed to load plugin location %s; skipping it", location, exc_info=True)
            return
        for relative, module in sorted(isolation.location_modules(location).items()):
            for cls in _classes_defined_in(module):
                ref = PluginRef(os.path.abspath(location), relative, cls.__qualname__)
                self._add(f"{relative}.{cls.__qualname__}", cls, ref)

    def _add(self, class_name: str, cls: type, ref: PluginRef) -> None:
        plugin_types = self.plugin_type_of(cls)
        if not plugin_types:
            return
        version = _version_of(cls)
        if version is None:
            return
        for plugin_type in plugin_types:
            key = (class_name, plugin_type, version)
            if key not in self._descs:
                self._descs[key] = PluginDesc(class_name, plugin_type, version, ref, cls)

    # queries

    def all(self, types: Iterable[PluginType] | None = None) -> list[PluginDesc]:
        """Installed plugins in Kafka's listing order (by type, then class name, then version)."""
        wanted = set(LISTING_ORDER if types is None else types)
        return sorted(
            (d for d in self._descs.values() if d.type in wanted),
            key=lambda d: (_TYPE_ORDER.index(d.type), d.class_name, version_key(d.version)),
        )

    def find(
        self,
        name: str,
        types: Iterable[PluginType],
        version: str | None = None,
        prefer_location: str | None = None,
    ) -> PluginDesc:
        """The plugin a class name, alias or Java name denotes, at the requested version.

        ``prefer_location`` is the location of the connector a component is loaded for: a
        matching copy there wins over newer copies elsewhere (KIP-891 bundles)."""
        wanted = list(types)
        descs = self._copies(name, wanted)
        if not descs:
            raise NotFoundError(_not_found_message(name, wanted, self.all(wanted)))
        return select_version(descs, version, prefer_location)

    def versions(self, name: str, types: Iterable[PluginType]) -> list[str]:
        """The installed versions of a plugin, ascending."""
        return sorted_versions(d.version for d in self._copies(name, list(types)))

    def _copies(self, name: str, types: list[PluginType]) -> list[PluginDesc]:
        class_name = self.resolve_name(name)
        return [d for d in self._descs.values() if d.class_name == class_name and d.type in types]

    def resolve_name(self, name: str) -> str:
        """The canonical class name for a class name, alias or Java name (as given if unknown)."""
        if any(d.class_name == name for d in self._descs.values()):
            return name
        return self._aliases.get(name, name)

    def aliases(self) -> dict[str, str]:
        """Every registered alias (and Java name) and the class name it stands for."""
        return dict(self._aliases)

    def new_instance(self, desc: PluginDesc) -> Any:
        """A new instance of the plugin class."""
        return desc.cls()

    def connector_type(self, cls: type) -> str:
        """``source``, ``sink`` or ``unknown``, as Kafka's connector type."""
        if issubclass(cls, SourceConnector):
            return "source"
        if issubclass(cls, SinkConnector):
            return "sink"
        return "unknown"

    @staticmethod
    def plugin_type_of(cls: type) -> list[PluginType]:
        """The plugin types a class is (two for a converter that is also a header converter)."""
        if not isinstance(cls, type) or inspect.isabstract(cls) or cls.__name__.startswith("_"):
            return []
        return [plugin_type for base, plugin_type in _BASES if issubclass(cls, base)]


JAVA_ARCHIVES = (".jar", ".zip")
"""What Kafka's plugin.path holds besides directories: Java plugins connect-lite cannot run."""
_JAVA_ONLY = (
    "connect-lite runs Python plugins only (one directory of Python modules per plugin); "
    "Kafka's converters and transformations are built in under their Kafka class names"
)


def _locations_in(entry: str) -> list[str]:
    if not os.path.isdir(entry):
        if entry.lower().endswith(JAVA_ARCHIVES) and os.path.isfile(entry):
            log.warning(
                "plugin.path entry %s is a Java archive; skipping it: %s", entry, _JAVA_ONLY
            )
        else:
            log.warning("plugin.path entry %s is not a directory; skipping it", entry)
        return []
    names = [name for name in sorted(os.listdir(entry)) if not name.startswith((".", "__"))]
    archives = [n for n in names if n.lower().endswith(JAVA_ARCHIVES)]
    if archives:
        log.warning(
            "plugin.path entry %s holds Java archives (%s); skipping them: %s",
            entry,
            ", ".join(archives),
            _JAVA_ONLY,
        )
    return [os.path.join(entry, n) for n in names if os.path.isdir(os.path.join(entry, n))]


def _import_with_submodules(module_name: str) -> list[types.ModuleType]:
    module = importlib.import_module(module_name)
    modules = [module]
    if hasattr(module, "__path__"):
        for info in pkgutil.walk_packages(module.__path__, module.__name__ + "."):
            modules.append(importlib.import_module(info.name))
    return modules


def _classes_defined_in(module: types.ModuleType) -> list[type]:
    return [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type) and obj.__module__ == module.__name__
    ]


def _version_of(cls: type) -> str | None:
    """The version string a plugin reports, "undefined"/"null" as Kafka; None if unusable."""
    if not _overrides_version(cls):
        return UNDEFINED
    try:
        instance = cls()
    except Exception:
        log.warning("Cannot instantiate plugin %s; skipping it", cls, exc_info=True)
        return None
    try:
        version = instance.version()
    except Exception:
        log.warning("version() of plugin %s failed", cls, exc_info=True)
        return UNDEFINED
    return NULL if version is None else str(version)


def _overrides_version(cls: type) -> bool:
    bases = {base for base, _ in _BASES}
    for klass in cls.__mro__:
        if "version" in vars(klass):
            return klass not in bases
    return False


def _compute_aliases(descs: Iterable[PluginDesc]) -> dict[str, str]:
    """Alias -> class name; an alias claimed by two different classes is dropped."""
    claims: dict[str, set[str]] = {}
    class_names = set()
    for desc in descs:
        class_names.add(desc.class_name)
        simple = desc.class_name.rsplit(".", 1)[-1]
        names = {simple, *getattr(desc.cls, "__connect_aliases__", ())}
        suffix = _SUFFIX[desc.type]
        if simple.endswith(suffix) and len(simple) > len(suffix):
            names.add(simple[: -len(suffix)])
        for alias in names:
            claims.setdefault(alias, set()).add(desc.class_name)
    return {
        alias: next(iter(owners))
        for alias, owners in claims.items()
        if len(owners) == 1 and alias not in class_names
    }


def _not_found_message(name: str, types: list[PluginType], available: list[PluginDesc]) -> str:
    if set(types) <= {PluginType.SOURCE, PluginType.SINK}:
        interface, noun = "Connector", "connectors"
    else:
        interface, noun = _TYPE_WORDS.get(types[0], ("Plugin", "plugins")) if types else ("", "")
    listing = ", ".join(describe(d) for d in available)
    return (
        f"Failed to find any class that implements {interface} and which name matches {name}, "
        f"available {noun} are: {listing}"
    )


def describe(desc: PluginDesc) -> str:
    """A PluginDesc rendered the way Kafka's PluginDesc.toString does."""
    location = desc.location or "classpath"
    return (
        f"PluginDesc{{klass=class {desc.class_name}, name='{desc.class_name}', "
        f"version='{desc.version}', encodedVersion={desc.version}, type={desc.type.value}, "
        f"typeName='{desc.type.value}', location='{location}'}}"
    )


__all__ = ["BUILTIN_MODULES", "NULL", "UNDEFINED", "Plugins", "describe"]
