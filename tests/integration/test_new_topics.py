"""A sink sees a topic created after it started (by ``topics`` and by ``topics.regex``), here
a topic a source in the same worker creates by writing to it. Real broker, worker and Spark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from tests.integration.testkit import lines, sink_config, source_config, unique

pytestmark = pytest.mark.integration

RECORDS = 5


def received(out: Path) -> list[tuple[str, Any]]:
    return [(row["topic"], row["value"]) for row in map(json.loads, lines(out))]


def test_sinks_see_topics_a_source_creates_after_they_started(
    worker: EmbeddedConnect, kafka: KafkaHelpers
) -> None:
    u = unique("late")
    named, matched = f"{u}-named", f"{u}-rx-a"
    by_name, by_regex = worker.workdir / f"{u}-name.jsonl", worker.workdir / f"{u}-regex.jsonl"
    worker.create_running(unique("sink"), sink_config(named, by_name), tasks=1)
    regex = {**sink_config("", by_regex), "topics": "", "topics.regex": f"{u}-rx-.*"}
    worker.create_running(unique("sink"), regex, tasks=1)
    assert not {named, matched} & kafka.list_topics()  # the precondition: neither exists yet

    # The sources create the topics by writing to them, in the same worker.
    worker.create_running(unique("src"), source_config(named, **{"max.records": str(RECORDS)}), 1)
    worker.create_running(unique("src"), source_config(matched, **{"max.records": str(RECORDS)}), 1)

    values = [f"value-{n}" for n in range(RECORDS)]
    for out, topic in ((by_name, named), (by_regex, matched)):
        expected = [(topic, v) for v in values]
        wait_for(lambda: received(out) == expected, 60, what=f"{out.name} holding {expected}")  # noqa: B023
