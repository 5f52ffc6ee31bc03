"""The JDBC sink and source with the MySQL dialect (Confluent's MySqlDatabaseDialect) against
a real worker, broker, Spark and MariaDB (Debian's, started by the test session)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from connect_lite.testing.mariadb import MariaDbServer
from connect_lite.testing.waits import poll
from tests.integration.test_jdbc_sink import DATE, DECIMAL, ORDER, TIME, TIMESTAMP, order, sink
from tests.integration.test_jdbc_source import offsets, source, values
from tests.integration.testkit import create_running, metric, unique

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def database(mariadb: MariaDbServer) -> str:
    return mariadb.create_database(unique("mysql").replace("-", "_"))


def my_sink(server: MariaDbServer, database: str, topic: str, **extra: str) -> dict[str, str]:
    return sink(server.url(database), topic, **{"connection.user": "root", **extra})


def rows(server: MariaDbServer, database: str, sql: str) -> list[tuple[Any, ...]]:
    try:
        return server.query(database, sql)
    except Exception:  # the table is not there yet
        return []


@pytest.mark.parametrize(
    ("mode", "pk_mode", "pk_fields", "expected"),
    [
        ("insert", "none", "", [(0, "a", 1), (1, "b", 2), (0, "c", 3)]),
        ("insert", "kafka", "", [(0, "a", 1), (1, "b", 2), (0, "c", 3)]),
        ("upsert", "record_value", "id", [(0, "c", 3), (1, "b", 2)]),
        ("upsert", "record_key", "", [(0, "c", 3), (1, "b", 2)]),
        ("update", "record_key", "", [(0, "c", 3), (1, "old", 0)]),
    ],
)
def test_insert_modes_and_key_modes(
    worker: EmbeddedConnect,
    kafka: KafkaHelpers,
    mariadb: MariaDbServer,
    database: str,
    mode: str,
    pk_mode: str,
    pk_fields: str,
    expected: list[tuple[Any, ...]],
) -> None:
    topic = unique(f"m_{mode}_{pk_mode}").replace("-", "_")
    kafka.create_topic(topic, 1)
    records = [order(0, "a", 1), order(1, "b", 2), order(0, "c", 3)]
    if mode == "update":  # UPDATE needs the rows first
        mariadb.query(database, f"CREATE TABLE `{topic}` (id INT PRIMARY KEY, item TEXT, "
                                "qty BIGINT)")  # fmt: skip
        mariadb.query(database, f"INSERT INTO `{topic}` VALUES (0, 'old', 0), (1, 'old', 0)")
        records = [order(0, "a", 1), order(0, "c", 3)]
    kafka.produce(topic, records, partition=0)
    create_running(worker, "jdbc", my_sink(mariadb, database, topic, **{
        "insert.mode": mode, "pk.mode": pk_mode, "pk.fields": pk_fields,
        "auto.create": "true"}))  # fmt: skip
    query = f"SELECT id, item, qty FROM `{topic}` ORDER BY id, qty"
    ordered = sorted(expected, key=lambda r: (r[0], r[2]))
    wait_for(lambda: rows(mariadb, database, query) == ordered, 120, what=f"{mode} rows")


def test_auto_create_and_evolve_ddl_logical_types_and_deletes(
    worker: EmbeddedConnect, kafka: KafkaHelpers, mariadb: MariaDbServer, database: str
) -> None:
    topic = unique("typed").replace("-", "_")
    kafka.create_topic(topic, 1)
    typed = {**ORDER, "fields": [*ORDER["fields"],
        {"field": "price", "type": "bytes", "name": DECIMAL, "parameters": {"scale": "2"}},
        {"field": "day", "type": "int32", "name": DATE},
        {"field": "at", "type": "int32", "name": TIME},
        {"field": "ts", "type": "int64", "name": TIMESTAMP},
        {"field": "ok", "type": "boolean"}, {"field": "blob", "type": "bytes"},
        {"field": "ratio", "type": "double"}]}  # fmt: skip
    more = {"price": "AfQ=", "day": 20454, "at": 3723004, "ts": 1767323045123, "ok": True,
            "blob": "AQI=", "ratio": 0.5}  # fmt: skip
    kafka.produce(topic, [order(1, "a", 1, typed, **more), order(2, "b", 2, typed, **more)], 0)
    name = create_running(worker, "jdbc", my_sink(mariadb, database, topic, **{
        "insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true",
        "auto.evolve": "true", "delete.enabled": "true", "db.timezone": "UTC"}))  # fmt: skip
    query = f"SELECT id, item, qty, price, day, at, ts, ok, `blob`, ratio FROM `{topic}`"
    wait_for(lambda: len(rows(mariadb, database, query)) == 2, 120, what="typed rows")
    ddl = mariadb.query(database, "SELECT column_name, column_type, is_nullable FROM "
                        "information_schema.columns WHERE table_schema = %s AND table_name = %s "
                        "ORDER BY ordinal_position", database, topic)  # fmt: skip
    assert ddl == [("id", "int(11)", "NO"), ("item", "text", "YES"), ("qty", "bigint(20)", "NO"),
                   ("price", "decimal(65,2)", "NO"), ("day", "date", "NO"),
                   ("at", "time(3)", "NO"), ("ts", "datetime(3)", "NO"),
                   ("ok", "tinyint(4)", "NO"), ("blob", "varbinary(1024)", "NO"),
                   ("ratio", "double", "NO")]  # fmt: skip
    first = rows(mariadb, database, query + " WHERE id = 1")[0]
    assert [str(v) for v in first] == [
        "1",
        "a",
        "1",
        "5.00",
        "2026-01-01",
        "1:02:03.004000",
        "2026-01-02 03:04:05.123000",
        "1",
        "b'\\x01\\x02'",
        "0.5",
    ]
    # a new optional field is a new column; a tombstone deletes its key's row
    evolved = {
        **typed,
        "fields": [*typed["fields"], {"field": "note", "type": "string", "optional": True}],
    }
    key, _ = order(2, "", 0)
    kafka.produce(topic, [order(3, "c", 3, evolved, note="new", **more), (key, None)], 0)
    after = f"SELECT id, note FROM `{topic}` ORDER BY id"
    wait_for(lambda: rows(mariadb, database, after) == [(1, None), (3, "new")], 120,
             what="the evolved table without row 2")  # fmt: skip
    assert worker.client.status(name)["tasks"][0]["state"] == "RUNNING"


def test_the_database_away_for_a_while_loses_nothing(
    worker: EmbeddedConnect, kafka: KafkaHelpers, mariadb: MariaDbServer, database: str
) -> None:
    topic = unique("outage").replace("-", "_")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [order(i, "before", i) for i in range(5)], partition=0)
    name = create_running(worker, "jdbc", my_sink(mariadb, database, topic, **{
        "insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true",
        "connection.attempts": "2", "connection.backoff.ms": "200",
        "max.retries": "1", "retry.backoff.ms": "300"}))  # fmt: skip
    query = f"SELECT count(*) FROM `{topic}`"
    wait_for(lambda: rows(mariadb, database, query) == [(5,)], 120, what="first rows")
    mariadb.halt()
    try:
        kafka.produce(topic, [order(i, "during", i) for i in range(5, 50)], partition=0)
        task = poll(lambda: worker.client.status(name)["tasks"][0], lambda t: "trace" in t,
                    "the retry in the status", 90)  # fmt: skip
        assert task["state"] == "RUNNING"
        assert "The database did not take the batch" in task["trace"]
        assert (metric(worker, "total_retries", name) or 0) >= 1
    finally:
        mariadb.resume()
    wait_for(lambda: rows(mariadb, database, query) == [(50,)], 120, what="every row")
    wait_for(lambda: "trace" not in worker.client.status(name)["tasks"][0], 60,
             what="the trace gone once the batch is taken")  # fmt: skip


def test_a_bad_url_parameter_and_a_dialect_mismatch_are_400s_naming_the_key(
    worker: EmbeddedConnect, mariadb: MariaDbServer, database: str
) -> None:
    config = my_sink(mariadb, database, "t", **{"connector.class": "JdbcSink"})
    config["connection.url"] += "?useSSL=false&serverTimezone=UTC&cachePrepStmts=true"
    answer = worker.http.put("/connectors/bad-mysql/config", config)
    assert answer.status == 400
    assert "connection.url" in answer.body["message"]
    assert "cachePrepStmts" in answer.body["message"]
    config["connection.url"] = mariadb.url(database)
    config["dialect.name"] = "PostgreSqlDatabaseDialect"
    answer = worker.http.put("/connectors/bad-mysql/config", config)
    assert answer.status == 400 and "dialect.name" in answer.body["message"]


def test_the_source_reads_tables_with_confluents_partitions_offsets_and_types(
    worker: EmbeddedConnect, kafka: KafkaHelpers, mariadb: MariaDbServer, database: str
) -> None:
    table = unique("orders").replace("-", "_")
    mariadb.query(database, f"CREATE TABLE `{table}` (id INT AUTO_INCREMENT PRIMARY KEY, "
                            "item VARCHAR(20), qty BIGINT NOT NULL, price DECIMAL(10,2), "
                            "flag TINYINT(1), small SMALLINT UNSIGNED, at DATETIME(3), "
                            "t TIME, made YEAR, raw BLOB)")  # fmt: skip
    mariadb.query(database, f"INSERT INTO `{table}` (item, qty, price, flag, small, at, t, made, "
                            "raw) VALUES ('a', 1, 1.50, 1, 65535, '2026-01-02 03:04:05.123', "
                            "'01:02:03', 2024, x'0102'), ('b', 2, NULL, 0, 0, NULL, NULL, NULL, "
                            "NULL)")  # fmt: skip
    topic = f"my-{table}"
    kafka.create_topic(topic, 1)
    name = create_running(worker, "jdbc-src", source(  # id: found, AUTO_INCREMENT
        mariadb.url(database), "my-", **{"mode": "incrementing", "table.whitelist": table,
        "connection.user": "root"}))  # fmt: skip
    first = values(kafka, topic, 2)
    schema = first[0]["schema"]
    assert schema["name"] == table
    fields = {f["field"]: f for f in schema["fields"]}
    assert [f["field"] for f in schema["fields"]] == [
        "id", "item", "qty", "price", "flag", "small", "at", "t", "made", "raw"]  # fmt: skip
    assert {k: (f["type"], f.get("name"), f["optional"]) for k, f in fields.items()} == {
        "id": ("int32", None, False),
        "item": ("string", None, True),
        "qty": ("int64", None, False),
        "price": ("bytes", DECIMAL, True),
        "flag": ("int8", None, True),
        "small": ("int32", None, True),
        "at": ("int64", TIMESTAMP, True),
        "t": ("int32", TIME, True),
        "made": ("int32", DATE, True),
        "raw": ("bytes", None, True),
    }
    payload = first[0]["payload"]
    assert payload["at"] == 1767323045123  # 2026-01-02T03:04:05.123Z, db.timezone UTC
    assert (payload["t"], payload["made"], payload["small"]) == (3723000, 19723, 65535)
    assert payload["raw"] == "AQI=" and payload["flag"] == 1
    partition = {"protocol": "1", "table": f"{database}.{table}"}
    wait_for(lambda: offsets(worker, name) == [{"partition": partition,
                                                "offset": {"incrementing": 2}}], 60,
             what="the offset")  # fmt: skip

    # KIP-875: back to incrementing 1 reads row 2 and a new row 3
    worker.http.put(f"/connectors/{name}/stop")
    wait_for(lambda: worker.client.status(name)["connector"]["state"] == "STOPPED", 60)
    answer = worker.http.patch(f"/connectors/{name}/offsets", {"offsets": [
        {"partition": partition, "offset": {"incrementing": 1}}]})  # fmt: skip
    assert answer.status == 200, answer.body
    mariadb.query(database, f"INSERT INTO `{table}` (item, qty) VALUES ('c', 3)")
    worker.http.put(f"/connectors/{name}/resume")
    assert [v["payload"]["item"] for v in values(kafka, topic, 4)] == ["a", "b", "b", "c"]


def test_the_source_in_timestamp_incrementing_mode_reads_updates_once(
    worker: EmbeddedConnect, kafka: KafkaHelpers, mariadb: MariaDbServer, database: str
) -> None:
    table = unique("users").replace("-", "_")
    mariadb.query(database, f"CREATE TABLE `{table}` (id INT PRIMARY KEY, name TEXT, modified "
                            "DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3))")  # fmt: skip
    mariadb.query(database, f"INSERT INTO `{table}` VALUES (1, 'ann', '2026-01-01'), "
                            "(2, 'bob', '2026-01-01')")  # fmt: skip
    topic = f"myts-{table}"
    kafka.create_topic(topic, 1)
    name = create_running(worker, "jdbc-src", source(
        mariadb.url(database), "myts-", **{"mode": "timestamp+incrementing",
        "incrementing.column.name": "id", "timestamp.column.name": "modified",
        "table.whitelist": table, "connection.user": "root",
        "db.timezone": "Europe/Paris"}))  # fmt: skip
    assert [v["payload"]["name"] for v in values(kafka, topic, 2)] == ["ann", "bob"]
    mariadb.query(database, f"UPDATE `{table}` SET name = 'ann2', modified = "
                            "CURRENT_TIMESTAMP(3) WHERE id = 1")  # fmt: skip
    mariadb.query(database, f"INSERT INTO `{table}` (id, name) VALUES (3, 'cy')")
    got = [v["payload"]["name"] for v in values(kafka, topic, 4)]
    assert got[:2] == ["ann", "bob"] and sorted(got[2:]) == ["ann2", "cy"]
    found = wait_for(lambda: offsets(worker, name), 60, what="an offset")
    assert found[0]["partition"] == {"protocol": "1", "table": f"{database}.{table}"}
    assert set(found[0]["offset"]) == {"incrementing", "timestamp", "timestamp_nanos"}
    first = json.loads(kafka.consume(topic, 1, timeout=30)[0].value or b"")
    assert first["payload"]["modified"] == 1767222000000  # 2026-01-01 00:00 in Paris


def test_a_value_its_column_cannot_hold_goes_to_the_dead_letter_queue_alone(
    worker: EmbeddedConnect, kafka: KafkaHelpers, mariadb: MariaDbServer, database: str
) -> None:
    """Record by record in savepoints of one transaction: the refused record alone goes to
    the DLQ, and the records around it are written."""
    topic, dlq = unique("narrow").replace("-", "_"), unique("mysql-dlq")
    kafka.create_topic(topic, 1)
    mariadb.query(database, f"CREATE TABLE `{topic}` (id INT PRIMARY KEY, item TEXT, "
                            "qty TINYINT)")  # fmt: skip
    records = [order(1, "a", 1), order(2, "b", 1000), order(3, "c", 3)]
    kafka.produce(topic, records, partition=0)
    name = create_running(worker, "jdbc", my_sink(mariadb, database, topic, **{
        "pk.mode": "record_value", "pk.fields": "id", "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true"}))  # fmt: skip
    query = f"SELECT id, qty FROM `{topic}` ORDER BY id"
    wait_for(lambda: rows(mariadb, database, query) == [(1, 1), (3, 3)], 120, what="the rest")
    dead = kafka.consume(dlq, 1, timeout=60)
    assert [m.value for m in dead] == [records[1][1].encode()]
    assert b"Out of range" in dict(dead[0].headers)["__connect.errors.exception.message"]
    assert worker.client.status(name)["tasks"][0]["state"] == "RUNNING"


def test_a_partitions_writes_stay_in_one_transaction(mariadb: MariaDbServer, database: str) -> None:
    """The writer opens savepoints record by record (sql.begin before each): on MySQL a BEGIN
    would commit what came before, so a rollback must still undo every one of them."""
    from connect_lite.connectors.jdbc.config import Connection
    from connect_lite.connectors.jdbc.registry import dialect

    table = unique("atomic").replace("-", "_")
    mariadb.query(database, f"CREATE TABLE `{table}` (id INT PRIMARY KEY)")
    sql = dialect("MySqlDatabaseDialect", True)
    settings = Connection(mariadb.url(database), "root", None, sql.name, 1, 100, True)
    conn = sql.connect_retrying(settings)
    try:
        for i in range(3):
            sql.begin(conn)
            sql.execute(conn, "SAVEPOINT connect_lite_record")
            sql.execute(conn, f"INSERT INTO `{table}` VALUES (%s)", [i])
            sql.execute(conn, "RELEASE SAVEPOINT connect_lite_record")
        conn.rollback()
    finally:
        conn.close()
    assert mariadb.query(database, f"SELECT count(*) FROM `{table}`") == [(0,)]
