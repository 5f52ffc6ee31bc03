"""A task plan for the task hosts' unit tests: a source task that these tests never build."""

from __future__ import annotations

from typing import Any

from connect_lite.plugins.types import PluginRef
from connect_lite.protocol.job_spec import JobSpec
from connect_lite.protocol.plan import Component, TaskPlan
from connect_lite.protocol.states import TargetState


def _nothing() -> Any:
    raise AssertionError("not built in these tests")


def plan(connector: str = "c", task: int = 0) -> TaskPlan:
    """Picklable, as a plan crosses to the data-plane process."""
    return TaskPlan(
        connector=connector,
        task=task,
        kind="source",
        target=TargetState.RUNNING,
        task_class=PluginRef(None, "x", "Y"),
        task_config={},
        spec=JobSpec("s", _nothing, _nothing, _nothing),
        job_group=f"connect-lite:{connector}-{task}",
        flush_interval_ms=1000,
        components=(Component("value_converter", "", "StringConverter", "4.1"),),
    )
