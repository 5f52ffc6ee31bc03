"""What a test does with a running worker: waits on connector state and offsets, Kafka I/O."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from connect_lite.kafka import ConsumedMessage
from connect_lite.testing.client import ConnectClient, ConnectRestError, JsonObject
from connect_lite.testing.kafka_helpers import KafkaHelpers, Record
from connect_lite.testing.waits import WaitFailed, WaitTimeout, describe, poll

DEFAULT_TIMEOUT = 60.0


def _failed_parts(status: JsonObject) -> list[str]:
    parts = []
    if status["connector"]["state"] == "FAILED":
        parts.append(f"connector: {status['connector'].get('trace', '')}")
    for task in status.get("tasks", []):
        if task["state"] == "FAILED":
            parts.append(f"task {task['id']}: {task.get('trace', '')}")
    return parts


class ConnectActions:
    """Waits and Kafka helpers over ``client`` and ``kafka`` (given by the subclass).

    A wait without a ``timeout`` waits ``wait_timeout`` seconds (default: DEFAULT_TIMEOUT).
    """

    wait_timeout: float = DEFAULT_TIMEOUT

    @property
    def client(self) -> ConnectClient:
        raise NotImplementedError

    @property
    def kafka(self) -> KafkaHelpers:
        raise NotImplementedError

    def _timeout(self, timeout: float | None) -> float:
        return self.wait_timeout if timeout is None else timeout

    # -- connector waits ----------------------------------------------------------------------
    def create_running(
        self,
        name: str,
        config: dict[str, str],
        tasks: int | None = None,
        timeout: float | None = None,
    ) -> JsonObject:
        """Create the connector (POST /connectors) and wait until it runs, as
        :meth:`wait_running` does; its status."""
        self.client.create(name, config)
        return self.wait_running(name, tasks, timeout)

    def wait_running(
        self, name: str, tasks: int | None = None, timeout: float | None = None
    ) -> JsonObject:
        """Wait until the connector and its tasks are RUNNING (exactly ``tasks`` of them if
        given, at least one otherwise); fails at once, with the trace, if any is FAILED."""

        def done(status: JsonObject) -> bool:
            failed = _failed_parts(status)
            if failed:
                raise WaitFailed(f"{name} FAILED while waiting for RUNNING:\n" + "\n".join(failed))
            states = [task["state"] for task in status["tasks"]]
            count_ok = len(states) == tasks if tasks is not None else len(states) >= 1
            return (
                status["connector"]["state"] == "RUNNING"
                and count_ok
                and (all(state == "RUNNING" for state in states))
            )

        want = f"{tasks} task(s)" if tasks is not None else "its tasks"
        what = f"connector {name!r} RUNNING with {want} RUNNING"
        return poll(lambda: self.client.status(name), done, what, self._timeout(timeout))

    def wait_state(self, name: str, state: str, timeout: float | None = None) -> JsonObject:
        """Wait until the connector's own state is ``state`` (RUNNING, PAUSED, STOPPED, ...)."""
        return poll(
            lambda: self.client.status(name),
            lambda status: status["connector"]["state"] == state,
            f"connector {name!r} in state {state}",
            self._timeout(timeout),
        )

    def wait_task_state(
        self, name: str, task: int, state: str, timeout: float | None = None
    ) -> JsonObject:
        """Wait until task ``task`` of the connector is in ``state``; its status."""
        return poll(
            lambda: self.client.task_status(name, task),
            lambda status: status["state"] == state,
            f"task {task} of connector {name!r} in state {state}",
            self._timeout(timeout),
        )

    def wait_offsets(
        self,
        name: str,
        predicate: Callable[[list[JsonObject]], bool],
        timeout: float | None = None,
    ) -> list[JsonObject]:
        """Wait until ``predicate(offsets)`` holds for GET /connectors/{name}/offsets."""
        return poll(
            lambda: self.client.offsets(name),
            predicate,
            f"offsets of connector {name!r} to satisfy {describe(predicate)}",
            self._timeout(timeout),
        )

    def wait_deleted(self, name: str, timeout: float | None = None) -> None:
        """Wait until the connector no longer exists."""

        def gone() -> bool:
            try:
                self.client.info(name)
            except ConnectRestError as error:
                if error.status == 404:
                    return True
                raise
            return False

        poll(gone, bool, f"connector {name!r} to be deleted", self._timeout(timeout))

    # -- Kafka ----------------------------------------------------------------------------------
    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int = 1,
        configs: Mapping[str, str] | None = None,
    ) -> bool:
        """Create a topic; False if it existed already."""
        return self.kafka.create_topic(name, partitions, replication_factor, configs)

    def produce(self, topic: str, records: Iterable[Record], partition: int | None = None) -> int:
        """Produce values (str, bytes or None) or (key, value) pairs; waits for the acks."""
        return self.kafka.produce(topic, records, partition)

    def consume(
        self, topic: str, count: int | None = None, timeout: float = 10.0
    ) -> list[ConsumedMessage]:
        """Records of ``topic`` from the beginning: ``count`` of them, or all there are."""
        return self.kafka.consume(topic, count, timeout)

    def wait_topic_records(
        self, topic: str, count: int, timeout: float | None = None
    ) -> list[ConsumedMessage]:
        """Wait until ``topic`` holds at least ``count`` records; the first ``count``."""
        timeout = self._timeout(timeout)
        got = self.kafka.consume(topic, count, timeout)
        if len(got) < count:
            last: Any = {
                "records_seen": len(got),
                "last_values": [_text(m.value) for m in got[-5:]],
            }
            raise WaitTimeout(f"{count} records in topic {topic!r}", timeout, last)
        return got[:count]


def _text(value: bytes | None) -> str | None:
    return value.decode("utf-8", "replace") if value is not None else None


__all__ = ["DEFAULT_TIMEOUT", "ConnectActions"]
