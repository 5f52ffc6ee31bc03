"""The status.storage.retry.* worker keys: defaults, ranges and initial <= max."""

from __future__ import annotations

import pytest

from connect_lite.api.errors import ConfigError
from connect_lite.config.retry_policy import RetryPolicy
from connect_lite.config.worker import WorkerConfig

BASE = {"bootstrap.servers": "127.0.0.1:9092"}
P = "status.storage.retry."


def test_defaults_are_the_issue_table() -> None:
    assert WorkerConfig(BASE).status_retry_policy == RetryPolicy(5, 300, 10000, 2.0, 0.25)


def test_values_are_parsed() -> None:
    props = {
        **BASE,
        P + "max.retries": "0",
        P + "initial.backoff.ms": "10",
        P + "max.backoff.ms": "10",
        P + "backoff.multiplier": "1.0",
        P + "jitter.factor": "1.0",
    }
    assert WorkerConfig(props).status_retry_policy == RetryPolicy(0, 10, 10, 1.0, 1.0)


def test_initial_above_max_is_an_error_naming_the_key() -> None:
    with pytest.raises(ConfigError) as raised:
        WorkerConfig({**BASE, P + "initial.backoff.ms": "2000", P + "max.backoff.ms": "1000"})
    message = str(raised.value)
    assert message.startswith(f"Invalid value 2000 for configuration {P}initial.backoff.ms")
    assert f"{P}max.backoff.ms" in message
    assert list(raised.value.errors) == [P + "initial.backoff.ms"]


@pytest.mark.parametrize(
    "key, value",
    [
        ("jitter.factor", "1.5"),
        ("jitter.factor", "-0.1"),
        ("backoff.multiplier", "0.5"),
        ("max.retries", "-1"),
        ("max.retries", "2147483648"),
        ("initial.backoff.ms", "-1"),
        ("max.backoff.ms", "-5"),
        ("backoff.multiplier", "fast"),
    ],
)
def test_out_of_range_values_stop_the_worker(key: str, value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        WorkerConfig({**BASE, P + key: value})
    assert f"for configuration {P}{key}" in str(raised.value)
