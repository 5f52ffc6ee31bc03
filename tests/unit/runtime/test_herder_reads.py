"""One create reads the connector config once (does it exist?) and no task configs back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from connect_lite.config.worker import WorkerConfig
from connect_lite.pipeline.session import SparkRuntime
from connect_lite.plugins.registry import Plugins
from connect_lite.runtime.herder import StandaloneHerder
from connect_lite.runtime.status import StatusReporter
from connect_lite.storage.memory import open_memory_stores
from connect_lite.storage.states import TargetState
from connect_lite.worker_main import build_herder

BUNDLED = str(Path(__file__).resolve().parents[3] / "plugins")
COUNTER = {"connector.class": "CounterSource", "topic": "t", "tasks.max": "1"}


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


@pytest.fixture
def herder() -> Iterator[tuple[StandaloneHerder, CountingProxy, list[tuple[Any, ...]]]]:
    """A real herder and worker over memory stores; tasks are recorded, not started."""
    stores = open_memory_stores()
    configs = CountingProxy(stores.configs)
    stores.configs = configs  # type: ignore[assignment]
    config = WorkerConfig({"bootstrap.servers": "localhost:1", "plugin.path": BUNDLED})
    status = StatusReporter(stores.statuses, "w", config.status_retry_policy)
    herder = build_herder(config, stores, Plugins([BUNDLED]), SparkRuntime(), status, None)
    started: list[tuple[Any, ...]] = []
    herder.worker.start_task = lambda *args: started.append(args)  # type: ignore[method-assign]
    yield herder, configs, started
    herder.stop()
    status.close()


def test_one_create_reads_the_config_once_and_no_task_configs(
    herder: tuple[StandaloneHerder, CountingProxy, list[tuple[Any, ...]]],
) -> None:
    real, configs, started = herder
    info = real.create_connector("c", dict(COUNTER))
    reads = {k: v for k, v in configs.calls.items() if k.startswith("get_")}
    assert reads == {"get_connector_config": 1}  # does it exist already?
    (task,) = configs.inner.get_task_configs("c")
    assert task == {**COUNTER, "name": "c", "task.class": task["task.class"]}
    assert started == [("c", 0, task, TargetState.RUNNING)]
    assert info.tasks == [0] and info.config == {**COUNTER, "name": "c"}


@pytest.mark.parametrize("state", [None, "PAUSED", "STOPPED"])
def test_a_create_answers_what_a_read_gives(
    herder: tuple[StandaloneHerder, CountingProxy, list[tuple[Any, ...]]], state: str | None
) -> None:
    real, _, _ = herder
    assert real.create_connector("c", dict(COUNTER), state) == real.connector_info("c")


def test_a_put_answers_what_a_read_gives(
    herder: tuple[StandaloneHerder, CountingProxy, list[tuple[Any, ...]]],
) -> None:
    real, _, started = herder
    created, info = real.put_connector_config("c", dict(COUNTER))
    assert created and info == real.connector_info("c")
    real.pause_connector("c")
    created, info = real.put_connector_config("c", {**COUNTER, "topic": "u"})
    assert not created and info == real.connector_info("c") and info.tasks == [0]
    assert [s[3] for s in started] == [TargetState.RUNNING]  # paused: tasks kept, none started
