"""Start-up pieces of the composition root: the stand-in herder the REST listener answers with
before the real one exists, the Kafka connection's error, and the one line when ready."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connect_lite.api.errors import ConfigError, ConnectError
from connect_lite.config.worker import WorkerConfig
from connect_lite.logs.loggers import Loggers
from connect_lite.rest import create_app
from connect_lite.worker_main import (
    StartingHerder,
    StartupTimer,
    connect_to_kafka,
    spark_progress,
    start_worker,
)
from tests.fakes import FakeClock
from tests.unit.rest.fake_herder import FakeHerder


def test_before_the_herder_exists_health_is_starting_with_the_step_and_the_rest_503() -> None:
    starting = StartingHerder()
    starting.step = "Connecting to Kafka at 127.0.0.1:9092."
    client = create_app(starting, Loggers()).test_client()
    health = client.get("/health")
    assert health.status_code == 503
    assert health.get_json() == {
        "status": "starting",
        "message": "Worker is still starting up. Connecting to Kafka at 127.0.0.1:9092.",
    }
    for path in ("/", "/connectors", "/connector-plugins", "/metrics"):
        response = client.get(path)
        assert response.status_code == 503, path
        assert response.get_json() == {
            "error_code": 503,
            "message": "Worker is still starting up.",
        }
    assert client.get("/admin/loggers").status_code == 200  # needs no herder

    starting.herder = FakeHerder()  # type: ignore[assignment]  # any HerderAPI will do
    assert client.get("/health").status_code == 200
    assert client.get("/connectors").status_code == 200


def test_the_ready_line_gives_every_part_its_seconds() -> None:
    clock = FakeClock()
    timer = StartupTimer(clock)
    for name, seconds in (("plugins", 0.4), ("state file", 0.01), ("REST", 0.02), ("Java", 0.1)):
        with timer.phase(name):
            clock.now += seconds
    clock.now += 0.03  # between the parts
    with timer.phase("broker"):
        clock.now += 0.5
    assert timer.summary("Spark still starting in the background") == (
        "Worker started in 1.06 s (plugins 0.40 s, state file 0.01 s, REST 0.02 s, Java 0.10 s, "
        "broker 0.50 s, Spark still starting in the background)"
    )


class SparkState:
    def __init__(
        self,
        start_error: str | None = None,
        started_in: float | None = None,
        unavailable: str | None = None,
    ) -> None:
        self.start_error = start_error
        self.started_in = started_in
        self.unavailable = unavailable


@pytest.mark.parametrize(
    "spark, text",
    [
        (SparkState(), "Spark still starting in the background"),
        (SparkState(started_in=4.237), "Spark 4.24 s"),
        (SparkState(start_error="Spark failed"), "Spark failed to start (see the ERROR above)"),
        (
            SparkState(unavailable="Spark is unreachable: no master"),
            "Spark's cluster is unreachable (see the ERROR above); retrying with backoff",
        ),
    ],
)
def test_sparks_part_of_the_ready_line(spark: Any, text: str) -> None:
    assert spark_progress(spark) == text


@pytest.fixture
def closed_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def test_an_unreachable_kafka_names_bootstrap_servers_and_the_embedded_broker(
    closed_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    servers = f"127.0.0.1:{closed_port}"
    config = WorkerConfig({"bootstrap.servers": servers, "bootstrap.timeout.ms": "1200"})
    main_log = caplog.at_level("INFO", logger="connect_lite.worker_main")
    with main_log, pytest.raises(ConnectError) as failed:
        connect_to_kafka(config)
    message = str(failed.value)
    assert message.startswith(f"Cannot connect to Kafka at {servers} (bootstrap.servers) within ")
    assert "Connection refused" in message
    assert message.endswith(
        "Check that the brokers are running and that bootstrap.servers names them, "
        "or set embedded.broker.enable=true to run a broker inside the worker."
    )
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert lines[0] == ("INFO", f"Connecting to Kafka at {servers}")
    assert lines[1][0] == "WARNING"
    assert lines[1][1].startswith(f"Kafka at {servers} does not answer yet (")
    assert lines[1][1].endswith("waiting up to 1.2 s in all (bootstrap.timeout.ms)")


def test_a_worker_client_key_its_client_would_refuse_stops_the_start(tmp_path: Path) -> None:
    props = {
        "bootstrap.servers": "127.0.0.1:1",
        "state.storage.file": str(tmp_path / "state.db"),
        "producer.linger.ms": "1000000",  # librdkafka: at most 900000
        "consumer.max.poll.records": "0",
        "admin.retries": "3",
    }
    with pytest.raises(ConfigError) as refused:
        start_worker(props, [])
    assert str(refused.value) == (
        "Invalid value 1000000 for configuration producer.linger.ms: librdkafka refuses it: "
        'Configuration property "queue.buffering.max.ms" value 1e+06 is outside allowed range '
        "0..900000\n"
        "Invalid value 0 for configuration consumer.max.poll.records: Value must be at least 1"
    )
    assert not (tmp_path / "state.db").exists()  # refused before anything started
