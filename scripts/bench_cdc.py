"""Benchmark: PostgreSQL change data capture (the Debezium-compatible connector) against a raw
reader of the same slot's WAL, and its latency from a commit to the event in Kafka.

Everything runs in one go: a PostgreSQL 15 started for the run (connect_lite.testing's
PostgresServer, wal_level=logical), an embedded broker, and a real worker process
(EmbeddedConnect on the worker's own defaults, real Spark).

1. Throughput. A table ``orders (id BIGINT PRIMARY KEY, item TEXT, qty INT, at TIMESTAMPTZ)``
   gets ``--rows`` rows in transactions of 10,000 (``INSERT ... SELECT generate_series``, not
   timed) while two slots wait: the connector's (created by the connector, which is then
   STOPPED) and a raw one. The baseline reads the raw slot with the same driver and the
   same replication stream code (connect_lite.connectors.postgres_cdc.pgoutput.Stream),
   without decoding a message, timed from START_REPLICATION to the last insert. The connector
   (``snapshot.mode=no_data``, JsonConverter with schemas) is resumed and timed from the resume
   to the committed offset of the last row's event. Both print change events per second and
   the ratio connector / raw.
2. Latency. With the connector running, ``--latency-rows`` single-row transactions, 50-200 ms
   apart; a consumer (assigned the topic's partitions, fetch.wait.max.ms=10, caught up with the
   throughput part's events first) notes when each row's event arrives. It prints the p50 and
   p99 from the commit (the client's commit returned) to the event's arrival.

    .venv/bin/python scripts/bench_cdc.py [--rows 1000000] [--latency-rows 200]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from connect_lite.connectors.postgres_cdc import pgoutput  # noqa: E402
from connect_lite.kafka.broker import EmbeddedBroker  # noqa: E402
from connect_lite.testing import EmbeddedConnect, wait_for  # noqa: E402
from connect_lite.testing.postgres import PostgresServer  # noqa: E402
from scripts.bench_pipeline import WORKER_PROPERTIES  # noqa: E402

TRANSACTION_ROWS = 10_000
TABLE = "orders"
JSON = "org.apache.kafka.connect.json.JsonConverter"


def connector_config(server: PostgresServer, database: str, prefix: str) -> dict[str, str]:
    return {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "database.hostname": server.host,
        "database.port": str(server.port),
        "database.user": server.user,
        "database.dbname": database,
        "topic.prefix": prefix,
        "slot.name": "bench_cdc",
        "snapshot.mode": "no_data",
        "key.converter": JSON,
        "value.converter": JSON,
    }


def insert_rows(server: PostgresServer, database: str, rows: int) -> tuple[int, int]:
    """The rows, in transactions of TRANSACTION_ROWS; the WAL position before the last
    transaction, and that transaction's size."""
    import psycopg

    before_last, size = 0, 0
    with psycopg.connect(server.dsn(database), autocommit=True) as conn:
        for first in range(0, rows, TRANSACTION_ROWS):
            size = min(TRANSACTION_ROWS, rows - first)
            found = conn.execute("SELECT pg_current_wal_lsn() - '0/0'").fetchone()
            before_last = int(found[0]) if found else 0
            conn.execute(
                f"INSERT INTO {TABLE} SELECT g, 'item-' || g, g %% 100, now() "
                "FROM generate_series(%s::bigint, %s::bigint) g",
                [first, first + size - 1],
            )
    return before_last, size


def raw_read(server: PostgresServer, database: str, slot: str, rows: int) -> float:
    """Inserts per second read from ``slot`` by the replication stream alone (no decoding)."""
    import psycopg

    conn = psycopg.connect(server.dsn(database) + " replication=database", autocommit=True)
    try:
        stream = pgoutput.Stream(conn, slot, "dbz_publication")
        start = time.perf_counter()
        stream.open()
        seen = 0
        while seen < rows:
            got = stream.read(10.0)
            if got is None:
                raise RuntimeError(f"the raw slot stopped after {seen:,} inserts")
            if got[1][:1] == b"I":
                seen += 1
        return rows / (time.perf_counter() - start)
    finally:
        conn.close()


def committed(worker: EmbeddedConnect, name: str) -> dict[str, Any]:
    body = worker.http.get(f"/connectors/{name}/offsets").body
    return next((o["offset"] for o in body.get("offsets", [])), {})


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def latency(
    server: PostgresServer, database: str, bootstrap: str, topic: str, count: int, first_id: int
) -> list[float]:
    """Seconds from each single-row commit to its event's arrival at a consumer."""
    import psycopg

    arrived: dict[int, float] = {}
    done = threading.Event()

    def watch() -> None:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex,
                             "fetch.wait.max.ms": 10})  # fmt: skip
        partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        try:
            while not done.is_set():
                message = consumer.poll(0.05)
                value = None if message is None or message.error() else message.value()
                if not value:
                    continue
                after = json.loads(value)["payload"]["after"]
                arrived[after["id"]] = time.time()
        finally:
            consumer.close()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    wait_for(lambda: first_id - 1 in arrived, 300, what="the consumer to catch up")
    committed_at: dict[int, float] = {}
    with psycopg.connect(server.dsn(database), autocommit=True) as conn:
        for n in range(first_id, first_id + count):
            conn.execute(f"INSERT INTO {TABLE} VALUES (%s, 'one', 1, now())", [n])
            committed_at[n] = time.time()
            time.sleep(random.uniform(0.05, 0.2))
    wait_for(lambda: len(arrived.keys() & committed_at.keys()) == count, 120)
    done.set()
    watcher.join(10)
    return [arrived[n] - committed_at[n] for n in committed_at]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--latency-rows", type=int, default=200)
    args = parser.parse_args()
    server = PostgresServer().start()
    try:
        database = server.create_database("bench")
        server.query(database, f"CREATE TABLE {TABLE} (id BIGINT PRIMARY KEY, item TEXT, "
                               "qty INT, at TIMESTAMPTZ)")  # fmt: skip
        with tempfile.TemporaryDirectory() as tmp, EmbeddedBroker() as broker:
            worker = EmbeddedConnect(bootstrap_servers=broker.bootstrap_servers,
                                     workdir=Path(tmp), worker_properties=dict(WORKER_PROPERTIES),
                                     fast_defaults=False)  # fmt: skip
            with worker:
                name, prefix = "bench-cdc", "bench"
                topic = f"{prefix}.public.{TABLE}"
                config = connector_config(server, database, prefix)
                assert worker.http.put(f"/connectors/{name}/config", config).status == 201
                wait_for(
                    lambda: (
                        server.query(
                            database, "SELECT count(*) FROM pg_replication_slots WHERE active"
                        )[0][0]
                        > 0
                    ),
                    120,
                )
                assert worker.http.put(f"/connectors/{name}/stop", None).status == 204
                wait_for(
                    lambda: (
                        server.query(
                            database, "SELECT count(*) FROM pg_replication_slots WHERE active"
                        )[0][0]
                        == 0
                    ),
                    120,
                )
                server.query(database, "SELECT pg_create_logical_replication_slot('raw', "
                                       "'pgoutput')")  # fmt: skip
                before_last, last_size = insert_rows(server, database, args.rows)
                print(f"{args.rows:,} rows inserted in transactions of {TRANSACTION_ROWS:,}")
                raw = raw_read(server, database, "raw", args.rows)
                print(f"{'raw slot read (same driver, no decoding)':<46} {raw:>12,.0f} events/s")
                start = time.perf_counter()
                assert worker.http.put(f"/connectors/{name}/resume", None).status == 202

                def finished() -> bool:
                    offset = committed(worker, name)
                    return (offset.get("lsn_commit", 0) > before_last
                            and offset.get("lsn_events_processed") == last_size)  # fmt: skip

                wait_for(finished, 3600, interval=0.5)
                rate = args.rows / (time.perf_counter() - start)
                print(f"{'connector (resume -> last offset committed)':<46} {rate:>12,.0f} "
                      f"events/s  ratio {rate / raw:.2f}")  # fmt: skip
                if not args.latency_rows:
                    return
                delays = latency(server, database, broker.bootstrap_servers, topic,
                                 args.latency_rows, args.rows)  # fmt: skip
                print(f"commit -> event at a consumer, {len(delays)} single-row transactions: "
                      f"p50 {percentile(delays, 0.5) * 1000:.0f} ms, "
                      f"p99 {percentile(delays, 0.99) * 1000:.0f} ms")  # fmt: skip
    finally:
        server.stop()


if __name__ == "__main__":
    main()
