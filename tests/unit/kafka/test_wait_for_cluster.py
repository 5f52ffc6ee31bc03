"""Reaching the cluster at start-up: the first failure is reported with librdkafka's reason,
then the wait goes on until the timeout; the error names the last cause."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from connect_lite.api.errors import ConnectError
from connect_lite.kafka.admin import wait_for_cluster_id


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound (so no one else takes it), not listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def test_an_unreachable_cluster_is_reported_once_then_fails_with_the_cause(
    closed_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    told: list[str] = []
    with pytest.raises(ConnectError) as failed:
        wait_for_cluster_id({"bootstrap.servers": f"127.0.0.1:{closed_port}"}, 1.5, told.append)
    refused = f"127.0.0.1:{closed_port}/bootstrap: Connect to ipv4#127.0.0.1:{closed_port} failed"
    assert len(told) == 1 and told[0].startswith(refused), told
    assert "Connection refused" in told[0]
    assert str(failed.value).startswith(refused)
    # librdkafka's own line for every failed connection stays at DEBUG
    assert [r for r in caplog.records if r.name == "connect_lite.kafka.librdkafka"] == []


def test_a_timeout_shorter_than_the_first_try_reports_nothing_and_fails(
    closed_port: int,
) -> None:
    told: list[str] = []
    with pytest.raises(ConnectError, match="Connection refused"):
        wait_for_cluster_id({"bootstrap.servers": f"127.0.0.1:{closed_port}"}, 0.5, told.append)
    assert told == []


def test_after_the_first_try_the_wait_is_in_short_slices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """So a SIGTERM during start-up is handled within a slice, not after the whole timeout."""
    from confluent_kafka import KafkaError, KafkaException

    from connect_lite.kafka import admin as admin_module

    now = [0.0]
    waits: list[float] = []

    class Unreachable:
        def list_topics(self, timeout: float) -> None:
            waits.append(timeout)
            now[0] += timeout
            raise KafkaException(KafkaError(KafkaError._TRANSPORT, "Connection refused"))

        def poll(self, timeout: float) -> None:
            pass

    monkeypatch.setattr(admin_module, "new_client", lambda *args: Unreachable())
    with pytest.raises(ConnectError):
        wait_for_cluster_id({"bootstrap.servers": "x:1"}, 10.0, lambda _: None, lambda: now[0])
    assert waits[0] == admin_module.FIRST_ATTEMPT_S
    assert all(0 < wait <= admin_module.WAIT_SLICE_S for wait in waits[1:])
    assert sum(waits) == pytest.approx(10.0)
