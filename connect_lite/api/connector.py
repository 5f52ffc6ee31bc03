"""Connector and task base classes, and the contexts the worker gives them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from connect_lite.api.config import ConfigDef
from connect_lite.api.records import (
    Partition,
    RecordMetadata,
    SinkRecord,
    SourceRecord,
    TopicPartition,
)

if TYPE_CHECKING:
    from concurrent.futures import Future


class ConnectorContext:
    """What a connector may ask of the worker."""

    def request_task_reconfiguration(self) -> None:
        """Ask the worker to call ``task_configs`` again and restart tasks if they changed."""
        raise NotImplementedError

    def raise_error(self, error: Exception) -> None:
        """Fail the connector with this error."""
        raise NotImplementedError


class Connector(ABC):
    """Base of SourceConnector and SinkConnector."""

    context: ConnectorContext

    def version(self) -> str:
        return "undefined"

    def config(self) -> ConfigDef:
        return ConfigDef()

    def validate(self, config: dict[str, str]) -> None:  # noqa: B027  # optional hook
        """Optional extra validation; raise ConfigError to report problems."""

    @abstractmethod
    def start(self, config: dict[str, str]) -> None: ...

    @abstractmethod
    def task_class(self) -> type[Any]: ...

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]: ...

    @abstractmethod
    def stop(self) -> None: ...

    def status_details(
        self, connector_config: dict[str, str]
    ) -> Mapping[str, int | float | str] | None:
        """Optional hook: what the connector holds in the system it connects to, in any state
        (a replication slot's retained WAL while the connector is STOPPED). The worker calls
        it on a fresh, unstarted instance with the connector's resolved config, in the
        background every 30 s and soon after a state change; the last answer shows in the
        connector's status (``details``) and, for numbers, in GET /metrics. None: nothing."""
        return None


class SourceConnector(Connector):
    """A connector whose tasks read from an external system into Kafka."""

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: dict[Partition, dict[str, Any] | None]
    ) -> bool:
        """KIP-875 hook. True means the connector handled external offsets too."""
        return False


class SinkConnector(Connector):
    """A connector whose tasks write from Kafka to an external system."""

    def alter_offsets(
        self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        """KIP-875 hook. True means the connector handled external offsets too."""
        return False


class OffsetStorageReader:
    """Reads a source connector's committed offsets."""

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        raise NotImplementedError

    def offsets(
        self, partitions: list[Mapping[str, Any]]
    ) -> dict[Partition, dict[str, Any] | None]:
        return {Partition(p): self.offset(p) for p in partitions}


class SourceTaskContext:
    """What a source task may ask of the worker."""

    def offset_storage_reader(self) -> OffsetStorageReader:
        raise NotImplementedError

    def configs(self) -> dict[str, str]:
        raise NotImplementedError


class ErrantRecordReporter:
    """Reports a record that a sink task could not process (errors.* settings apply)."""

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        raise NotImplementedError


class RecordWriter:
    """Writes records of a task's own to Kafka topics (a connector's result or error topics),
    apart from the records the worker moves for it. Got from
    :meth:`SinkTaskContext.record_writer`; the worker closes it when the task ends."""

    def ensure_topic(self, topic: str, partitions: int = 1, replication_factor: int = -1) -> None:
        """Create ``topic`` unless it exists (-1: the broker's default replication)."""
        raise NotImplementedError

    def write(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: Sequence[tuple[str, bytes | None]] = (),
    ) -> None:
        """Queue one record; :meth:`flush` waits for it."""
        raise NotImplementedError

    def flush(self, timeout_s: float = 30.0) -> None:
        """Return once every record written is acknowledged; RetriableError if some are not
        within ``timeout_s`` or failed (they should be written again)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class SinkTaskContext:
    """What a sink task may ask of the worker."""

    def assignment(self) -> set[TopicPartition]:
        raise NotImplementedError

    def offset(self, tp_or_offsets: Any, offset: int | None = None) -> None:
        """Rewind: ``offset(tp, n)`` or ``offset({tp: n, ...})``."""
        raise NotImplementedError

    def pause(self, *partitions: TopicPartition) -> None:
        raise NotImplementedError

    def resume(self, *partitions: TopicPartition) -> None:
        raise NotImplementedError

    def timeout(self, timeout_ms: int) -> None:
        raise NotImplementedError

    def request_commit(self) -> None:
        raise NotImplementedError

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return None

    def record_writer(self, bootstrap_servers: str | None = None) -> RecordWriter:
        """A writer of records of the task's own: to the worker's Kafka with the worker's
        producer settings, or to the cluster at ``bootstrap_servers`` with a plain producer
        (the worker's credentials are not sent to another cluster)."""
        raise NotImplementedError

    def configs(self) -> dict[str, str]:
        raise NotImplementedError


FRAME_SCHEMA_METADATA = "connect.schema"
"""The metadata key of a ``poll_dataframe`` frame's ``key`` or ``value`` column that declares
its Connect schema's names, docs, parameters and required parts (JsonConverter's form)."""

FRAME_PARTITIONED_METADATA = "connect.partitioned"
"""The metadata key of a ``poll_dataframe`` frame's ``source_partition`` column by which the
task says each Spark partition holds whole source partitions, in order (no shuffle)."""


class SourceTask(ABC):
    """A task that polls records from an external system."""

    context: SourceTaskContext

    def version(self) -> str:
        return "undefined"

    @abstractmethod
    def start(self, config: dict[str, str]) -> None: ...

    def poll(self) -> list[SourceRecord] | None:
        """Records, or None / [] when idle. May block briefly. A task implements this or
        :meth:`poll_dataframe`."""
        raise NotImplementedError(
            f"{type(self).__name__} implements neither poll nor poll_dataframe"
        )

    def poll_dataframe(self, spark: Any) -> Any:  # a pyspark.sql.DataFrame or None
        """Optional, replaces :meth:`poll`: one batch as a Spark DataFrame, built with the
        worker's SparkSession ``spark``; None when there is nothing now (it may block
        briefly, as ``poll``).

        Columns: ``key`` and ``value`` (typed: strings, binary, numbers, booleans, dates,
        timestamps, structs, arrays, maps), ``source_partition`` and ``source_offset`` (each
        a JSON object as a string, the values a SourceRecord carries), and optionally
        ``topic`` (string; else the connector's ``topic``), ``partition`` (int),
        ``timestamp`` (timestamp) and ``headers`` (array of struct<key string, value binary>,
        produced as they are). The framework applies the transforms and converters and
        produces the rows from the executors; for each source partition it commits the
        offset of the last row once it and every row of that partition before it are
        acknowledged. Rows of one source partition keep their order in the frame.
        ``commit`` is called as for ``poll``; ``commit_record`` is not. ``RetriableError``
        polls again after a backoff; anything else fails the task."""
        raise NotImplementedError(f"{type(self).__name__} does not implement poll_dataframe")

    def commit(self) -> None:  # noqa: B027  # optional hook
        """Called after offsets were committed."""

    def commit_record(  # noqa: B027  # optional hook
        self, record: SourceRecord, metadata: RecordMetadata | None
    ) -> None:
        """Called once per record the broker acknowledged (or None if filtered)."""

    @abstractmethod
    def stop(self) -> None: ...


class SinkTask(ABC):
    """A task that writes consumed records to an external system."""

    context: SinkTaskContext

    def version(self) -> str:
        return "undefined"

    @abstractmethod
    def start(self, config: dict[str, str]) -> None: ...

    def open(self, partitions: list[TopicPartition]) -> None:  # noqa: B027  # optional hook
        """Partitions were assigned to this task."""

    def put(self, records: list[SinkRecord]) -> None:
        """Write a batch of records. A task implements this or :meth:`put_dataframe`."""
        raise NotImplementedError(f"{type(self).__name__} implements neither put nor put_dataframe")

    ordered_dataframes: ClassVar[bool] = True
    """Whether ``put_dataframe`` needs each partition's rows in offset order, in one Spark
    task (the default). A sink that orders them itself, or needs no order, sets it False:
    a partition's records may then be read by several Spark tasks at once."""

    def put_dataframe(self, df: Any) -> None:  # a pyspark.sql.DataFrame; no Spark import here
        """Optional, replaces :meth:`put`: write one batch, already converted and transformed,
        as a Spark DataFrame, with Spark's writers on the executors; return once it is durable.

        Columns: ``topic`` (string), ``partition`` (int), ``offset`` (long), ``timestamp``
        (timestamp), ``key``, ``value``, ``headers`` (array of struct<key string, value
        binary>). A side whose converter gives a schema is typed by it (a struct for a STRUCT
        schema). A schemaless side is its JSON text (string), plus ``key_struct`` /
        ``value_struct``, the type Arrow infers from the values, when one can be inferred.
        One call holds records of one key schema and one value schema; a batch with a schema
        change comes in several calls, in offset order. Offsets are committed only after it
        returns. ``RetriableError`` redelivers the same batch after a backoff; anything else
        follows ``errors.tolerance``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement put_dataframe")

    def flush(self, offsets: dict[TopicPartition, int]) -> None:  # noqa: B027  # optional hook
        """Flush everything put so far; offsets are the next positions to read."""

    def pre_commit(self, offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Return the offsets that are safe to commit. Default: flush, then all of them."""
        self.flush(offsets)
        return offsets

    def close(self, partitions: list[TopicPartition]) -> None:  # noqa: B027  # optional hook
        """Partitions were revoked from this task."""

    @abstractmethod
    def stop(self) -> None: ...


__all__ = [
    "Connector",
    "ConnectorContext",
    "ErrantRecordReporter",
    "OffsetStorageReader",
    "RecordWriter",
    "SinkConnector",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceTask",
    "SourceTaskContext",
]
