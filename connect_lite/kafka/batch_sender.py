"""Senders for Spark's executors: a source batch's records produced where they were converted.

A source task's records are converted in Spark's Python workers, and produced there too: each
worker process keeps one sender per config (``executor_clients``) and reuses it for every
batch. A sender is built from the task producer's own merged config (overrides, security,
everything the worker gave it; see ``sender_config``). A Spark task queues each of its chunks
as soon as it is converted (``produce``), and waits for their acknowledgements once, at its
end (``settle``): what comes back to the driver is the outcome, never the records.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import confluent_kafka

from connect_lite.kafka import executor_clients
from connect_lite.kafka.native import new_client, to_connect_error

SendRow = tuple[str, int | None, bytes | None, bytes | None, Any, int | None]
"""A record to send: (topic, partition or None, key, value, headers or None, timestamp or
None)."""

Placement = tuple[str, int, int, int | None]
"""Where a record landed: (topic, partition, offset, timestamp)."""

FLUSH_STEP_S = 1.0
"""How long one flush waits before the next; a send waits until every record is settled,
which the producer's ``delivery.timeout.ms`` bounds."""


def sender_config(producer_config: Mapping[str, str]) -> dict[str, str]:
    """An executor-side sender's config: the source task producer's merged config as it is,
    under its own client id.

    So a sender is idempotent only when that config says so (``enable.idempotence``; Kafka
    Connect's defaults, ``acks=all`` with one request in flight, keep a partition's records
    in order without it). On the embedded broker, 2026-11-28, an idempotent producer's first
    record waited about 0.5 s for its producer id (librdkafka retries the id on a 500 ms
    timer when the broker connection is not up yet), and a Python worker that Spark starts
    after a minute idle builds a new sender: the first record after such a pause crossed the
    worker in 1.76 s with idempotent senders, and in 0.67 s without
    (``scripts/bench_latency.py --idle-seconds 80``)."""
    config = dict(producer_config)
    if "client.id" in config:
        config["client.id"] = f"{config['client.id']}-sender"
    return config


class BatchSender:
    """One producer that queues lists of records, then waits until all of them are settled.

    With ``each``, every record's delivery is reported (a task's ``commit_record`` wants its
    metadata); otherwise only failures are, which saves a Python callback per record."""

    def __init__(self, config: Mapping[str, str], each: bool) -> None:
        conf: dict[str, Any] = dict(config)
        self._each = each
        self._failures: list[str] = []
        if not each:
            conf["delivery.report.only.error"] = True
            conf["on_delivery"] = self._on_error
        self._producer = new_client(confluent_kafka.Producer, conf, "producer")

    def _on_error(self, err: Any, msg: Any) -> None:
        if err is not None:
            self._failures.append(str(to_connect_error(err, f"delivery to {msg.topic()} failed")))

    def _on_delivery(self, placements: list[Placement | None], i: int, err: Any, msg: Any) -> None:
        if err is not None:
            self._on_error(err, msg)
            return
        ts_type, ts = msg.timestamp()
        stamp = ts if ts_type != confluent_kafka.TIMESTAMP_NOT_AVAILABLE else None
        placements[i] = (msg.topic(), msg.partition(), msg.offset(), stamp)

    def produce(self, rows: Sequence[SendRow]) -> list[Placement | None] | None:
        """Queue ``rows`` in order, without waiting for them; with ``each``, the list that
        their deliveries fill in (by ``settle``) with where each landed."""
        placements: list[Placement | None] | None = [None] * len(rows) if self._each else None
        produce: Any = self._producer.produce
        for i, (topic, partition, key, value, headers, timestamp) in enumerate(rows):
            callback = None
            if placements is not None:
                callback = functools.partial(self._on_delivery, placements, i)
            # confluent-kafka's order: topic, value, key, partition, on_delivery, callback,
            # timestamp, headers (positional: parsed faster than keywords)
            args = (topic, value, key, -1 if partition is None else partition, callback, None)
            try:
                self._produce(produce, args, timestamp or 0, headers)
            except confluent_kafka.KafkaException as exc:
                self._failures.append(str(to_connect_error(exc, f"cannot produce to {topic}")))
                break  # the rest is not sent: the batch fails as a whole
        return placements

    def settle(self) -> str | None:
        """Wait until every record queued is acknowledged or failed; the first failure since
        the last settle, if any."""
        while len(self._producer):
            self._producer.flush(FLUSH_STEP_S)
        failure = self._failures[0] if self._failures else None
        self._failures.clear()
        return failure

    def _produce(self, produce: Any, args: tuple[Any, ...], timestamp: int, headers: Any) -> None:
        """Produce one record, serving deliveries while the local queue is full (the
        producer's own ``delivery.timeout.ms`` bounds how long that lasts)."""
        while True:
            try:
                produce(*args, timestamp, headers)
                return
            except BufferError:
                self._producer.poll(0.05)

    def close(self) -> None:
        """Settle what is in flight, then release the client."""
        self._producer.flush(FLUSH_STEP_S * 5)
        self._producer.close()


def sender(config: Mapping[str, str], each: bool) -> BatchSender:
    """This process's sender for ``config`` (closed by ``executor_clients.close_all`` when the
    process retires)."""
    return executor_clients.cached(
        "sender-each" if each else "sender", config, functools.partial(_build, each=each)
    )


def _build(config: Mapping[str, str], *, each: bool) -> BatchSender:
    return BatchSender(config, each)


__all__ = ["BatchSender", "Placement", "SendRow", "sender", "sender_config"]
