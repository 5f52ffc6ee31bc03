"""A small fake plugin registry and tiny plugins for the config tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from connect_lite.api import (
    ConfigDef,
    Converter,
    HeaderConverter,
    Importance,
    Predicate,
    Range,
    SinkConnector,
    SourceConnector,
    Transformation,
    Type,
)
from connect_lite.api.errors import ConfigError, NotFoundError
from connect_lite.plugins.types import PluginDesc, PluginRef, PluginType


class _Connector:
    def start(self, config: dict[str, str]) -> None:
        pass

    def task_class(self) -> type[Any]:
        return object

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{}]

    def stop(self) -> None:
        pass


class FileSource(_Connector, SourceConnector):
    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("file", Type.STRING, importance=Importance.HIGH, doc="file", group="File")
            .define("batch.size", Type.INT, 10, Range.at_least(1), doc="batch")
        )


class FileSourceV1(FileSource):
    def version(self) -> str:
        return "1.0.0"


class FileSourceV2(FileSource):
    def version(self) -> str:
        return "2.0.0"


class PickySink(_Connector, SinkConnector):
    """Rejects file=bad through validate()."""

    def config(self) -> ConfigDef:
        return ConfigDef().define("file", Type.STRING, "out.txt", doc="file", group="File")

    def validate(self, config: dict[str, str]) -> None:
        if config.get("file") == "bad":
            raise ConfigError("bad file", {"file": ["The file may not be 'bad'"]})
        if config.get("file") == "worse":
            raise ConfigError("The whole config is wrong")


class StrictConverter(Converter):
    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("schemas.enable", Type.BOOLEAN, True, doc="schemas", group="Strict")
            .define("width", Type.INT, 5, Range.at_least(1), doc="width", group="Strict")
        )

    def from_connect_data(self, topic: str, schema: Any, value: Any) -> bytes | None:
        return None

    def to_connect_data(self, topic: str, value: bytes | None) -> Any:
        return None


class PlainHeaderConverter(HeaderConverter):
    def from_connect_header(self, topic: str, key: str, schema: Any, value: Any) -> bytes | None:
        return None

    def to_connect_header(self, topic: str, key: str, value: bytes | None) -> Any:
        return None


class AddField(Transformation[Any]):
    def config(self) -> ConfigDef:
        return ConfigDef().define("field", Type.STRING, doc="the field", importance=Importance.HIGH)

    def apply(self, record: Any) -> Any:
        return record


class IsTombstone(Predicate[Any]):
    def test(self, record: Any) -> bool:
        return False


class FakePlugins:
    """The registry API the config code uses, over a fixed list of classes."""

    def __init__(self, entries: list[tuple[str, type, PluginType, str]]) -> None:
        self.descs = [
            PluginDesc(name, ptype, version, PluginRef(None, cls.__module__, cls.__qualname__), cls)
            for name, cls, ptype, version in entries
        ]

    def _copies(self, name: str, types: Iterable[PluginType]) -> list[PluginDesc]:
        wanted = set(types)
        return [
            d
            for d in self.descs
            if d.type in wanted and name in (d.class_name, d.class_name.rsplit(".", 1)[-1])
        ]

    def find(
        self,
        name: str,
        types: Iterable[PluginType],
        version: str | None = None,
        prefer_location: str | None = None,
    ) -> PluginDesc:
        types = list(types)
        copies = self._copies(name, types)
        if not copies:
            raise NotFoundError(
                f"Failed to find any class that implements Connector and which name matches {name}"
            )
        if version is None or version == "latest":
            return copies[-1]
        if version.startswith("(") or version.startswith("[,"):
            raise ConfigError(f"Invalid version specification: {version}")
        for desc in copies:
            if desc.version == version.strip("[]"):
                return desc
        raise ConfigError(
            f"Plugin {copies[0].class_name} not found that matches the version range "
            f"[{version.strip('[]')}], available versions: "
            f"[{', '.join(d.version for d in copies)}]"
        )

    def versions(self, name: str, types: Iterable[PluginType]) -> list[str]:
        return [d.version for d in self._copies(name, types)]

    def all(self, types: Iterable[PluginType] | None = None) -> list[PluginDesc]:
        wanted = set(types) if types is not None else set(PluginType)
        return [d for d in self.descs if d.type in wanted]

    def new_instance(self, desc: PluginDesc) -> Any:
        return desc.cls()

    def connector_type(self, cls: type) -> str:
        if issubclass(cls, SourceConnector):
            return "source"
        return "sink" if issubclass(cls, SinkConnector) else "unknown"


JSON = "org.apache.kafka.connect.json.JsonConverter"
HEADER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
