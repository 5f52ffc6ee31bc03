"""Task configs as the worker generates them: task.class and the sink's topics."""

from __future__ import annotations

from tests.unit.control.real_herder import HerderParts

SINK = {"connector.class": "FileStreamSink", "file": "unused.txt", "tasks.max": "2"}


def test_sink_task_configs_carry_the_connector_topics_as_given(parts: HerderParts) -> None:
    parts.herder.create_connector("s", {**SINK, "topics": "a, b"})
    configs = [started[2] for started in parts.started]
    assert len(configs) == 2
    assert all(c["topics"] == "a, b" and c["task.class"].endswith("Task") for c in configs)
    assert "topics.regex" not in configs[0]
