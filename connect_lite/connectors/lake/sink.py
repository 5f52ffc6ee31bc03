"""LakeSinkConnector and its task: record values as Parquet, JSON, CSV or ORC files, exactly
once, laid out as Confluent's S3 and HDFS sinks lay them out (see the package docstring)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from connect_lite.api import (
    ConfigDef,
    ConfigError,
    DataError,
    RetriableError,
    SinkConnector,
    SinkTask,
    TopicPartition,
)

from .committer import Committer
from .config import CONFIG_DEF, TASK_ID, LakeConfig, cross_field_errors
from .errors import is_retriable
from .layout import Layout, connector_dir_name
from .partitioning import plan_batch
from .store import open_store
from .version import VERSION

log = logging.getLogger(__name__)

_DEFAULT_NAME = "lake"


class LakeSinkConnector(SinkConnector):
    """Writes the values of the records of its topics to files in a data lake."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def validate(self, config: dict[str, str]) -> None:
        """The checks across keys (a partitioner's own keys); each key alone is checked by
        the ConfigDef."""
        values = {name: cv.value for name, cv in CONFIG_DEF.validate(config).items()}
        errors = cross_field_errors(values)
        if errors:
            raise ConfigError("\n".join(m for ms in errors.values() for m in ms), errors)

    def start(self, config: dict[str, str]) -> None:
        LakeConfig.parse(config)
        self._props = dict(config)

    def task_class(self) -> type[LakeSinkTask]:
        return LakeSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """The connector's config for each task, plus the task's number (its buffer area)."""
        return [dict(self._props, **{TASK_ID: str(i)}) for i in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to do: the connector does no background monitoring."""


class LakeSinkTask(SinkTask):
    """Buffers each batch in the store and commits files of ``flush.size`` records (or by
    time); offsets are committed only up to the records in visible files."""

    ordered_dataframes = False  # buffering and commit rounds sort each partition's rows

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._config: LakeConfig | None = None
        self._layout: Layout | None = None
        self._committer: Committer | None = None
        self._session: Any = None
        self._opening: set[TopicPartition] = set()
        """Partitions opened whose recovery has not run yet (it needs the store)."""
        self._opened: set[TopicPartition] = set()
        """Partitions opened and not closed: the only ones pre_commit answers for."""

    def version(self) -> str:
        return VERSION

    def start(self, config: dict[str, str]) -> None:
        self._config = LakeConfig.parse(config)
        name = config.get("name") or _DEFAULT_NAME
        task_id = int(config.get(TASK_ID) or 0)
        self._layout = Layout(self._config.topics_dir, connector_dir_name(name), task_id)
        self._committer = self._new_committer(None)

    def _new_committer(self, session: Any) -> Committer | None:
        assert self._config is not None and self._layout is not None
        store = open_store(self._config.store_url, session)
        if store is None:
            return None
        return Committer(self._config, self._layout, store, self._clock)

    def open(self, partitions: list[TopicPartition]) -> None:
        """Recover: roll journals forward, drop stale buffered pieces, and start each partition
        after the last record in its visible files. A Hadoop store needs the Spark session
        (unknown before the first batch): then this runs at the first ``put_dataframe``."""
        if self._committer is not None:
            self._committer.forget(partitions)
        self._opened.update(partitions)
        self._opening.update(partitions)
        if self._committer is None:
            return
        try:
            starts = self._recover()
        except Exception:
            log.warning("Recovery failed; retrying it at the next batch", exc_info=True)
            return
        for tp, offset in starts.items():
            self.context.offset(tp, offset)

    def _recover(self) -> dict[TopicPartition, int]:
        assert self._committer is not None
        starts = self._committer.recover(sorted(self._opening, key=_order))
        log.info(
            "Opened %s; resuming after visible files at %s",
            sorted(self._opening, key=_order),
            starts,
        )
        self._opening.clear()
        return starts

    def put_dataframe(self, df: Any) -> None:
        """Buffer the batch and commit complete files; returns once the batch is buffered and
        every complete file is visible. Raises RetriableError only for failures that may
        pass; after any other error nothing of the batch is buffered."""
        assert self._config is not None
        try:
            self._put(df)
        except Exception as error:
            if is_retriable(error):
                self.context.timeout(self._config.retry_backoff_ms)
                if isinstance(error, RetriableError):
                    raise
                raise RetriableError(f"The store failed; the batch comes again: {error}") from error
            if _is_spark_error(error):  # the plan itself is wrong for these values
                raise DataError(f"The lake sink cannot write this batch: {error}") from error
            raise
        finally:
            if self._committer is not None and self._committer.rewinds:
                for tp, offset in sorted(
                    self._committer.rewinds.items(), key=lambda i: _order(i[0])
                ):
                    self.context.offset(tp, offset)
                self._committer.rewinds.clear()

    def _put(self, df: Any) -> None:
        assert self._config is not None
        session = df.sparkSession
        if self._committer is None:
            self._committer = self._new_committer(session)
        elif session is not self._session:  # the JVM may have died: a new session's store
            self._committer.store = self._committer.store.for_session(session)
        self._session = session
        assert self._committer is not None
        late_starts = self._recover() if self._opening else {}
        plan = plan_batch(
            self._config,
            df.schema.jsonValue(),
            int(self._clock() * 1000),
            session.conf.get("spark.sql.session.timeZone"),
        )
        rounds = self._committer.rounds
        batch_ends = self._committer.put(df, plan, session, self._assignment())
        if self._committer.rounds != rounds:
            self.context.request_commit()  # offsets may move on now
        for tp, start in late_starts.items():
            if start > batch_ends.get(tp, -1):  # the consumer is behind the visible files
                self.context.offset(tp, start)

    def _assignment(self) -> set[TopicPartition]:
        """The worker's assignment; the partitions opened if its context cannot tell."""
        try:
            return set(self.context.assignment())
        except NotImplementedError:
            return set(self._opened)

    def pre_commit(self, offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Commit scheduled rotations, then per partition the first buffered offset (or the
        offset given when nothing is buffered). Nothing while a round is unsettled."""
        committer = self._committer
        if committer is None:
            return {}
        try:
            committer.settle()
        except Exception:
            log.warning("The store failed; no offsets are committed this time", exc_info=True)
            return {}
        if (
            self._session is not None
            and self._config
            and self._config.rotate_schedule_interval_ms > 0
        ):
            try:
                committer.publish_scheduled(self._session)
            except Exception:
                log.warning("Scheduled rotation failed; retrying at the next put", exc_info=True)
            if not committer.settled:
                return {}
        # only partitions opened and recovered: of others this task knows nothing
        open_now = {
            tp: o for tp, o in offsets.items() if tp in self._opened and tp not in self._opening
        }
        committer.seen_positions(open_now)
        return committer.safe_offsets(open_now)

    def close(self, partitions: list[TopicPartition]) -> None:
        """Forget the partitions' buffered records; their next owner re-reads them."""
        self._opening.difference_update(partitions)
        self._opened.difference_update(partitions)
        if self._committer is not None:
            self._committer.forget(partitions)

    def stop(self) -> None:
        """Nothing to release: buffered files of partitions still open go at the next open."""
        self._session = None


def _order(tp: TopicPartition) -> tuple[str, int]:
    return (tp.topic, tp.partition)


def _is_spark_error(error: BaseException) -> bool:
    return type(error).__module__.startswith(("py4j", "pyspark"))
