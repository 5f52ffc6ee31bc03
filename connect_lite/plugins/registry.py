"""The plugin registry: scans built-ins, installed packages and plugin.path, then finds plugins.

A plugin's class name is the one its class declares (``__connect_class_name__``: the built-ins
declare Kafka's Java class names), else its Python name (module path and class name); the
listings show it, and every other name of the plugin is an alias (see ``_compute_aliases``).

Where plugins come from, in scan order: the built-in modules, the modules that installed
distributions name in the ``connect_lite.plugins`` entry-point group, the modules of the
worker's ``plugin.modules``, then every location of ``plugin.path``. One class (one class name)
may be installed at several versions across all of them (KIP-891). When two copies have the
same class name and the same version, the first one scanned is used and the other is ignored
with an INFO line: a copy of a built-in at the built-in's version never hides it or makes its
name ambiguous.
"""

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
from connect_lite.plugins.distributions import (
    EntryPointPlugins,
    defines_version,
    entry_point_plugins,
    module_version,
)
from connect_lite.plugins.types import LISTED_TYPES, PluginDesc, PluginRef, PluginType
from connect_lite.plugins.versions import select_version, sorted_versions, version_key

log = logging.getLogger(__name__)

BUILTIN_MODULES: list[str] = [
    "connect_lite.converters",
    "connect_lite.transforms",
    "connect_lite.config.providers",
    isolation.BUILTIN_LOCATION,  # FileStream and the demo counter, named like a location
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

    def __init__(
        self,
        plugin_path: list[str],
        builtin_modules: list[str] | None = None,
        plugin_modules: Iterable[str] = (),
        *,
        entry_points: bool = True,
    ) -> None:
        self._descs: dict[tuple[str, PluginType, str], PluginDesc] = {}
        self._duplicates_logged: set[tuple[str, str]] = set()
        for module_name in BUILTIN_MODULES if builtin_modules is None else builtin_modules:
            self._scan_module(module_name, f"built-in plugin module {module_name}")
        for entry_point in entry_point_plugins() if entry_points else []:
            self._scan_entry_point(entry_point)
        for module_name in plugin_modules:
            what = f"plugin.modules entry {module_name}"
            self._scan_module(module_name, what, module_version(module_name))
        for entry in plugin_path:
            for location in _locations_in(entry):
                self._scan_location(location)
        self._aliases = _compute_aliases(self._descs.values())

    # scanning

    def _scan_module(self, module_name: str, what: str, version: str | None = None) -> None:
        """Scan an importable module, or a package with all its submodules.

        ``version`` is what a class that does not define ``version()`` reports (its
        distribution's version), instead of ``undefined``."""
        try:
            modules = _import_with_submodules(module_name)
        except Exception:
            log.warning("Failed to import %s; skipping it", what, exc_info=True)
            return
        for module in modules:
            for cls in _classes_defined_in(module):
                self._add_installed(cls, version)

    def _scan_entry_point(self, entry_point: EntryPointPlugins) -> None:
        if entry_point.attr is None:
            self._scan_module(entry_point.module, entry_point.describe(), entry_point.version)
            return
        try:
            obj: Any = _import(entry_point.module)
            for part in entry_point.attr.split("."):
                obj = getattr(obj, part)
        except Exception:
            log.warning("Failed to load %s; skipping it", entry_point.describe(), exc_info=True)
            return
        if isinstance(obj, types.ModuleType):
            self._scan_module(obj.__name__, entry_point.describe(), entry_point.version)
        elif isinstance(obj, type) and self.plugin_type_of(obj):
            self._add_installed(obj, entry_point.version)
        else:
            log.warning("%s names neither a module nor a plugin class", entry_point.describe())

    def _add_installed(self, cls: type, version: str | None) -> None:
        ref = PluginRef(None, cls.__module__, cls.__qualname__)
        self._add(isolation.public_class_name(cls), cls, ref, version)

    def _scan_location(self, location: str) -> None:
        try:
            isolation.load_location(location)
        except Exception:
            log.warning("Failed to load plugin location %s; skipping it", location, exc_info=True)
            return
        for relative, module in sorted(isolation.location_modules(location).items()):
            for cls in _classes_defined_in(module):
                ref = PluginRef(os.path.abspath(location), relative, cls.__qualname__)
                self._add(isolation.public_class_name(cls), cls, ref)

    def _add(self, class_name: str, cls: type, ref: PluginRef, default: str | None = None) -> None:
        plugin_types = self.plugin_type_of(cls)
        if not plugin_types:
            return
        version = _version_of(cls, default or UNDEFINED)
        if version is None:
            return
        for plugin_type in plugin_types:
            key = (class_name, plugin_type, version)
            kept = self._descs.get(key)
            if kept is None:
                self._descs[key] = PluginDesc(class_name, plugin_type, version, ref, cls)
            elif kept.cls is not cls:
                self._log_duplicate(kept, ref)

    def _log_duplicate(self, kept: PluginDesc, ignored: PluginRef) -> None:
        if (kept.class_name, kept.version) in self._duplicates_logged:
            return
        self._duplicates_logged.add((kept.class_name, kept.version))
        log.info(
            "Plugin %s %s is installed twice; using the copy %s, ignoring the one %s",
            kept.class_name,
            kept.version,
            _where(kept.ref),
            _where(ignored),
        )

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
        """The plugin a class name or alias denotes, at the requested version.

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
        """The class name for a class name or alias (as given if unknown)."""
        if any(d.class_name == name for d in self._descs.values()):
            return name
        return self._aliases.get(name, name)

    def aliases(self) -> dict[str, str]:
        """Every registered alias (short names, Python names of Java-named classes, declared
        aliases) and the class name it stands for."""
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
        if entry.lower().endswith(JAVA_ARCHIVES):  # Kafka's libs/connect-file-4.1.0.jar
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
    locations = [os.path.join(entry, n) for n in names if os.path.isdir(os.path.join(entry, n))]
    return [location for location in locations if not _java_only(location)]


def _java_only(location: str) -> bool:
    """A location holding Java archives and no Python (Kafka's layout): warned about, skipped."""
    try:
        names = os.listdir(location)
    except OSError:
        return False
    archives = sorted(n for n in names if n.lower().endswith(JAVA_ARCHIVES))
    python = any(
        n.endswith((".py", ".pyc")) or os.path.isfile(os.path.join(location, n, "__init__.py"))
        for n in names
    )
    if archives and not python:
        log.warning(
            "Plugin location %s holds only Java archives (%s); skipping it: %s",
            location,
            ", ".join(archives[:3]) + (", ..." if len(archives) > 3 else ""),
            _JAVA_ONLY,
        )
        return True
    return False


def _import_with_submodules(module_name: str) -> list[types.ModuleType]:
    """The module and, for a package, every submodule that imports; ``__main__`` modules are
    never run, and a submodule that fails is skipped with a warning."""
    module = _import(module_name)
    modules = [module]
    if hasattr(module, "__path__"):
        for info in pkgutil.walk_packages(
            module.__path__, module.__name__ + ".", onerror=_walk_error
        ):
            if info.name.rsplit(".", 1)[-1] == "__main__":
                continue
            try:
                modules.append(_import(info.name))
            except Exception:
                log.warning(
                    "Failed to import plugin module %s; skipping it", info.name, exc_info=True
                )
    return modules


def _import(module_name: str) -> types.ModuleType:
    """importlib.import_module, with a module's own exit (SystemExit) taken as a failure."""
    try:
        return importlib.import_module(module_name)
    except SystemExit as exc:
        raise ImportError(f"importing {module_name} called exit({exc.code})") from exc


def _walk_error(name: str) -> None:
    log.warning("Failed to import plugin package %s; skipping it", name, exc_info=True)


def _classes_defined_in(module: types.ModuleType) -> list[type]:
    return [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type) and obj.__module__ == module.__name__
    ]


def _where(ref: PluginRef) -> str:
    return f"in {ref.location}" if ref.location else f"in module {ref.module}"


def _version_of(cls: type, default: str = UNDEFINED) -> str | None:
    """The version string a plugin reports; ``default`` if it does not define ``version()``.

    "undefined"/"null" as Kafka; None if the class is unusable."""
    if not defines_version(cls):
        return default
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


def _compute_aliases(descs: Iterable[PluginDesc]) -> dict[str, str]:
    """Alias -> class name; an alias claimed by two different classes is dropped.

    A class that declares its class name (a Java one) answers to its Python name too, and to
    the short names of both."""
    claims: dict[str, set[str]] = {}
    class_names = set()
    for desc in descs:
        class_names.add(desc.class_name)
        python_name = isolation.module_class_name(desc.cls)
        names = {python_name, *getattr(desc.cls, "__connect_aliases__", ())}
        suffix = _SUFFIX[desc.type]
        for full in (desc.class_name, python_name):
            simple = full.rsplit(".", 1)[-1]
            names.add(simple)
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
