"""A source plugin for source tasks' unit tests: its records once, then nothing."""

from __future__ import annotations

import time
from collections.abc import Sequence

from connect_lite.api.connector import SourceTask
from connect_lite.api.records import SourceRecord


class OnceSource(SourceTask):
    """Returns ``records`` from its first poll; later polls wait a little and return None."""

    def __init__(self, records: Sequence[SourceRecord]) -> None:
        self.records = list(records)
        self.sent = False

    def version(self) -> str:
        return "1.0"

    def start(self, config: dict[str, str]) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        if self.sent:
            time.sleep(0.01)  # as a source with nothing new would wait
            return None
        self.sent = True
        return self.records

    def stop(self) -> None:
        pass
