"""A real herder and worker over memory stores for unit tests; tasks are recorded, not run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from connect_lite.config.worker import WorkerConfig
from connect_lite.pipeline.session import SparkRuntime
from connect_lite.plugins.registry import Plugins
from connect_lite.runtime.herder import StandaloneHerder
from connect_lite.runtime.status import StatusReporter
from connect_lite.storage.memory import open_memory_stores
from connect_lite.worker_main import build_herder

BUNDLED = str(Path(__file__).resolve().parents[3] / "plugins")
"""The bundled plugins (demo counter, file source and sink)."""


class CountingProxy:
    """Wraps a store and counts the calls of each of its methods."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.inner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return method(*args, **kwargs)

        return counted


@dataclass
class HerderParts:
    herder: StandaloneHerder
    configs: CountingProxy
    status: StatusReporter
    started: list[tuple[Any, ...]] = field(default_factory=list)
    """The worker's start_task calls: (name, task, task config, target); no thread runs."""

    def stop(self) -> None:
        self.herder.stop()
        self.status.close()


def herder_parts() -> HerderParts:
    """A herder built as worker_main builds one, with the config store's calls counted.

    The worker's ``start_task`` only records its calls, so no task thread, Kafka client or
    Spark session is needed. Call ``stop()`` when done."""
    stores = open_memory_stores()
    configs = CountingProxy(stores.configs)
    stores.configs = configs  # type: ignore[assignment]
    config = WorkerConfig({"bootstrap.servers": "localhost:1", "plugin.path": BUNDLED})
    status = StatusReporter(stores.statuses, "w", config.status_retry_policy)
    herder = build_herder(config, stores, Plugins([BUNDLED]), SparkRuntime(), status, None)
    made = HerderParts(herder, configs, status)
    herder.worker.start_task = lambda *args: made.started.append(args)  # type: ignore[method-assign]
    return made
