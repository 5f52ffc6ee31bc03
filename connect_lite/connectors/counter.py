"""The demo counter, built in at 1.0.0: counts, one record per interval.

``plugins/demo-counter-1.0.0`` and ``plugins/demo-counter-2.0.0`` ship the same module as a
plugin location at two versions (KIP-891). Version 1.0.0 writes ``count <n>``; version 2.0.0
writes ``count <n> (v2)``. Both resume from their committed offset, so an upgrade or rollback
continues the count where it stopped. The copy of 1.0.0 in ``plugins/`` is this class at the
same version: the built-in copy is the one used.
"""

from __future__ import annotations

import time
from typing import Any

from connect_lite.api import (
    ConfigDef,
    Importance,
    Schema,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Type,
)

VERSION = "1.0.0"


def render(n: int) -> str:
    """The record value this version writes for count ``n``."""
    return f"count {n}" if VERSION == "1.0.0" else f"count {n} (v2)"


class CounterSourceConnector(SourceConnector):
    """One task that counts up from 0 into ``topic``."""

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("topic", Type.STRING, "counter", None, Importance.HIGH, "Target topic.")
            .define("interval.ms", Type.INT, 1000, None, Importance.LOW, "Time between records.")
        )

    def start(self, config: dict[str, str]) -> None:
        self._config = dict(config)

    def task_class(self) -> type[Any]:
        return CounterSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._config)]

    def stop(self) -> None:
        pass


class CounterSourceTask(SourceTask):
    PARTITION = {"counter": "0"}

    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        self.topic = config.get("topic", "counter")
        self.interval = int(config.get("interval.ms", "1000")) / 1000
        offset = self.context.offset_storage_reader().offset(self.PARTITION)
        self.next = int(offset["next"]) if offset else 0
        self.due = time.monotonic()

    def poll(self) -> list[SourceRecord] | None:
        wait = self.due - time.monotonic()
        if wait > 0:
            time.sleep(min(wait, 0.1))
            return None
        self.due = time.monotonic() + self.interval
        n, self.next = self.next, self.next + 1
        return [
            SourceRecord(
                source_partition=self.PARTITION,
                source_offset={"next": n + 1},
                topic=self.topic,
                value=render(n),
                value_schema=Schema.STRING_SCHEMA,
            )
        ]

    def stop(self) -> None:
        pass
