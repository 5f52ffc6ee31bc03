"""A source of Structs with a schema, for transform chains on the column form."""

from __future__ import annotations

import threading
from typing import Any

from connect_lite.api import (
    ConfigDef,
    Importance,
    Schema,
    SchemaBuilder,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Struct,
    Type,
)

VERSION = "1.0.0"
PERSON = (
    SchemaBuilder.struct()
    .name("Person")
    .field("id", Schema.INT64_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("email", Schema.OPTIONAL_STRING_SCHEMA)
    .build()
)


class PeopleSourceConnector(SourceConnector):
    """Writes ``count`` Person structs (id, name, email) to ``topic``, then idles."""

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("topic", Type.STRING, importance=Importance.HIGH, doc="Where to write.")
            .define("count", Type.INT, 10, importance=Importance.LOW, doc="How many people.")
        )

    def start(self, config: dict[str, str]) -> None:
        self._config = dict(config)

    def task_class(self) -> type[Any]:
        return PeopleSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._config)]

    def stop(self) -> None:
        pass


class PeopleSourceTask(SourceTask):
    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        self.topic = config["topic"]
        self.count = int(config.get("count", "10"))
        offset = self.context.offset_storage_reader().offset({"people": self.topic})
        self.next = int(offset["next"]) if offset else 0
        self._stopped = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        if self.next >= self.count:
            self._stopped.wait(0.1)
            return None
        records = [
            SourceRecord(
                {"people": self.topic},
                {"next": i + 1},
                self.topic,
                Struct(PERSON, {"id": i, "name": f"person-{i}", "email": f"p{i}@example.com"}),
                value_schema=PERSON,
            )
            for i in range(self.next, self.count)
        ]
        self.next = self.count
        return records

    def stop(self) -> None:
        self._stopped.set()
