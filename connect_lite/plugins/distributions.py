"""Plugins of installed distributions: the ``connect_lite.plugins`` entry points, and versions.

A distribution declares the modules or packages that hold its plugins in its metadata::

    [project.entry-points."connect_lite.plugins"]
    acme = "acme_connect"                  # a package: it and all its submodules are scanned
    acme-extra = "acme_extra.sink:MySink"  # one class (or one module)

A plugin class found this way that does not define ``version()`` reports its distribution's
version (``importlib.metadata``), so a package's plugins are versioned by the package.
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "connect_lite.plugins"
_API_PACKAGE = "connect_lite.api."


@dataclass(frozen=True)
class EntryPointPlugins:
    """One entry point of the group: what to scan, and the version of its distribution."""

    name: str
    module: str
    attr: str | None
    distribution: str | None
    version: str | None

    def describe(self) -> str:
        target = f"{self.module}:{self.attr}" if self.attr else self.module
        owner = f" of {self.distribution} {self.version}" if self.distribution else ""
        return f"entry point {self.name} = {target}{owner}"


def entry_point_plugins(group: str = ENTRY_POINT_GROUP) -> list[EntryPointPlugins]:
    """Every entry point of ``group`` in the installed distributions, in a stable order."""
    found: list[EntryPointPlugins] = []
    for dist in importlib.metadata.distributions():
        # One distribution at a time: a broken one (malformed metadata, a bad entry point,
        # even for another group) is skipped with a warning, never a failed start.
        try:
            entries = [e for e in dist.entry_points if e.group == group]
            found += [
                EntryPointPlugins(e.name, e.module, e.attr or None, dist.name, dist.version)
                for e in entries
            ]
        except Exception as exc:
            name = _name_of(dist)
            log.warning("Skipping the entry points of installed package %s: %s", name, exc)
    unique = {(e.distribution, e.name, e.module, e.attr): e for e in found}
    return sorted(unique.values(), key=lambda e: (e.distribution or "", e.name))


def _name_of(dist: importlib.metadata.Distribution) -> str:
    try:
        return str(dist.metadata["Name"] or dist)
    except Exception:
        return repr(dist)


def module_version(module_name: str) -> str | None:
    """The version of the one installed distribution that provides a module, or None.

    None when no installed distribution provides its top-level package (a module on
    ``sys.path`` only, or a module of a plugin location), or when several do.
    """
    names = _distributions_by_package().get(module_name.split(".", 1)[0], [])
    if len(set(names)) != 1:
        return None
    try:
        return importlib.metadata.version(names[0])
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def _distributions_by_package() -> dict[str, list[str]]:
    """Top-level package -> distribution names, read once: the installed set does not change."""
    return dict(importlib.metadata.packages_distributions())


def defines_version(cls: type) -> bool:
    """Whether a class (or a base of its own) defines ``version()``, not only the API's bases."""
    for klass in cls.__mro__:
        if "version" in vars(klass):
            return not klass.__module__.startswith(_API_PACKAGE)
    return False


def reported_version(plugin: Any) -> str:
    """What a running plugin or task reports: its ``version()``, or, if its class defines none,
    the version of the installed distribution that provides its module (else ``version()``)."""
    if not defines_version(type(plugin)):
        version = module_version(type(plugin).__module__)
        if version is not None:
            return version
    return str(plugin.version())


def version_of(plugin: Any) -> str | None:
    """A plugin's ``version()`` (its distribution's if it defines none), or None if it raises."""
    try:
        return reported_version(plugin)
    except Exception:
        return None


__all__ = [
    "ENTRY_POINT_GROUP",
    "EntryPointPlugins",
    "defines_version",
    "entry_point_plugins",
    "module_version",
    "reported_version",
    "version_of",
]
