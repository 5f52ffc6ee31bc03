"""What the sink task tests over fakes share: a status store that forgets, and a loop driver."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from connect_lite.dataplane.sink_task import WorkerSinkTask


class Status:
    """A status store that records nothing."""

    def task(self, *args: Any) -> None:
        pass


def until(task: WorkerSinkTask, done: Callable[[], bool], most: int = 300) -> None:
    """Run the task's loop until ``done()``; fail after ``most`` iterations."""
    for _ in range(most):
        if done():
            return
        task.iteration()
    raise AssertionError(f"not done after {most} iterations")
