"""The docs' testing example: a source checked in Kafka, a sink checked through the offsets API."""

from pathlib import Path

import pytest

from connect_lite.testing import EmbeddedConnect

pytest_plugins = ["connect_lite.testing.pytest_plugin"]  # not needed once connect-lite is installed
pytestmark = pytest.mark.connect_lite(reuse="module")  # one worker for this module's tests

STRINGS = {"value.converter": "org.apache.kafka.connect.storage.StringConverter"}


def test_source_copies_the_file_into_kafka(connect: EmbeddedConnect, tmp_path: Path) -> None:
    connect.create_topic("greetings", partitions=1)  # one partition: one order to check
    source_file = tmp_path / "greetings.txt"
    source_file.write_text("hello\nworld\n")
    connect.client.create(
        "greetings-source",
        {"connector.class": "FileStreamSource", "file": str(source_file), "topic": "greetings"}
        | STRINGS,
    )
    connect.wait_running("greetings-source", tasks=1)

    records = connect.wait_topic_records("greetings", 2)
    assert [record.value for record in records] == [b"hello", b"world"]


def test_sink_commits_the_offsets_of_what_it_wrote(
    connect: EmbeddedConnect, tmp_path: Path
) -> None:
    connect.create_topic("orders", partitions=1)
    connect.produce("orders", ["order-1", "order-2", "order-3"])
    out_file = tmp_path / "orders.txt"
    connect.client.create(
        "orders-sink",
        {"connector.class": "FileStreamSink", "file": str(out_file), "topics": "orders"} | STRINGS,
    )
    connect.wait_running("orders-sink", tasks=1)

    def all_three_committed(offsets: list[dict]) -> bool:
        return [o["offset"]["kafka_offset"] for o in offsets] == [3]

    offsets = connect.wait_offsets("orders-sink", all_three_committed)
    assert offsets[0]["partition"] == {"kafka_topic": "orders", "kafka_partition": 0}
    assert out_file.read_text().splitlines() == ["order-1", "order-2", "order-3"]
