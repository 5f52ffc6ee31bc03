"""What both batch jobs share: the driver side of running a batch as one Spark job.

Components are described by picklable zero-argument factories (job_spec.py) and built
lazily in Spark's Python workers, once per worker process and batch job (executor.py). The
driver pickles the batch into one chunk per partition and runs one job (transfer.py); the
record-level work on a chunk is in chunk_work.py, and what a chunk carries in chunks.py.
The batch jobs themselves are in source_job.py and sink_job.py.

Throughput of ``run`` on the shared 2-core machine (local[2], ~70-100-byte values, no
transforms, 1,000,000 records per size; ``python -m tests.integration.pipeline.bench_stage``).
Two runs, the second with other helpers' workers and a second JVM busy on the same cores:

  batch      source (str)   sink (str)    source (JSON)  sink (JSON, schemaless)
  50k        98-175 k/s     98-116 k/s    85-154 k/s     79-124 k/s
  100k       173-201 k/s    131-191 k/s   192-258 k/s    137-154 k/s
  200k       217-344 k/s    122-197 k/s   273-276 k/s    101-139 k/s
  400k       213-307 k/s    129-192 k/s   284-303 k/s    86-114 k/s

A Spark job costs ~0.15-0.2 s however small, so batches under ~50k pay mostly for
scheduling. On the sink side, the driver's share is building the SinkRecords (~1 us
each) and unpickling the converted values; the rest runs in parallel in the workers.
Converters with a vectorized ``from_connect_batch``/``to_connect_batch`` are called once
per run of records with the same topic and schema.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic

from connect_lite.api.records import R, SinkRecord, SourceRecord
from connect_lite.pipeline import column_compilers
from connect_lite.pipeline.chunks import (
    ChainInput,
    ChunkInput,
    ChunkResult,
    MessageRow,
    RecordsChunk,
)
from connect_lite.pipeline.executor import gc_paused
from connect_lite.pipeline.record_errors import JobCancelledError, RecordError
from connect_lite.pipeline.session import SparkEngine
from connect_lite.pipeline.source_send import SendOrder
from connect_lite.pipeline.transfer import Layout, chunk_bounds, dumps, run_job
from connect_lite.protocol.host import LastBatch
from connect_lite.protocol.job_spec import Chain, JobSpec


@dataclass
class TransformResult(Generic[R]):
    """The outcome of a chain over records: per input, the new record or None (dropped or
    failed, see ``errors``)."""

    records: list[R | None]
    errors: list[RecordError] = field(default_factory=list)
    retries: int = 0


log = logging.getLogger(__name__)


class BatchJob:
    """Shared driver-side plumbing: job group, chunking, error raising."""

    kind = ""

    def __init__(self, engine: SparkEngine, spec: JobSpec, job_group: str) -> None:
        self.engine = engine
        self.spec = spec
        self.job_group = job_group
        self._token = uuid.uuid4().hex  # a new batch job instance rebuilds its components
        self._driver_chain: Chain | None = None
        self.compiled_batches = 0  # batches whose chain ran as Spark column expressions
        self._cancelled = False

    def cancel(self) -> None:
        """Cancel this batch job's running job, and every later one (its task is stopping)."""
        self._cancelled = True
        self.engine.cancel(self.job_group, owner=self.spec.job_id)

    def last_batch(self) -> LastBatch | None:
        """The scheduler pool and executors of this task's last finished batch."""
        return self.engine.last_batch(self.job_group)

    def _check_cancelled(self) -> None:
        """No job starts once the task stopped: e.g. a batch that waited for Spark's start
        while its task was asked to stop (Spark may be stopping too by then)."""
        if self._cancelled:
            raise JobCancelledError(f"The batch job of {self.spec.job_id} was cancelled")

    def _run_chunks(
        self,
        n: int,
        make_payload: Callable[[int, int], ChunkInput],
        kind: str | None = None,
        layout: Layout | None = None,
        order: SendOrder | None = None,
    ) -> list[tuple[int, ChunkResult]]:
        """One job over the batch in chunks (``layout``'s bounds and partitions, else
        chunk_bounds'); their results with each chunk's start. With ``order`` the executors
        produce source chunks. If the job failed because Spark's JVM is gone, the batch runs
        once more on a new session; if it failed because Spark's cluster is unreachable,
        SparkUnavailableError."""
        session = None
        try:
            session = self.engine.current_session()
            return self._run_chunks_once(n, make_payload, kind or self.kind, layout, order)
        except JobCancelledError:
            raise
        except Exception as error:
            self.engine.raise_if_unavailable(error)  # a lost cluster: the task tries later
            if not self.engine.recover(session):
                raise
        log.warning("Running the batch of %s again on a new SparkSession", self.spec.job_id)
        return self._run_chunks_once(n, make_payload, kind or self.kind, layout, order)

    def _run_chunks_once(
        self,
        n: int,
        make_payload: Callable[[int, int], ChunkInput],
        kind: str,
        layout: Layout | None,
        order: SendOrder | None,
    ) -> list[tuple[int, ChunkResult]]:
        bounds = (
            chunk_bounds(n, self.engine.default_parallelism) if layout is None else layout.bounds
        )
        partitions = None if layout is None else layout.partitions
        description = f"connect-lite {kind} batch job {self.spec.job_id}: {n} records"
        with self.engine.job_group(self.job_group, description, self.spec.job_id) as group:
            self._check_cancelled()
            payloads = [dumps(make_payload(a, b)) for a, b in bounds]
            results = run_job(
                self.engine, group, self._shipped_spec(), self._token, payloads, partitions, order
            )
        return list(zip((a for a, _ in bounds), results, strict=True))

    def _shipped_spec(self) -> JobSpec:
        """The spec for a job: its plugin locations shipped to the executors first, when the
        master is not local (once per SparkContext; see shipping.py)."""
        self.spec = self.engine.ship(self.spec)
        return self.spec

    @staticmethod
    def _errors(
        base: int, chunk_errors: Sequence[RecordError], where: Callable[[int], str]
    ) -> list[RecordError]:
        return [
            e
            if e.index is None
            else dataclasses.replace(e, index=base + e.index, where=where(base + e.index))
            for e in chunk_errors
        ]

    def _run_as_columns(self, batch: Sequence[Any]) -> Any:
        """One job with the chain as Spark column expressions; None when the batch has no
        column form. The one fallback rule of both batch jobs: a batch whose column form
        cannot be planned, or whose job fails for any reason but a cancel, runs in the
        Arrow form instead, which isolates the records at fault."""
        chain = self._chain()
        if chain is None or not column_compilers.chain_has_columns(chain):
            return None
        try:
            planned = self._plan_columns(chain, batch)
        except Exception as e:
            log.warning("No column form for this batch, using the Arrow form: %s", e)
            return None
        if planned is None:
            return None
        description = (
            f"connect-lite {self.kind} batch job {self.spec.job_id}: "
            f"{len(batch)} records as columns"
        )
        try:
            with (
                gc_paused(),
                self.engine.job_group(self.job_group, description, self.spec.job_id) as group,
            ):
                self._check_cancelled()
                fetched = self._fetch_columns(group, planned)
        except JobCancelledError:
            raise
        except Exception as e:
            log.warning("Column form of the transforms failed, using the Arrow form: %s", e)
            return None
        result = self._collect_columns(batch, planned, fetched)
        self.compiled_batches += 1
        return result

    def _plan_columns(self, chain: Chain, batch: Sequence[Any]) -> Any:
        """The batch's select with the chain as columns, or None (no column form)."""
        raise NotImplementedError

    def _fetch_columns(self, group: Any, planned: Any) -> Any:
        """Run the planned select in ``group``; what it brings back to the driver."""
        raise NotImplementedError

    def _collect_columns(self, batch: Sequence[Any], planned: Any, fetched: Any) -> Any:
        """The batch result from what the job brought back."""
        raise NotImplementedError

    def _chain(self) -> Chain | None:
        """The transform chain built on the driver (for compiling), or None if it cannot be."""
        if self._driver_chain is None:
            try:
                self._driver_chain = [
                    (t.factory(), None if t.predicate is None else t.predicate(), t.negate)
                    for t in self.spec.transforms
                ]
            except Exception:
                self._driver_chain = []  # the executors report the failure per batch
        return self._driver_chain or None

    def transform(
        self, records: Sequence[R], *, tolerate_errors: bool = False
    ) -> TransformResult[R]:
        """Only the transform chain over converted records, in the Arrow form (mapInArrow)."""
        result: TransformResult[R] = TransformResult([None] * len(records))
        if not records:
            return result
        with gc_paused():
            for base, chunk in self._run_chunks(
                len(records), lambda a, b: ChainInput(records[a:b]), kind="chain"
            ):
                result.errors.extend(
                    self._errors(base, chunk.errors, lambda i: where_record(records[i]))
                )
                result.retries += chunk.retries
                if not isinstance(chunk, RecordsChunk):
                    continue  # the chunk failed as a whole: nothing kept
                for local, record in zip(chunk.kept, chunk.records, strict=True):
                    result.records[base + local] = record
        self._raise_first(result.errors, tolerate_errors)
        return result

    @staticmethod
    def _raise_first(errors: list[RecordError], tolerate: bool) -> None:
        fatal = [e for e in errors if e.index is None]
        if fatal:
            raise fatal[0].to_exception()
        if errors and not tolerate:
            raise min(errors, key=lambda e: e.index or 0).to_exception()


def where_record(record: SourceRecord | SinkRecord) -> str:
    if isinstance(record, SourceRecord):
        return where_source(record)
    return where_message(record.topic, record.kafka_partition, record.kafka_offset)


def where_source(record: SourceRecord) -> str:
    sp = dict(record.source_partition) if record.source_partition is not None else None
    so = dict(record.source_offset) if record.source_offset is not None else None
    return (
        f"topic='{record.topic}', partition={record.kafka_partition}, "
        f"source partition={sp}, source offset={so}"
    )


def where_sink(row: MessageRow) -> str:
    return where_message(row.topic, row.partition, row.offset)


def where_message(topic: str, partition: int | None, offset: int | None) -> str:
    return f"topic='{topic}', partition={partition}, offset={offset}"
