"""Plugin types and descriptors (PluginRef, the picklable address, lives in isolation.py)."""

from __future__ import annotations

import builtins
import enum
from dataclasses import dataclass
from typing import Any

from connect_lite.plugins.isolation import PluginRef

__all__ = ["LISTED_TYPES", "PluginDesc", "PluginRef", "PluginType"]


class PluginType(enum.Enum):
    """The kinds of plugin, with the names GET /connector-plugins uses."""

    SINK = "sink"
    SOURCE = "source"
    TRANSFORMATION = "transformation"
    PREDICATE = "predicate"
    CONVERTER = "converter"
    HEADER_CONVERTER = "header_converter"
    CONFIG_PROVIDER = "config_provider"  # resolves ${...} references; not in the listings


LISTED_TYPES = [t for t in PluginType if t is not PluginType.CONFIG_PROVIDER]
"""What the REST listings show, in their order: as Kafka, they leave config providers out."""


@dataclass(frozen=True)
class PluginDesc:
    """One installed plugin class at one version."""

    class_name: str  # the declared (Java) class name, else module path inside location + class
    type: PluginType
    version: str  # what version() returns; "undefined" when the plugin gives none
    ref: PluginRef
    cls: builtins.type[Any]

    @property
    def location(self) -> str | None:
        return self.ref.location
