"""A real herder and worker over memory stores for unit tests; tasks are recorded, not run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from connect_lite.config.resolution import Redactor
from connect_lite.config.worker import WorkerConfig
from connect_lite.control.config_providers import load_config_providers
from connect_lite.control.herder import StandaloneHerder
from connect_lite.control.status import StatusReporter
from connect_lite.pipeline.session import SparkEngine
from connect_lite.plugins.registry import Plugins
from connect_lite.storage.memory import open_memory_stores
from connect_lite.worker_main import build_herder

BUNDLED = str(Path(__file__).resolve().parents[3] / "plugins")
"""The demo counters at 1.0.0 and 2.0.0 (FileStream and counter 1.0.0 are also built in)."""
TEST_PLUGINS = str(Path(__file__).resolve().parents[2] / "plugins")
"""The test plugins (testkit and the versioned bundles)."""


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


def herder_parts(worker_props: dict[str, str] | None = None) -> HerderParts:
    """A herder built as worker_main builds one, with the config store's calls counted.

    ``worker_props`` adds worker keys (``config.providers`` ones configure providers; the
    test plugins are on the plugin path too). The worker's ``start_task`` only records its
    calls, so no task thread, Kafka client or Spark session is needed. Call ``stop()`` when
    done."""
    stores = open_memory_stores()
    configs = CountingProxy(stores.configs)
    stores.configs = configs  # type: ignore[assignment]
    props = {"bootstrap.servers": "localhost:1", "plugin.path": BUNDLED, **(worker_props or {})}
    config = WorkerConfig(props)
    plugins = Plugins([BUNDLED, TEST_PLUGINS])
    redactor = Redactor()
    status = StatusReporter(stores.statuses, "w", config.status_retry_policy, redactor=redactor)
    resolver = load_config_providers(props, plugins, redactor)
    herder = build_herder(config, stores, plugins, SparkEngine(), status, None, resolver)
    made = HerderParts(herder, configs, status)
    herder.worker.start_task = lambda *args: made.started.append(args)  # type: ignore[method-assign]
    return made
