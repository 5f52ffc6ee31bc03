"""A transformation that takes a fixed time per record: a busy connector's workload for the
fair-sharing test. Pickled by value (cloudpickle), so executors need no copy of this module."""

from __future__ import annotations

import time
from typing import Any

from connect_lite.api import ConfigDef, Transformation


class SlowTransformation(Transformation):
    """Sleeps ``seconds`` per record, then passes it on unchanged."""

    def __init__(self, seconds: float = 0.001) -> None:
        self.seconds = seconds

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, config: dict[str, str]) -> None:
        pass

    def apply(self, record: Any) -> Any:
        time.sleep(self.seconds)
        return record
