"""The JDBC source (Confluent's configs) against a real worker, broker and PostgreSQL 15 (started
by the test session), and SQLite files."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from connect_lite.testing.postgres import PostgresServer
from tests.integration.testkit import create_running, unique

pytestmark = pytest.mark.integration

JSON = {
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "true",
}


def source(url: str, prefix: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
        "tasks.max": "1",
        "connection.url": url,
        "topic.prefix": prefix,
        "poll.interval.ms": "200",
        **JSON,
        **extra,
    }


@pytest.fixture(scope="module")
def database(postgres: PostgresServer) -> str:
    return postgres.create_database(unique("source").replace("-", "_"))


def values(kafka: KafkaHelpers, topic: str, count: int) -> list[dict[str, Any]]:
    """The records of a topic of one partition (made so by the test: keyless records would
    spread over several, out of order)."""
    found = kafka.consume(topic, count, timeout=90)
    return [json.loads(m.value or b"") for m in found]


def offsets(worker: EmbeddedConnect, name: str) -> list[dict[str, Any]]:
    return list(worker.http.get(f"/connectors/{name}/offsets").body["offsets"])


def test_incrementing_mode_copies_new_rows_with_confluents_records_and_offsets(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    table = unique("orders").replace("-", "_")
    postgres.query(database, f'CREATE TABLE "{table}" (id SERIAL PRIMARY KEY, item TEXT, '
                             "qty BIGINT NOT NULL, price NUMERIC(10,2), at TIMESTAMP, "
                             "day DATE)")  # fmt: skip
    rows = "('a', 1, 1.50, '2026-01-02 03:04:05', '2026-01-02'), ('b', 2, NULL, NULL, NULL)"
    postgres.query(database, f'INSERT INTO "{table}" (item, qty, price, at, day) VALUES {rows}')
    kafka.create_topic(f"pg-{table}", 1)
    name = create_running(worker, "jdbc-src", source(
        postgres.url(database), "pg-", **{"mode": "incrementing",
        "incrementing.column.name": "id", "table.whitelist": table,
        "connection.user": "postgres"}))  # fmt: skip
    topic = f"pg-{table}"
    first = values(kafka, topic, 2)
    assert first[0]["schema"]["name"] == table
    assert [f["field"] for f in first[0]["schema"]["fields"]] == [
        "id",
        "item",
        "qty",
        "price",
        "at",
        "day",
    ]
    optional = [f["optional"] for f in first[0]["schema"]["fields"]]
    assert optional == [False, True, False, True, True, True]
    assert first[0]["payload"]["id"] == 1 and first[0]["payload"]["item"] == "a"
    assert first[0]["payload"]["at"] == 1767323045000  # 2026-01-02T03:04:05Z, db.timezone UTC
    assert first[0]["payload"]["day"] == 20455  # 2026-01-02
    assert first[1]["payload"]["price"] is None
    partition = {"protocol": "1", "table": f"public.{table}"}
    wait_for(lambda: offsets(worker, name) == [{"partition": partition,
                                                "offset": {"incrementing": 2}}], 60,
             what="the offset")  # fmt: skip
    postgres.query(database, f"INSERT INTO \"{table}\" (item, qty) VALUES ('c', 3)")
    assert [v["payload"]["item"] for v in values(kafka, topic, 3)] == ["a", "b", "c"]

    # KIP-875: back to incrementing 1 reads row 2 and 3 again
    worker.http.put(f"/connectors/{name}/stop")
    wait_for(lambda: worker.client.status(name)["connector"]["state"] == "STOPPED", 60)
    answer = worker.http.patch(f"/connectors/{name}/offsets", {"offsets": [
        {"partition": partition, "offset": {"incrementing": 1}}]})  # fmt: skip
    assert answer.status == 200, answer.body
    worker.http.put(f"/connectors/{name}/resume")
    assert [v["payload"]["item"] for v in values(kafka, topic, 5)] == ["a", "b", "c", "b", "c"]


def test_timestamp_incrementing_mode_reads_updates_and_new_rows_once(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    table = unique("users").replace("-", "_")
    postgres.query(database, f'CREATE TABLE "{table}" (id INT PRIMARY KEY, name TEXT, '
                             "modified TIMESTAMP NOT NULL DEFAULT now())")  # fmt: skip
    rows = "(1, 'ann', '2026-01-01 00:00:00'), (2, 'bob', '2026-01-01 00:00:00')"
    postgres.query(database, f'INSERT INTO "{table}" (id, name, modified) VALUES {rows}')
    kafka.create_topic(f"ts-{table}", 1)
    name = create_running(worker, "jdbc-src", source(
        postgres.url(database), "ts-", **{"mode": "timestamp+incrementing",
        "incrementing.column.name": "id", "timestamp.column.name": "modified",
        "table.whitelist": table, "connection.user": "postgres"}))  # fmt: skip
    topic = f"ts-{table}"
    assert [v["payload"]["name"] for v in values(kafka, topic, 2)] == ["ann", "bob"]
    postgres.query(database, f"UPDATE \"{table}\" SET name = 'ann2', modified = now() WHERE id = 1")
    postgres.query(database, f"INSERT INTO \"{table}\" (id, name) VALUES (3, 'cy')")
    got = [v["payload"]["name"] for v in values(kafka, topic, 4)]
    assert got[:2] == ["ann", "bob"] and sorted(got[2:]) == ["ann2", "cy"]
    found = wait_for(lambda: offsets(worker, name), 60, what="an offset")
    assert set(found[0]["offset"]) == {"incrementing", "timestamp", "timestamp_nanos"}


def test_bulk_mode_and_a_new_table_in_sqlite(worker: EmbeddedConnect, kafka: KafkaHelpers) -> None:
    path = worker.workdir / f"{unique('bulk')}.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE first (id INTEGER NOT NULL, note TEXT)")
        conn.execute("INSERT INTO first VALUES (1, 'x')")
    prefix = unique("lite") + "-"
    kafka.create_topic(f"{prefix}first", 1)
    kafka.create_topic(f"{prefix}second", 1)
    create_running(worker, "jdbc-src", source(
        f"jdbc:sqlite:{path}", prefix, **{"mode": "bulk", "poll.interval.ms": "60000",
        "table.poll.interval.ms": "500"}))  # fmt: skip
    assert [v["payload"] for v in values(kafka, f"{prefix}first", 1)] == [{"id": 1, "note": "x"}]
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE second (id INTEGER NOT NULL)")
        conn.execute("INSERT INTO second VALUES (7)")
    assert [v["payload"] for v in values(kafka, f"{prefix}second", 1)] == [{"id": 7}]


def test_query_mode_and_bad_configs(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    table = unique("q").replace("-", "_")
    postgres.query(database, f'CREATE TABLE "{table}" (id INT NOT NULL, v TEXT)')
    postgres.query(database, f"INSERT INTO \"{table}\" VALUES (1, 'one'), (2, 'two')")
    topic = unique("query-topic")
    kafka.create_topic(topic, 1)
    query = f'SELECT id, upper(v) AS v FROM "{table}"'
    name = create_running(worker, "jdbc-src", source(
        postgres.url(database), topic, **{"mode": "incrementing", "query": query,
        "incrementing.column.name": "id", "connection.user": "postgres"}))  # fmt: skip
    assert [v["payload"] for v in values(kafka, topic, 2)] == [
        {"id": 1, "v": "ONE"}, {"id": 2, "v": "TWO"}
    ]  # fmt: skip
    wait_for(lambda: offsets(worker, name) == [
        {"partition": {"query": "query"}, "offset": {"incrementing": 2}}], 60)  # fmt: skip
    bad = [
        ("incrementing.column.name", {"mode": ""}),  # Confluent: "Query mode must be specified"
        ("mode", {"mode": "sometimes"}),
        ("table.include.list", {"mode": "bulk", "table.include.list": "public\\..*"}),
        ("incrementing.column.name", {"mode": "incrementing", "query": "SELECT 1 AS id"}),
        ("timestamp.column.name", {"mode": "timestamp"}),
        ("query", {"mode": "bulk", "query": "SELECT 1", "table.whitelist": "t"}),
        ("query", {"mode": "bulk", "query": "DELETE FROM t"}),
        ("topic.prefix", {"mode": "bulk", "topic.prefix": "bad prefix"}),
    ]
    for key, extra in bad:
        config = source("jdbc:sqlite::memory:", "p", **extra)
        answer = worker.http.put("/connector-plugins/JdbcSource/config/validate", config).body
        errors = {c["value"]["name"]: c["value"]["errors"] for c in answer["configs"]}
        assert errors[key], (key, errors)


def test_rows_committed_during_polls_are_read_once(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    """Incrementing mode while another client inserts in small transactions: every row
    arrives, none twice (batches of 7 rows, queries every 100 ms)."""
    import threading

    table = unique("busy").replace("-", "_")
    postgres.query(database, f'CREATE TABLE "{table}" (id BIGSERIAL PRIMARY KEY, n INT NOT NULL)')
    kafka.create_topic(f"busy-{table}", 1)
    create_running(worker, "jdbc-src", source(
        postgres.url(database), "busy-", **{"mode": "incrementing",
        "incrementing.column.name": "id", "table.whitelist": table, "batch.max.rows": "7",
        "poll.interval.ms": "100", "connection.user": "postgres"}))  # fmt: skip

    def insert() -> None:
        for n in range(300):
            postgres.query(database, f'INSERT INTO "{table}" (n) VALUES (%s)', n)

    writer = threading.Thread(target=insert)
    writer.start()
    writer.join(120)
    got = [v["payload"]["id"] for v in values(kafka, f"busy-{table}", 300)]
    assert got == list(range(1, 301))


def test_offsets_are_kept_across_a_worker_restart(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    table = unique("kept").replace("-", "_")
    postgres.query(database, f'CREATE TABLE "{table}" (id SERIAL PRIMARY KEY, item TEXT)')
    postgres.query(database, f"INSERT INTO \"{table}\" (item) VALUES ('a'), ('b'), ('c')")
    topic = f"kept-{table}"
    kafka.create_topic(topic, 1)
    # no incrementing.column.name: the serial column is found, as Confluent's finds it
    name = create_running(worker, "jdbc-src", source(
        postgres.url(database), "kept-", **{"mode": "incrementing", "table.whitelist": table,
        "connection.user": "postgres"}))  # fmt: skip
    assert [v["payload"]["item"] for v in values(kafka, topic, 3)] == ["a", "b", "c"]
    partition = {"protocol": "1", "table": f"public.{table}"}
    wait_for(lambda: offsets(worker, name) == [{"partition": partition,
                                                "offset": {"incrementing": 3}}], 60,
             what="the offset")  # fmt: skip
    worker.restart_worker()  # the offset is read back from the state file
    postgres.query(database, f"INSERT INTO \"{table}\" (item) VALUES ('d')")
    worker.wait_running(name)
    assert [v["payload"]["item"] for v in values(kafka, topic, 4)] == ["a", "b", "c", "d"]
    wait_for(lambda: offsets(worker, name)[0]["offset"] == {"incrementing": 4}, 60,
             what="the offset after the restart")  # fmt: skip
    assert len(kafka.consume(topic, 5, timeout=3)) == 4  # nothing read twice
