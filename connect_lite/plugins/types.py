"""Plugin types, descriptors and picklable references to plugin classes."""

from __future__ import annotations

import builtins
import enum
from dataclasses import dataclass
from typing import Any


class PluginType(enum.Enum):
    """The kinds of plugin, with the names GET /connector-plugins uses."""

    SINK = "sink"
    SOURCE = "source"
    TRANSFORMATION = "transformation"
    PREDICATE = "predicate"
    CONVERTER = "converter"
    HEADER_CONVERTER = "header_converter"


@dataclass(frozen=True)
class PluginRef:
    """A picklable address of a plugin class: where it lives and what it is called.

    ``location`` is the plugin location directory (None for built-ins on the worker's
    own path); ``module`` and ``qualname`` name the class inside it. ``load()`` works in
    any process that has connect_lite installed, such as a Spark Python worker, and
    always loads the same isolated copy.
    """

    location: str | None
    module: str
    qualname: str

    def load(self) -> type[Any]:
        from connect_lite.plugins.isolation import load_class

        return load_class(self)


@dataclass(frozen=True)
class PluginDesc:
    """One installed plugin class at one version."""

    class_name: str  # the canonical name: module path inside the location + class name
    type: PluginType
    version: str  # what version() returns; "undefined" when the plugin gives none
    ref: PluginRef
    cls: builtins.type[Any]

    @property
    def location(self) -> str | None:
        return self.ref.location
