"""Helpers shared by the batch job tests: spec builders, a consumed-message stand-in, and a
source job's send order and topic."""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass, field
from typing import Any

from connect_lite.kafka.batch_sender import sender_config
from connect_lite.kafka.clients import producer_config
from connect_lite.pipeline.source_send import SendOrder
from connect_lite.protocol.job_spec import JobSpec, TransformSpec
from connect_lite.testing.kafka_helpers import KafkaHelpers
from tests.integration.pipeline import plugins


@dataclass
class Message:
    """What the Kafka consumer hands the sink batch job."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] | None = field(default_factory=list)
    timestamp: int = 1_700_000_000_000
    timestamp_type: Any = 1


def spec(
    job_id: str,
    value: Any = plugins.Utf8Converter,
    transforms: tuple[TransformSpec, ...] = (),
    key: Any = plugins.Utf8Converter,
    header_fail_on: str | None = None,
    builds: str | None = None,
    key_fail_on: str | None = None,
    value_fail_on: str | None = None,
    value_args: tuple[Any, ...] = (),
) -> JobSpec:
    """A JobSpec of test converters; factories log their builds to ``builds``."""
    cfg = {"fail_on": value_fail_on} if value_fail_on else {}
    key_cfg = {"fail_on": key_fail_on} if key_fail_on else {}
    value_factory = functools.partial(plugins.build, value, builds, *value_args, **cfg)
    return JobSpec(
        job_id,
        functools.partial(plugins.key_build, key, builds, **key_cfg),
        value_factory,
        functools.partial(plugins.Utf8HeaderConverter, header_fail_on),
        transforms,
    )


def send_order(
    bootstrap: str, known: frozenset[str] | None = None, each: bool = False
) -> SendOrder:
    """What a source job's executors produce with: a producer config on the broker."""
    config = producer_config({"bootstrap.servers": bootstrap}, "send-test", 0)
    return SendOrder(sender_config(config), known, each)


def new_topic(kafka: KafkaHelpers, prefix: str, partitions: int = 1) -> str:
    """A topic of its own for a test, created."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(name, partitions)
    return name
