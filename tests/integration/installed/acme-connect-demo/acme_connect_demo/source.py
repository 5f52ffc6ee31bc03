"""AcmeSourceConnector: ``count`` records ``acme <n>`` into ``topic``, then idles.

It defines no ``version()``: connect-lite reports the version of its distribution.
"""

from __future__ import annotations

from typing import Any

from connect_lite.api import ConfigDef, SourceConnector, SourceRecord, SourceTask, Type


class AcmeSourceTask(SourceTask):
    def start(self, config: dict[str, str]) -> None:
        self.topic = config["topic"]
        self.left = int(config.get("count", "3"))
        self.next = 0

    def poll(self) -> list[SourceRecord] | None:
        if self.left <= 0:
            return None
        records = [
            SourceRecord({"acme": "0"}, {"n": self.next + i}, self.topic, f"acme {self.next + i}")
            for i in range(self.left)
        ]
        self.next, self.left = self.next + self.left, 0
        return records

    def stop(self) -> None:
        pass


class AcmeSourceConnector(SourceConnector):
    def config(self) -> ConfigDef:
        return ConfigDef().define("topic", Type.STRING).define("count", Type.INT, 3)

    def start(self, config: dict[str, str]) -> None:
        self.props = dict(config)

    def task_class(self) -> type[Any]:
        return AcmeSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass
