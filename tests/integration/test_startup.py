"""Start-up fails fast and says why: a taken port, no Java, no Kafka; a Spark that cannot start
leaves the worker up, 503 on /health with the reason, and fails tasks with it; a restart on the
embedded broker names the connectors whose topics are gone."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from connect_lite.pipeline.java import INSTALL_ADVICE
from connect_lite.testing import EmbeddedConnect, wait_for
from tests.integration.testkit import REPO, lines, source_config, unique

pytestmark = pytest.mark.integration


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound (so no one takes it), not listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def stopped_with(worker: EmbeddedConnect, code: int = 2) -> str:
    """The worker exited with ``code``; its log, which has no traceback."""
    assert worker.wait_worker_exit(120) == code, worker.log_text()
    log = worker.log_text()
    assert "Traceback" not in log, log
    return log


def one_error(log: str) -> str:
    """The one ERROR line of the log, continuation lines included."""
    lines = log.splitlines()
    starts = [i for i, line in enumerate(lines) if "] ERROR " in line]
    assert len(starts) == 1, log
    following = lines[starts[0] + 1 :]
    ends = [i for i, line in enumerate(following) if line.startswith("[")]
    return "\n".join([lines[starts[0]], *following[: ends[0] if ends else None]])


def tail_free(line: str) -> str:
    """A log line without the line number of its ``(logger:line)`` tail."""
    return line.rpartition(":")[0] if line.endswith(")") else line


def nothing_slow_started(log: str) -> None:
    assert "Embedded broker listening" not in log, "a broker started before the check"
    assert "Connecting to Kafka" not in log, "Kafka was contacted before the check"
    assert "Starting Spark session" not in log, "Spark started before the check"


def test_a_taken_port_stops_the_start_before_the_broker_kafka_and_spark(
    new_worker: Callable[..., EmbeddedConnect],
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        own_broker = {"embedded.broker.enable": "true", "listeners": f"http://127.0.0.1:{port}"}
        worker = new_worker(start_broker=False, worker_properties=own_broker)
        worker.start(wait_healthy=False)
        log = stopped_with(worker)
    assert tail_free(one_error(log)).endswith(
        f"] ERROR Stopping after startup failure: Could not bind REST listener "
        f"http://127.0.0.1:{port}: the port is in use. Stop what uses it, or change listeners "
        "in the worker config (listeners=http://host:port). (connect_lite.cli"
    )
    nothing_slow_started(log)


def test_without_java_the_start_stops_with_the_advice_of_setup_sh(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(empty)
    own_broker = {"embedded.broker.enable": "true"}
    worker = new_worker(start_broker=False, worker_properties=own_broker, env=env)
    worker.start(wait_healthy=False)
    error = one_error(stopped_with(worker))
    assert tail_free(error).endswith(
        "] ERROR Stopping after startup failure: connect-lite needs Java 17 or newer (PySpark 4 "
        f"runs on the JVM), and `java` is not on PATH.\n{INSTALL_ADVICE} (connect_lite.cli"
    )
    nothing_slow_started(worker.log_text())


def test_a_kafka_standalone_config_with_no_broker_names_what_to_change(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path, closed_port: int
) -> None:
    jar = tmp_path / "connect-file-4.1.0.jar"
    jar.write_bytes(b"PK")
    servers = f"127.0.0.1:{closed_port}"
    kafka_keys = {
        "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
        "plugin.path": f"{jar},{REPO / 'plugins'}",
        "bootstrap.timeout.ms": "2000",
    }
    worker = new_worker(bootstrap_servers=servers, worker_properties=kafka_keys)
    worker.start(wait_healthy=False)
    log = stopped_with(worker)
    warnings = [line for line in log.splitlines() if "] WARN " in line]
    assert any(
        f"plugin.path entry {jar} is a Java archive; skipping it: connect-lite runs Python "
        "plugins only" in line
        for line in warnings
    ), log
    assert any(
        "Worker config key offset.storage.file.filename is not used by connect-lite: source "
        "offsets are kept in state.storage.file" in line
        for line in warnings
    ), log
    assert f"] INFO Connecting to Kafka at {servers} (connect_lite.worker_main:" in log
    assert any(f"Kafka at {servers} does not answer yet (" in line for line in warnings), log
    error = one_error(log)
    assert f"Cannot connect to Kafka at {servers} (bootstrap.servers) within 2 s: " in error
    assert "Connection refused" in error
    assert tail_free(error).endswith(
        "Check that the brokers are running and that bootstrap.servers names them, or set "
        "embedded.broker.enable=true to run a broker inside the worker. (connect_lite.cli"
    )
    # Spark starts beside the broker and Kafka's connection: stopped_with saw the failed
    # start stop it too (exit 2, no traceback).


def test_while_kafka_does_not_answer_the_rest_api_says_starting(
    new_worker: Callable[..., EmbeddedConnect], closed_port: int
) -> None:
    servers = f"127.0.0.1:{closed_port}"
    worker = new_worker(
        bootstrap_servers=servers, worker_properties={"bootstrap.timeout.ms": "600000"}
    )
    worker.start(wait_healthy=False)

    def waiting_for_kafka() -> object:
        response = worker.http.get("/health")
        return response if "Kafka" in response.body["message"] else None

    response = wait_for(waiting_for_kafka, 60, what="/health naming the Kafka stage")
    assert (response.status, response.body) == (
        503,
        {
            "status": "starting",
            "message": f"Worker is still starting up. Connecting to Kafka at {servers}.",
        },
    )
    connectors = worker.http.get("/connectors")
    assert (connectors.status, connectors.body) == (
        503,
        {"error_code": 503, "message": "Worker is still starting up."},
    )
    # SIGTERM interrupts the start (which would wait 10 min for Kafka): a clean exit 0.
    assert worker.terminate_worker() == 0
    assert "Start-up interrupted by SIGTERM; stopped what had started" in worker.log_text()


def test_a_spark_that_cannot_start_gives_503_on_health_and_fails_tasks_with_the_reason(
    new_worker: Callable[..., EmbeddedConnect],
) -> None:
    # A heap of 1 byte: the JVM refuses to start, so the session fails within a second.
    worker = new_worker(worker_properties={"spark.driver.memory": "1"})
    worker.start(wait_healthy=False)

    def unavailable() -> object:
        response = worker.http.get("/health")
        return response if response.body.get("status") == "unhealthy" else None

    response = wait_for(unavailable, 120, what="/health unhealthy")
    reason = "Spark failed to start: [JAVA_GATEWAY_EXITED]"
    assert response.status == 503
    assert response.body["message"].startswith(f"Worker cannot run tasks: {reason}")
    assert "spark.driver.memory" in response.body["message"]
    log = worker.log_text()
    assert f"] ERROR {reason}" in log
    assert "Worker started in " in log

    name = unique("no-spark")
    config = source_config(unique("topic"))
    assert worker.http.put(f"/connectors/{name}/config", config).status == 201

    def failed_task() -> object:
        tasks = worker.client.status(name)["tasks"]
        return tasks[0] if tasks and tasks[0]["state"] == "FAILED" else None

    task = wait_for(failed_task, 120, what="the task FAILED")
    assert f"connect_lite.pipeline.session.SparkStartError: {reason}" in task["trace"]
    assert worker.terminate_worker() == 0


RESTART_TRAP = "The embedded broker keeps topics in memory and no longer has the topics"


def test_a_restart_on_the_embedded_broker_names_the_connectors_whose_topics_are_gone(
    new_worker: Callable[..., EmbeddedConnect], tmp_path: Path
) -> None:
    """The embedded broker keeps topics in memory; the state file keeps source offsets and
    active topics. After a restart the source resumes past records that are no longer in any
    topic, so it creates no topic, and the sink waits for one: a user got no file at all."""
    src, out = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("one\ntwo\n")
    worker = new_worker(start_broker=False, worker_properties={"embedded.broker.enable": "true"})
    worker.start()
    source, sink, topic = unique("trap-src"), unique("trap-sink"), unique("trap")
    worker.create_running(
        source,
        {
            "connector.class": "FileStreamSource",
            "file": str(src),
            "topic": topic,
            "topic.creation.default.partitions": "1",
            "topic.creation.default.replication.factor": "1",
        },
    )
    worker.create_running(
        sink, {"connector.class": "FileStreamSink", "file": str(out), "topics": topic}
    )
    wait_for(lambda: lines(out) == ["one", "two"], 120, what="both lines in the sink's file")
    worker.wait_offsets(source, lambda offsets: bool(offsets))
    assert RESTART_TRAP not in worker.log_text()  # a first start has nothing to say

    worker.restart_worker()
    worker.wait_running(source, tasks=1)
    second_start = worker.log_text().split("connect-lite stopped", 1)[1].splitlines()
    [warned] = [i for i, line in enumerate(second_start) if RESTART_TRAP in line]
    line = second_start[warned]
    assert "WARN" in line
    assert f"source connectors {source} ({topic}) resume after their stored offsets" in line
    assert f"sink connectors {sink} ({topic}) wait until their topics are created again" in line
    assert "Only an external Kafka keeps topic data across a restart" in line
    assert f"remove the state file {worker.state_file}," in line
    # Said before the stored connectors start, and it was true: no topic, no new line.
    running = [i for i, line in enumerate(second_start) if "Connector is RUNNING" in line]
    assert running and warned < min(running)
    assert lines(out) == ["one", "two"]
