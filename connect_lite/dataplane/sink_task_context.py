"""WorkerSinkTaskContext: the SinkTaskContext a sink task is handed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from connect_lite.api.connector import ErrantRecordReporter, RecordWriter, SinkTaskContext
from connect_lite.api.errors import ConnectError
from connect_lite.api.records import TopicPartition
from connect_lite.dataplane.error_handling import WorkerErrantRecordReporter
from connect_lite.dataplane.sink_consumer import SinkConsumer


class WorkerSinkTaskContext(SinkTaskContext):
    """The SinkTaskContext handed to the plugin, as Kafka's WorkerSinkTaskContext.

    It owns the task's config, what the task asked of the worker for its next step (a commit,
    ``commit_requested``; a backoff before a batch refused with a RetriableError goes again,
    ``timeout_ms``) and the ``errant_reporter`` it is given, if any. Rewinds (``offset``),
    pauses and resumes go to the consumer side; rewinds are applied after each put."""

    def __init__(self, consumer: SinkConsumer, config: dict[str, str]) -> None:
        self._consumer = consumer
        self._config = config
        self.commit_requested = False
        self.timeout_ms: int | None = None
        self.errant_reporter: WorkerErrantRecordReporter | None = None
        self.writer_factory: Callable[[str | None], RecordWriter] | None = None
        self.writers: list[RecordWriter] = []
        """The record writers the task asked for: closed when it ends."""

    def assignment(self) -> set[TopicPartition]:
        return set(self._consumer.assigned)

    def offset(self, tp_or_offsets: Any, offset: int | None = None) -> None:
        if isinstance(tp_or_offsets, TopicPartition):
            if offset is None:
                raise ValueError("offset() needs an offset for the topic partition")
            self._consumer.rewinds[tp_or_offsets] = int(offset)
        else:
            rewinds = {tp: int(o) for tp, o in dict(tp_or_offsets).items()}
            self._consumer.rewinds.update(rewinds)

    def pause(self, *partitions: TopicPartition) -> None:
        self._consumer.pause(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self._consumer.resume(partitions)

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def request_commit(self) -> None:
        self.commit_requested = True

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self.errant_reporter

    def record_writer(self, bootstrap_servers: str | None = None) -> RecordWriter:
        if self.writer_factory is None:
            raise ConnectError("This worker gives sink tasks no record writer")
        writer = self.writer_factory(bootstrap_servers or None)
        self.writers.append(writer)
        return writer

    def close_writers(self) -> None:
        writers, self.writers = self.writers, []
        for writer in writers:
            writer.close()

    def configs(self) -> dict[str, str]:
        return dict(self._config)
