"""acme-connect-demo's source connector at 2.0.0, as a plugin location: it idles."""

from __future__ import annotations

from typing import Any

from connect_lite.api import ConfigDef, SourceConnector, SourceRecord, SourceTask, Type

VERSION = "2.0.0"


class AcmeSourceTask(SourceTask):
    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None:
        pass


class AcmeSourceConnector(SourceConnector):
    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return ConfigDef().define("topic", Type.STRING)

    def start(self, config: dict[str, str]) -> None:
        self.props = dict(config)

    def task_class(self) -> type[Any]:
        return AcmeSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass
