"""``connect-lite consume TOPIC``: what a topic holds, printed, on a real broker."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from connect_lite.testing.kafka_helpers import KafkaHelpers
from tests.integration.testkit import REPO

pytestmark = pytest.mark.integration


def consume(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "connect_lite", "consume", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_prints_every_value_of_every_partition_from_the_beginning(
    kafka: KafkaHelpers, bootstrap_servers: str
) -> None:
    topic = f"consume-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, partitions=2)
    kafka.produce(topic, ["a", ("k", "b"), None], partition=0)
    kafka.produce(topic, ["c"], partition=1)

    done = consume("--bootstrap-server", bootstrap_servers, "--timeout-ms", "2000", topic)

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[lines.index("a") :][:3] == ["a", "b", "null"]  # one partition's order is kept
    assert sorted(lines) == ["a", "b", "c", "null"]
    assert done.stderr.splitlines()[-1] == "Processed a total of 4 messages"


def test_stops_after_max_messages(kafka: KafkaHelpers, bootstrap_servers: str) -> None:
    topic = f"consume-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, partitions=1)
    kafka.produce(topic, ["one", "two", "three"])

    done = consume("--bootstrap-server", bootstrap_servers, "--max-messages", "2", topic)

    assert (done.returncode, done.stdout) == (0, "one\ntwo\n")


def test_a_topic_that_does_not_appear_is_exit_2_with_the_reason(bootstrap_servers: str) -> None:
    done = consume("--bootstrap-server", bootstrap_servers, "--timeout-ms", "500", "no-such")

    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip() == (
        f"connect-lite consume: Topic no-such did not appear at {bootstrap_servers} within "
        "0.5 s (or no broker answered there)"
    )


def test_the_bootstrap_server_is_required() -> None:
    done = consume("lines")

    assert done.returncode == 1
    assert "the following arguments are required: --bootstrap-server" in done.stderr
