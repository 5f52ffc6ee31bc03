"""Benchmark: file -> Kafka and Kafka -> file pipelines against the raw confluent-kafka client.

Everything runs in one go on the same embedded broker (Tansu): the raw producer and consumer
give the baseline, then a real worker process (EmbeddedConnect, real Spark) runs a
FileStreamSource and a FileStreamSink over the same JSON records. It prints records/s for each
and the ratio pipeline / raw client.

Rates are timed as the raw clients' are, from the first record: the raw consumer from its
first batch, a pipeline from its first record out (the sink's first line in its file, the
source's first committed offset) to its last, counting the records after that first one.
The pace from the connector's creation (its start and, for the sink, the broker's group join:
Tansu holds a join for half the session timeout) and the time to the first record are printed
beside it. Progress is read cheaply (the output file's size, the committed offsets), so that
the watching does not take a core from the worker.

    .venv/bin/python scripts/bench_pipeline.py [--records 1000000] [--converter string|json]
        [--transforms [--arrow-form]] [--sink file|lake|jdbc] [--source file|spooldir|jdbc]
        [--master spark://host:port|cluster] [--set key=value ...]

``--set key=value`` overrides a worker property (repeatable), to compare settings.

With ``--master`` the worker runs on a Spark cluster instead of ``local[2]``, with the cluster
properties of docs/spark-clusters.md, twice: with one executor (``spark.cores.max=1``) and
with two (``spark.cores.max=2``), each in a fresh worker; it prints both throughputs and their
ratio. ``--master cluster`` starts a standalone cluster of two 1-core workers on 127.0.0.1
from the pyspark wheel for the run (connect_lite.testing.spark_cluster) and stops it after.

With ``--sink lake`` the sink is the built-in LakeSink writing Parquet (values as schemaless
JSON, so each record's fields become columns), timed until every record is in a visible file.

With ``--source spooldir`` the source is the built-in SpoolDir CSV source: the same records as
CSV rows (id, user, score, note; a header row) in eight files of a spool directory, read by
Spark's CSV reader in the executors and produced from there as JSON values without schemas,
timed until the offset of every file's last row is committed.

With ``--sink jdbc`` the sink is the built-in JDBC sink upserting into a PostgreSQL started for
the run (connect_lite.testing.PostgresServer): values travel as JSON with schemas (each record
a STRING value, so one TEXT column ``record_value``), keyed by their Kafka coordinates
(``pk.mode=kafka``), ``batch.size=3000``; it is timed until the table holds every record. Its
baseline is raw psycopg on the same server: the same rows upserted with ``executemany`` in
transactions of 3,000, and the sink's ratio is to that baseline.

With ``--source jdbc`` the source is the built-in JDBC source in ``incrementing`` mode
(``batch.max.rows=1000``) reading a PostgreSQL table started for the run: ``id BIGSERIAL``
and the record as ``record_value TEXT``, produced as JSON with schemas; it is timed until the
committed offset reaches the last id. Its baseline is raw psycopg on the same server: ``SELECT
* FROM t WHERE id > %s ORDER BY id LIMIT 1000`` in a loop until every row is read, and the
source's ratio is to that baseline.

With ``--transforms`` values travel as JSON with schemas and each connector runs a chain of
three of Kafka's transforms (compiled to Spark column expressions): the source wraps each line
in a Struct, stamps it and renames the topic; the sink drops the stamp, extracts the line and
renames the topic back.

Each direction has a third line: a bare Spark stage over the same records, in a session with
the worker's settings (connect_lite.pipeline.session_start's defaults), in batches of the worker's
largest size: Arrow tables in, an identity conversion in the Python workers (``mapInArrow``;
text to bytes for the source, bytes to text for the sink), Arrow tables out. It is Spark's
own cost for moving the records, so the gap between it and the pipeline is connect-lite's.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from connect_lite.config.batching import DEFAULT_BATCHING  # noqa: E402
from connect_lite.kafka.broker import EmbeddedBroker  # noqa: E402
from connect_lite.kafka.clients import CONSUMER_DEFAULTS  # noqa: E402
from connect_lite.pipeline.session import SparkEngine  # noqa: E402
from connect_lite.pipeline.transfer import MAX_CHUNK_RECORDS  # noqa: E402
from connect_lite.testing import EmbeddedConnect, spark_cluster, wait_for  # noqa: E402
from connect_lite.testing.postgres import PostgresServer  # noqa: E402
from tests.integration.cluster.properties import readme_cluster_properties  # noqa: E402

CONVERTERS = {
    "string": "org.apache.kafka.connect.storage.StringConverter",
    "json": "org.apache.kafka.connect.json.JsonConverter",
}
WORKER_PROPERTIES = {
    "key.converter": CONVERTERS["string"],
    "value.converter": CONVERTERS["string"],
    "offset.flush.interval.ms": "500",
    "spark.master": "local[2]",
    "consumer.session.timeout.ms": "6000",
}
"""The benchmarks' worker: the worker's own defaults (not connect_lite.testing's FAST_DEFAULTS,
which trade throughput for start-up time), string converters, Spark on two local cores."""


def bench_worker(workdir: Path, bootstrap: str, extra: dict[str, str]) -> EmbeddedConnect:
    """A worker for a benchmark (not started): WORKER_PROPERTIES, then ``extra``."""
    return EmbeddedConnect(
        bootstrap_servers=bootstrap,
        workdir=workdir,
        worker_properties={**WORKER_PROPERTIES, **extra},
        fast_defaults=False,
    )


def make_records(path: Path, count: int) -> int:
    """Write ``count`` JSON lines of about 100 bytes; returns the file size."""
    with path.open("w") as out:
        for n in range(count):
            out.write(
                json.dumps(
                    {
                        "id": n,
                        "user": f"user-{n % 9973:05d}",
                        "score": n % 1000 / 10,
                        "tags": ["a", "b"],
                        "note": "x" * 24,
                    }
                )
                + "\n"
            )
    return path.stat().st_size


SPOOL_FILES = 8
SPOOL_VALUE_SCHEMA = {
    "name": "bench.Record",
    "type": "STRUCT",
    "isOptional": False,
    "fieldSchemas": {
        "id": {"type": "INT64", "isOptional": False},
        "user": {"type": "STRING", "isOptional": True},
        "score": {"type": "FLOAT64", "isOptional": True},
        "note": {"type": "STRING", "isOptional": True},
    },
}


def make_spool(directory: Path, count: int) -> None:
    """The records as CSV rows with a header, in SPOOL_FILES files of ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    per_file = -(-count // SPOOL_FILES)
    for part in range(SPOOL_FILES):
        rows = range(part * per_file, min(count, (part + 1) * per_file))
        with (directory / f"part-{part:02d}.csv").open("w") as out:
            out.write("id,user,score,note\n")
            out.writelines(f"{n},user-{n % 9973:05d},{n % 1000 / 10},{'x' * 24}\n" for n in rows)


def spooldir_source(spool: Path, topic: str) -> dict[str, str]:
    for name in ("finished", "error"):
        (spool.parent / name).mkdir(exist_ok=True)
    return {
        "connector.class": "SpoolDirCsvSourceConnector",
        "topic": topic,
        "input.path": str(spool),
        "finished.path": str(spool.parent / "finished"),
        "error.path": str(spool.parent / "error"),
        "input.file.pattern": r".*\.csv",
        "csv.first.row.as.header": "true",
        "batch.size": "1000000",
        "key.schema": json.dumps({"type": "STRUCT", "isOptional": False, "fieldSchemas": {}}),
        "value.schema": json.dumps(SPOOL_VALUE_SCHEMA),
        "value.converter": CONVERTERS["json"],
        "value.converter.schemas.enable": "false",
        "key.converter": CONVERTERS["json"],
        "key.converter.schemas.enable": "false",
    }


def committed_rows(worker: EmbeddedConnect, connector: str) -> int:
    """The SpoolDir source's committed rows: the sum of each file's committed offset."""
    response = worker.http.get(f"/connectors/{connector}/offsets")
    assert response.status == 200, response.body
    return sum(entry["offset"].get("offset", 0) for entry in response.body["offsets"])


def raw_produce(bootstrap: str, topic: str, lines: list[bytes]) -> float:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "linger.ms": 5,
            "queue.buffering.max.messages": 1_000_000,  # the raw client at its best
        }
    )
    start = time.perf_counter()
    for line in lines:
        while True:
            try:
                producer.produce(topic, line)
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush(120)
    return len(lines) / (time.perf_counter() - start)


def raw_consume(bootstrap: str, topic: str, count: int) -> float:
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-{uuid.uuid4().hex[:6]}",
        **CONSUMER_DEFAULTS,
    }
    consumer = Consumer(conf)
    consumer.subscribe([topic])
    seen = 0
    start = None
    first = 0  # records of the first batch: its clock starts when it arrives
    deadline = time.monotonic() + 300
    while seen < count and time.monotonic() < deadline:
        batch = consumer.consume(100_000, 1.0)
        seen += sum(1 for m in batch if not m.error())
        if seen and start is None:
            start, first = time.perf_counter(), seen
    elapsed = time.perf_counter() - (start or time.perf_counter())
    consumer.close()
    if seen < count:
        raise SystemExit(f"raw consumer saw only {seen} of {count} records")
    return (count - first) / elapsed


def _as_binary(batches: Any) -> Any:
    import pyarrow as pa

    for batch in batches:
        yield pa.RecordBatch.from_arrays([batch.column(0).cast(pa.binary())], ["value"])


def _as_text(batches: Any) -> Any:
    import pyarrow as pa

    for batch in batches:
        yield pa.RecordBatch.from_arrays([batch.column(0).cast(pa.string())], ["value"])


def bare_job(lines: list[bytes]) -> tuple[float, float]:
    """Records/s of a bare Spark stage over ``lines``: (text -> bytes, bytes -> text), one job
    per batch of the worker's largest size, one Arrow record batch (one Spark task) per
    MAX_CHUNK_RECORDS, after a warm-up job."""
    import pyarrow as pa

    engine = SparkEngine({})
    spark = engine.session()
    texts = [line.decode() for line in lines]
    step = DEFAULT_BATCHING.max_records

    def run(values: list[Any], kind: pa.DataType, convert: Any, out: str) -> float:
        begin = time.perf_counter()
        for start in range(0, len(values), step):
            part = values[start : start + step]
            table = pa.Table.from_batches(
                [
                    pa.RecordBatch.from_arrays(
                        [pa.array(part[i : i + MAX_CHUNK_RECORDS], kind)], ["value"]
                    )
                    for i in range(0, len(part), MAX_CHUNK_RECORDS)
                ]
            )
            spark.createDataFrame(table).mapInArrow(convert, f"value {out}").toArrow()
        return len(values) / (time.perf_counter() - begin)

    try:
        run(texts[:1000], pa.string(), _as_binary, "binary")  # Python workers start
        return (
            run(texts, pa.string(), _as_binary, "binary"),
            run(lines, pa.binary(), _as_text, "string"),
        )
    finally:
        engine.stop()


def committed_position(worker: EmbeddedConnect, connector: str) -> int:
    """The committed source offset, from GET /connectors/{name}/offsets (the worker owns the
    state file: a second opener is refused)."""
    response = worker.http.get(f"/connectors/{connector}/offsets")
    assert response.status == 200, response.body
    offsets = [entry["offset"] for entry in response.body["offsets"]]
    return max((o.get("position", 0) for o in offsets), default=0)


def count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as f:
        return sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))


T = "org.apache.kafka.connect.transforms."
SOURCE_CHAIN = {
    "transforms": "hoist,stamp,route",
    "transforms.hoist.type": T + "HoistField$Value",
    "transforms.hoist.field": "line",
    "transforms.stamp.type": T + "InsertField$Value",
    "transforms.stamp.static.field": "origin",
    "transforms.stamp.static.value": "bench",
    "transforms.route.type": T + "RegexRouter",
    "transforms.route.regex": "(.*)-in",
    "transforms.route.replacement": "$1",
}
SINK_CHAIN = {
    "transforms": "unstamp,line,route",
    "transforms.unstamp.type": T + "ReplaceField$Value",
    "transforms.unstamp.exclude": "origin",
    "transforms.line.type": T + "ExtractField$Value",
    "transforms.line.field": "line",
    "transforms.route.type": T + "RegexRouter",
    "transforms.route.regex": "(.*)",
    "transforms.route.replacement": "$1-out",
}


JDBC_BATCH = 3000
JDBC_SOURCE_TABLE = "bench_source"
JDBC_SOURCE_ROWS = 1000
JDBC_TABLE = (
    'CREATE TABLE "{}" (__connect_topic TEXT NOT NULL, __connect_partition INT NOT NULL, '
    "__connect_offset BIGINT NOT NULL, record_value TEXT, "
    "PRIMARY KEY (__connect_topic, __connect_partition, __connect_offset))"
)


def jdbc_sink(topic: str, url: str) -> dict[str, str]:
    """The JDBC sink of ``--sink jdbc``: upserts keyed by the records' Kafka coordinates."""
    return {
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
        "topics": topic,
        "connection.url": url,
        "connection.user": "postgres",
        "insert.mode": "upsert",
        "pk.mode": "kafka",
        "auto.create": "true",
        "batch.size": str(JDBC_BATCH),
        "value.converter": CONVERTERS["json"],
        "value.converter.schemas.enable": "true",
    }


def table_rows(server: Any, database: str, table: str) -> int:
    try:
        return int(server.query(database, f'SELECT count(*) FROM "{table}"')[0][0])
    except Exception:  # not created yet
        return 0


def fill_source_table(server: Any, database: str, lines: list[bytes]) -> None:
    """The table of ``--source jdbc``: one row per record, ids 1..n (COPY, not timed)."""
    import psycopg

    with psycopg.connect(server.dsn(database)) as conn:
        conn.execute(f"CREATE TABLE {JDBC_SOURCE_TABLE} (id BIGSERIAL PRIMARY KEY, "
                     "record_value TEXT NOT NULL)")  # fmt: skip
        with conn.cursor().copy(f"COPY {JDBC_SOURCE_TABLE} (record_value) FROM STDIN") as copy:
            for line in lines:
                copy.write_row((line.decode(),))
        conn.execute(f"ANALYZE {JDBC_SOURCE_TABLE}")


def raw_selects(server: Any, database: str, count: int) -> float:
    """The baseline of ``--source jdbc``: raw psycopg reading the table as the incrementing
    mode does, ``WHERE id > ? ORDER BY id LIMIT`` JDBC_SOURCE_ROWS at a time, timed from the
    first query to the last row."""
    import psycopg

    statement = (
        f"SELECT * FROM {JDBC_SOURCE_TABLE} WHERE id > %s ORDER BY id LIMIT {JDBC_SOURCE_ROWS}"
    )
    read, last = 0, 0
    with psycopg.connect(server.dsn(database)) as conn:
        start = time.perf_counter()
        while read < count:
            rows = conn.execute(statement, [last]).fetchall()
            if not rows:
                break
            read += len(rows)
            last = rows[-1][0]
            conn.commit()
        return read / (time.perf_counter() - start)


def jdbc_source(topic_prefix: str, url: str) -> dict[str, str]:
    """The JDBC source of ``--source jdbc``: the table in incrementing mode."""
    return {
        "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
        "connection.url": url,
        "connection.user": "postgres",
        "mode": "incrementing",
        "incrementing.column.name": "id",
        "table.whitelist": JDBC_SOURCE_TABLE,
        "topic.prefix": topic_prefix,
        "batch.max.rows": str(JDBC_SOURCE_ROWS),
        "poll.interval.ms": "1000",
        "value.converter": CONVERTERS["json"],
        "value.converter.schemas.enable": "true",
    }


def committed_increment(worker: EmbeddedConnect, connector: str) -> int:
    """The JDBC source's committed offset: the last id read."""
    response = worker.http.get(f"/connectors/{connector}/offsets")
    assert response.status == 200, response.body
    return max((e["offset"].get("incrementing", 0) for e in response.body["offsets"]), default=0)


def raw_upserts(server: Any, database: str, lines: list[bytes]) -> float:
    """The baseline of ``--sink jdbc``: raw psycopg upserting the same rows with
    ``executemany``, in transactions of JDBC_BATCH rows, timed from the first to the last."""
    import psycopg

    server.query(database, JDBC_TABLE.format("raw"))
    rows = [("raw", 0, i, line.decode()) for i, line in enumerate(lines)]
    statement = (
        'INSERT INTO "raw" (__connect_topic,__connect_partition,__connect_offset,record_value) '
        "VALUES (%s,%s,%s,%s) ON CONFLICT (__connect_topic,__connect_partition,"
        "__connect_offset) DO UPDATE SET record_value=EXCLUDED.record_value"
    )
    with psycopg.connect(server.dsn(database)) as conn:
        start = time.perf_counter()
        for at in range(0, len(rows), JDBC_BATCH):
            with conn.cursor() as cursor:
                cursor.executemany(statement, rows[at : at + JDBC_BATCH])
            conn.commit()
        return len(rows) / (time.perf_counter() - start)


def parquet_rows(root: Path) -> int:
    """Records in the visible Parquet files under ``root`` (from their footers)."""
    import pyarrow.parquet as pq

    if not root.exists():
        return 0
    return sum(pq.ParquetFile(f).metadata.num_rows for f in root.rglob("*.parquet"))


def lake_sink(topic: str, store: Path) -> dict[str, str]:
    return {
        "connector.class": "LakeSink",
        "topics": topic,
        "store.url": store.as_uri(),
        "flush.size": "200000",
        "rotate.schedule.interval.ms": "1000",
        "value.converter": CONVERTERS["json"],
        "value.converter.schemas.enable": "false",
    }


@dataclass(frozen=True)
class Rate:
    """A pipeline's pace: ``steady`` counts the records that arrived after the first one
    was seen, over the time from then to the last (the raw clients' figures are timed the
    same way: from their first record); ``total`` is records/s from the connector's
    creation, its start and the broker's group join included."""

    steady: float
    total: float
    first: float  # seconds from the connector's creation to its first record out


def timed(count: int, progress: Callable[[], int], done: Callable[[], bool], start: float) -> Rate:
    """Sample ``progress`` (records out so far) every 20 ms to the first record, then
    ``done`` every 50 ms; ``start`` is when the connector was created. A failing sample
    (e.g. a REST answer other than 200) is taken again, as ``wait_for`` does."""
    first: tuple[float, int] | None = None
    deadline = start + 1200
    while True:
        now = time.perf_counter()
        if now > deadline:
            raise SystemExit(f"timed out after 1200 s: the first record was {first}")
        try:
            if first is None:
                seen = progress()
                if seen > 0:
                    first = (now, seen)
            if first is not None and done():
                end = now  # done() may read a whole file: its time is not the pipeline's
                break
        except Exception as error:
            print(f"(sampling failed, again: {error})", file=sys.stderr)
        time.sleep(0.02 if first is None else 0.05)
    assert first is not None
    at, seen = first
    steady = (count - seen) / (end - at) if end > at and count > seen else float("nan")
    return Rate(steady, count / (end - start), at - start)


def file_records(path: Path, count: int, size: int) -> tuple[Callable[[], int], Callable[[], bool]]:
    """Progress and completion of a sink's output file that is to hold ``count`` lines of
    ``size`` bytes in all: its lines counted only while it is small (reading 100 MB every
    20 ms would take a core from the worker being measured), its size after that."""

    def progress() -> int:
        written = path.stat().st_size if path.exists() else 0
        return count_lines(path) if written < (1 << 20) else written * count // size

    def done() -> bool:
        return path.exists() and path.stat().st_size >= size and count_lines(path) >= count

    return progress, done


def counted_records(path: Path, count: int) -> tuple[Callable[[], int], Callable[[], bool]]:
    """As file_records, for lines of a size not known before: the whole file's size is
    guessed from its first MiB, and its lines are counted only once it is about that big."""

    def progress() -> int:
        return count_lines(path) if path.exists() and path.stat().st_size < (1 << 20) else 1

    def done() -> bool:
        if not path.exists() or path.stat().st_size < (1 << 20):
            return False
        with path.open("rb") as f:
            head = f.read(1 << 20)
        expected = len(head) * count // max(1, head.count(b"\n"))
        return path.stat().st_size >= expected * 0.99 and count_lines(path) >= count

    return progress, done


def run_pipelines(
    worker: EmbeddedConnect,
    work: Path,
    src: Path,
    size: int,
    count: int,
    converter: str,
    transforms: bool = False,
    sink_kind: str = "file",
    source_kind: str = "file",
    database: tuple[Any, str] | None = None,
) -> tuple[Rate, Rate]:
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    conv = {"key.converter": converter, "value.converter": converter}
    if sink_kind == "jdbc":  # the sink needs schemas: each line a STRING value
        conv["value.converter"] = CONVERTERS["json"]
        conv["value.converter.schemas.enable"] = "true"
    if converter == CONVERTERS["json"]:
        conv |= {"value.converter.schemas.enable": "false", "key.converter.schemas.enable": "false"}
    source_chain: dict[str, str] = {}
    sink_chain: dict[str, str] = {}
    if transforms:
        conv |= {"value.converter": CONVERTERS["json"], "value.converter.schemas.enable": "true"}
        source_chain, sink_chain = SOURCE_CHAIN, SINK_CHAIN
    source = {
        "connector.class": "FileStreamSource",
        "file": str(src),
        "topic": f"{topic}-in" if transforms else topic,
        "batch.size": "20000",
        **conv,
        **source_chain,
    }
    # Records committed so far (the file's byte position, records being of about one size):
    # Tansu's high watermarks do not count records.
    committed = lambda: committed_position(worker, "bench-source") * count // size  # noqa: E731
    if source_kind == "spooldir":
        spool = work / "spool" / "input"
        make_spool(spool, count)
        source = {**spooldir_source(spool, topic), **source_chain}
        committed = lambda: committed_rows(worker, "bench-source")  # noqa: E731
    if source_kind == "jdbc":  # the table's topic: the prefix and the table's name
        assert database is not None
        server, name = database
        source = {**jdbc_source(f"{topic}-", server.url(name)), **source_chain}
        topic = f"{topic}-{JDBC_SOURCE_TABLE}"
        committed = lambda: committed_increment(worker, "bench-source")  # noqa: E731
    start = time.perf_counter()
    assert worker.http.put("/connectors/bench-source/config", source).status == 201
    source_rate = timed(count, committed, lambda: committed() >= count, start)
    peak = data_plane_peak_mb(worker)
    if peak is not None:
        print(f"data-plane process peak RSS after the source pipeline: {peak:,.0f} MiB")
    out = work / "out.txt"
    sink = {
        "connector.class": "FileStreamSink",
        "file": str(out),
        "topics": topic,
        **conv,
        **sink_chain,
    }
    progress, done = file_records(out, count, size)
    if source_kind in ("spooldir", "jdbc"):  # the topic holds rows as JSON: other sizes
        progress, done = counted_records(out, count)
    if sink_kind == "lake":
        store = work / "lake"
        sink = {**conv, **lake_sink(topic, store)}
        progress = lambda: parquet_rows(store / "topics")  # noqa: E731
        done = lambda: progress() >= count  # noqa: E731
    if sink_kind == "jdbc":
        assert database is not None
        server, name = database
        sink = {**conv, **jdbc_sink(topic, server.url(name))}
        progress = lambda: table_rows(server, name, topic)  # noqa: E731
        done = lambda: progress() >= count  # noqa: E731
    start = time.perf_counter()
    assert worker.http.put("/connectors/bench-sink/config", sink).status == 201
    sink_rate = timed(count, progress, done, start)
    peak = data_plane_peak_mb(worker)
    if peak is not None:
        print(f"data-plane process peak RSS after both pipelines: {peak:,.0f} MiB")
    return source_rate, sink_rate


def data_plane_peak_mb(worker: EmbeddedConnect) -> float | None:
    """The data-plane process's peak resident memory so far (VmHWM), in MiB: the Python
    process that runs the tasks (Spark's JVM is a process of its own)."""
    found = re.findall(r"Data-plane process started \(pid (\d+)", worker.log_text())
    if not found:
        return None
    try:
        status = Path(f"/proc/{found[-1]}/status").read_text()
    except OSError:
        return None
    peak = re.search(r"VmHWM:\s+(\d+) kB", status)
    return None if peak is None else int(peak.group(1)) / 1024


def last_batch_executors(worker: EmbeddedConnect, connector: str) -> int | None:
    """How many executors ran the last batch of the connector's task 0 (its status says)."""
    response = worker.http.get(f"/connectors/{connector}/status")
    tasks = response.body.get("tasks", []) if response.status == 200 else []
    batch = tasks[0].get("spark_last_batch") if tasks else None
    return None if batch is None else batch["executors"]


def await_executors(worker: EmbeddedConnect, src: Path, executors: int) -> None:
    """Feed the warm-up pipeline until one of its sink's batches ran on ``executors``
    executors: on a cluster they register some seconds after the session starts. (A sink
    batch is split over the executors; a FileStream source's batch is one source partition,
    which one executor produces, in order.)"""

    def used() -> bool:
        if last_batch_executors(worker, "warm-sink") == executors:
            return True
        with src.open("a") as out:
            out.writelines(f"more-{n}\n" for n in range(2000))
        return False

    wait_for(used, 180, interval=1.0, what=f"a batch on {executors} executors")


def warm_up(worker: EmbeddedConnect, work: Path, executors: int | None = None) -> None:
    """Start Spark and run its first jobs, so the figures measure steady throughput (on a
    cluster, until a batch ran on every executor the worker is to have)."""
    src = work / "warm.txt"
    make_records(src, 1000)
    out = work / "warm-out.txt"
    topic = f"warm-{uuid.uuid4().hex[:6]}"
    worker.http.put(
        "/connectors/warm-source/config",
        {"connector.class": "FileStreamSource", "file": str(src), "topic": topic},
    )
    worker.http.put(
        "/connectors/warm-sink/config",
        {"connector.class": "FileStreamSink", "file": str(out), "topics": topic},
    )
    wait_for(lambda: count_lines(out) >= 1000, 300, what="warm-up records")
    if executors is not None:
        await_executors(worker, src, executors)
    for name in ("warm-source", "warm-sink"):
        worker.http.delete(f"/connectors/{name}")


def measure(
    args: argparse.Namespace,
    work: Path,
    bootstrap: str,
    src: Path,
    size: int,
    spark: dict[str, str] | None = None,
    executors: int | None = None,
    database: tuple[Any, str] | None = None,
) -> tuple[Rate, Rate]:
    """One fresh worker in ``work``: warm-up, then the source and sink pipelines' rates."""
    work.mkdir(exist_ok=True)
    extra = {"offset.flush.interval.ms": "200", **(spark or {}), **args.set}
    if args.arrow_form:
        extra["transforms.columns.enable"] = "false"
    with bench_worker(work, bootstrap, extra) as worker:
        warm_up(worker, work, executors)
        return run_pipelines(
            worker,
            work,
            src,
            size,
            args.records,
            CONVERTERS[args.converter],
            args.transforms,
            args.sink,
            args.source,
            database,
        )


def cluster_runs(
    args: argparse.Namespace, work: Path, bootstrap: str, src: Path, size: int
) -> dict[int, tuple[Rate, Rate]]:
    """(source, sink) rates with one executor and with two, on ``--master``'s cluster."""
    cluster = None
    master = args.master
    if master == "cluster":
        cluster = spark_cluster.start(work / "spark-cluster", workers=2, die_with_parent=True)
        master = cluster.master_url
        print(f"started a standalone cluster at {master}: two workers of 1 core, 1 GiB")
    try:
        rates = {}
        for executors in (1, 2):
            spark = {
                **readme_cluster_properties(),
                "spark.master": master,
                "spark.cores.max": str(executors),
                "spark.executor.cores": "1",
            }
            rates[executors] = measure(
                args, work / f"executors-{executors}", bootstrap, src, size, spark, executors
            )
        return rates
    finally:
        if cluster is not None:
            cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--converter", choices=sorted(CONVERTERS), default="string")
    parser.add_argument(
        "--transforms", action="store_true", help="run a 3-transform chain on each connector"
    )
    parser.add_argument(
        "--arrow-form",
        action="store_true",
        help="with --transforms: transforms.columns.enable=false (chains run in mapInArrow)",
    )
    parser.add_argument(
        "--sink",
        choices=["file", "lake", "jdbc"],
        default="file",
        help="FileStreamSink, LakeSink, or the JDBC sink into PostgreSQL",
    )
    parser.add_argument(
        "--source",
        choices=["file", "spooldir", "jdbc"],
        default="file",
        help="FileStreamSource, the SpoolDir CSV source, or the JDBC source from PostgreSQL",
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a worker property"
    )
    parser.add_argument(
        "--master",
        help="spark://host:port, or 'cluster' to start a local one: run with one executor "
        "and with two, and print the ratio",
    )
    args = parser.parse_args()
    if any("=" not in item for item in args.set):
        parser.error("--set takes key=value")
    args.set = dict(item.split("=", 1) for item in args.set)
    with tempfile.TemporaryDirectory() as tmp, EmbeddedBroker() as broker:
        work = Path(tmp)
        src = work / "records.jsonl"
        size = make_records(src, args.records)
        lines = src.read_bytes().splitlines()
        print(
            f"{args.records:,} records, {size / args.records:.0f} bytes each on average, "
            f"converter {args.converter}, broker {broker.bootstrap_servers}"
            + (", a 3-transform chain per connector (JSON with schemas)" if args.transforms else "")
            + (", chains in the Arrow form" if args.arrow_form else "")
            + (", sink: LakeSink to Parquet" if args.sink == "lake" else "")
            + (", source: SpoolDir CSV files" if args.source == "spooldir" else "")
            + (", source: JDBC from PostgreSQL" if args.source == "jdbc" else "")
            + (f", Spark master {args.master}" if args.master else "")
        )
        raw_topic = f"raw-{uuid.uuid4().hex[:8]}"
        produce_rate = raw_produce(broker.bootstrap_servers, raw_topic, lines)
        consume_rate = raw_consume(broker.bootstrap_servers, raw_topic, args.records)
        database = server = None
        if "jdbc" in (args.sink, args.source):
            if args.master:
                parser.error("--sink jdbc and --source jdbc run on local[2] only")
            server = PostgresServer().start()
            database = (server, server.create_database("bench"))
        if server is not None and database is not None and args.sink == "jdbc":
            consume_rate = raw_upserts(server, database[1], lines)
            print(f"raw psycopg upserts (executemany, {JDBC_BATCH} a transaction): "
                  f"{consume_rate:,.0f} rows/s")  # fmt: skip
        if server is not None and database is not None and args.source == "jdbc":
            fill_source_table(server, database[1], lines)
            produce_rate = raw_selects(server, database[1], args.records)
            print(f"raw psycopg SELECT ... WHERE id > ? ORDER BY id LIMIT {JDBC_SOURCE_ROWS}: "
                  f"{produce_rate:,.0f} rows/s")  # fmt: skip
        try:
            if args.master:
                rates = cluster_runs(args, work, broker.bootstrap_servers, src, size)
            else:
                rates = {0: measure(args, work, broker.bootstrap_servers, src, size,
                                    database=database)}  # fmt: skip
        finally:
            if server is not None:
                server.stop()
        # Last: its session's JVM lives on in this process (pyspark keeps the gateway).
        bare = None if args.master else bare_job(lines)
        del lines
    target = {"lake": "lake, Parquet", "jdbc": "JDBC, PostgreSQL upserts"}.get(
        args.sink, "FileStream file"
    )
    origin = {"spooldir": "SpoolDir CSV", "jdbc": "JDBC, PostgreSQL"}.get(args.source, "FileStream")
    if args.master:
        print_cluster(rates, produce_rate, consume_rate, origin, target)
    else:
        assert bare is not None
        baseline = (
            "raw psycopg upserts (executemany)" if args.sink == "jdbc"
            else "raw confluent-kafka consumer"
        )  # fmt: skip
        source_baseline = (
            f"raw psycopg SELECT ... LIMIT {JDBC_SOURCE_ROWS}" if args.source == "jdbc"
            else "raw confluent-kafka producer"
        )  # fmt: skip
        print_local(rates[0], bare, produce_rate, consume_rate, origin, target, baseline,
                    source_baseline)  # fmt: skip


def print_local(
    rates: tuple[Rate, Rate],
    bare: tuple[float, float],
    produce_rate: float,
    consume_rate: float,
    origin: str,
    target: str,
    baseline: str = "raw confluent-kafka consumer",
    source_baseline: str = "raw confluent-kafka producer",
) -> None:
    """Per direction: the raw client, the bare Spark stage and the pipeline, each as a ratio
    to the raw client; then the pipeline's share of the bare batch job's rate, and its pace
    from the connector's creation (start and group join included) with its first record."""
    source_rate, sink_rate = rates
    rows: list[tuple[str, float, float, float | None, Rate | None]] = [
        (source_baseline, produce_rate, produce_rate, None, None),
        ("bare Spark stage (text -> bytes)", bare[0], produce_rate, None, None),
        (f"source pipeline ({origin} -> Spark -> Kafka)", source_rate.steady, produce_rate,
         bare[0], source_rate),
        (baseline, consume_rate, consume_rate, None, None),
        ("bare Spark stage (bytes -> text)", bare[1], consume_rate, None, None),
        (f"sink pipeline (Kafka -> Spark -> {target})", sink_rate.steady, consume_rate, bare[1],
         sink_rate),
    ]  # fmt: skip
    print(
        f"{'path':<50}{'records/s':>12}{'ratio':>8}{'of bare Spark':>15}"
        f"{'from creation':>15}{'first':>8}"
    )
    for label, rate, raw, job, pace in rows:
        share = "" if job is None else f"{rate / job:.2f}"
        whole = "" if pace is None else f"{pace.total:,.0f}/s"
        first = "" if pace is None else f"{pace.first:.1f} s"
        print(f"{label:<50}{rate:>12,.0f}{rate / raw:>8.2f}{share:>15}{whole:>15}{first:>8}")


def print_cluster(
    rates: dict[int, tuple[Rate, Rate]],
    produce_rate: float,
    consume_rate: float,
    origin: str,
    target: str,
) -> None:
    print(f"{'path':<50}{'1 executor':>14}{'2 executors':>14}{'2 / 1':>8}")
    rows = [
        ("raw confluent-kafka producer (no Spark)", produce_rate, None),
        (f"source pipeline ({origin} -> Spark -> Kafka)", rates[1][0].steady, rates[2][0].steady),
        ("raw confluent-kafka consumer (no Spark)", consume_rate, None),
        (f"sink pipeline (Kafka -> Spark -> {target})", rates[1][1].steady, rates[2][1].steady),
    ]
    for label, one, two in rows:
        if two is None:
            print(f"{label:<50}{one:>14,.0f}")
        else:
            print(f"{label:<50}{one:>14,.0f}{two:>14,.0f}{two / one:>8.2f}")


if __name__ == "__main__":
    main()
