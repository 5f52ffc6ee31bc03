"""The JDBC sink (Confluent's configs) against a real worker, broker, Spark and databases:
PostgreSQL 15 (started by the test session) and SQLite files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from connect_lite.testing.postgres import PostgresServer
from connect_lite.testing.waits import poll
from tests.integration.testkit import create_running, metric, unique

pytestmark = pytest.mark.integration

JSON = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "key.converter.schemas.enable": "true",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "true",
}
ORDER = {
    "type": "struct",
    "name": "Order",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int32", "optional": False},
        {"field": "item", "type": "string", "optional": True},
        {"field": "qty", "type": "int64", "optional": False},
    ],
}
DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
KEY = {"type": "struct", "optional": False, "fields": [{"field": "id", "type": "int32"}]}


def enveloped(schema: dict[str, Any] | None, payload: Any) -> str | None:
    if payload is None:
        return None
    return json.dumps({"schema": schema, "payload": payload})


def order(
    i: int, item: str, qty: int, schema: dict[str, Any] = ORDER, **more: Any
) -> tuple[str, str]:
    key = enveloped(KEY, {"id": i})
    value = enveloped(schema, {"id": i, "item": item, "qty": qty, **more})
    assert key is not None and value is not None
    return key, value


def sink(url: str, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
        "tasks.max": "1",
        "topics": topic,
        "connection.url": url,
        **JSON,
        **extra,
    }


@pytest.fixture(scope="module")
def database(postgres: PostgresServer) -> str:
    return postgres.create_database(unique("sink").replace("-", "_"))


def pg_rows(postgres: PostgresServer, database: str, sql: str) -> list[tuple[Any, ...]]:
    try:
        return postgres.query(database, sql)
    except Exception:  # the table is not there yet
        return []


def test_upsert_into_postgres_creates_the_table_and_keeps_the_last_record_per_key(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    topic = unique("orders").replace("-", "_")
    kafka.create_topic(topic, 2)
    # each key lives in one partition (as a keyed producer puts it): 0..4 in 0, 5..9 in 1
    kafka.produce(topic, [order(n % 5, f"item-{n}", n) for n in range(20)], partition=0)
    kafka.produce(topic, [order(5 + n % 5, f"item-{n}", n) for n in range(20)], partition=1)
    config = {"insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true"}
    create_running(worker, "jdbc", pg_sink(postgres, database, topic, **config))
    query = f'SELECT id, item, qty FROM "{topic}" ORDER BY id'
    expected = [(i % 5 + 5 * (i // 5), f"item-{15 + i % 5}", 15 + i % 5) for i in range(10)]
    wait_for(lambda: pg_rows(postgres, database, query) == expected, 120, what="upserted rows")
    ddl = postgres.query(
        database,
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_name = %s ORDER BY ordinal_position",
        topic,
    )
    assert ddl == [("id", "integer", "NO"), ("item", "text", "YES"), ("qty", "bigint", "NO")]


def test_insert_into_sqlite_with_kafka_coordinates_as_the_key(
    worker: EmbeddedConnect, kafka: KafkaHelpers, tmp_path: Path
) -> None:
    topic = unique("events").replace("-", "_")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [order(i, f"i{i}", i) for i in range(7)], partition=0)
    path = worker.workdir / f"{topic}.db"
    create_running(worker, "jdbc", sink(
        f"jdbc:sqlite:{path}", topic, **{"pk.mode": "kafka", "auto.create": "true"}))  # fmt: skip

    def rows() -> list[tuple[Any, ...]]:
        if not path.exists():
            return []
        with sqlite3.connect(path) as conn:
            try:
                return conn.execute(
                    f"SELECT __connect_topic, __connect_partition, __connect_offset, id, qty "
                    f'FROM "{topic}" ORDER BY __connect_offset'
                ).fetchall()
            except sqlite3.OperationalError:
                return []

    wait_for(lambda: len(rows()) == 7, 120, what="inserted rows")
    assert rows() == [(topic, 0, i, i, i) for i in range(7)]


def pg_sink(postgres: PostgresServer, database: str, topic: str, **extra: str) -> dict[str, str]:
    return sink(postgres.url(database), topic, **{"connection.user": "postgres", **extra})


def failed_trace(worker: EmbeddedConnect, name: str) -> str:
    """The trace of the connector's task, once it FAILED."""

    def task() -> dict[str, Any]:
        return dict(worker.client.status(name)["tasks"][0])

    return str(poll(task, lambda t: t["state"] == "FAILED", "the task failed", 120)["trace"])


COORDINATES = "__connect_topic TEXT, __connect_partition INT, __connect_offset BIGINT, "


@pytest.mark.parametrize(
    ("mode", "pk_mode", "pk_fields", "expected"),
    [
        ("insert", "none", "", [(0, "a", 1), (1, "b", 2), (0, "c", 3)]),
        ("insert", "kafka", "", [(0, "a", 1), (1, "b", 2), (0, "c", 3)]),
        ("insert", "record_key", "", [(0, "a", 1), (1, "b", 2), (2, "c", 3)]),
        ("insert", "record_value", "id,item", [(0, "a", 1), (0, "c", 3), (1, "b", 2)]),
        ("upsert", "kafka", "", [(0, "a", 1), (1, "b", 2), (0, "c", 3)]),
        ("upsert", "record_value", "id", [(0, "c", 3), (1, "b", 2)]),
        ("upsert", "record_key", "", [(0, "c", 3), (1, "b", 2)]),
        ("update", "kafka", "", [(0, "a", 1), (1, "b", 2)]),
        ("update", "record_key", "", [(0, "c", 3), (1, "old", 0)]),
        ("update", "record_value", "id", [(0, "c", 3), (1, "old", 0)]),
    ],
)
def test_insert_modes_and_key_modes(
    worker: EmbeddedConnect,
    kafka: KafkaHelpers,
    postgres: PostgresServer,
    database: str,
    mode: str,
    pk_mode: str,
    pk_fields: str,
    expected: list[tuple[Any, ...]],
) -> None:
    """Every insert.mode with every pk.mode it takes (upsert and update need a key)."""
    topic = unique(f"m_{mode}_{pk_mode}").replace("-", "_")
    kafka.create_topic(topic, 1)
    records = [order(0, "a", 1), order(1, "b", 2), order(0, "c", 3)]
    if pk_mode == "record_key" and mode == "insert":  # a key inserted twice would be refused
        records = [order(0, "a", 1), order(1, "b", 2), order(2, "c", 3)]
    if mode == "update" and pk_mode == "kafka":  # the rows of offsets 0 and 1 are there
        postgres.query(database, f'CREATE TABLE "{topic}" ({COORDINATES}id INT, item TEXT, '
                                 "qty BIGINT)")  # fmt: skip
        postgres.query(database, f"INSERT INTO \"{topic}\" VALUES ('{topic}', 0, 0, 9, 'old', "
                                 f"0), ('{topic}', 0, 1, 9, 'old', 0)")  # fmt: skip
        records = records[:2]
    elif mode == "update":  # UPDATE needs the rows first
        postgres.query(
            database, f'CREATE TABLE "{topic}" (id INT PRIMARY KEY, item TEXT, qty BIGINT)'
        )
        postgres.query(database, f"INSERT INTO \"{topic}\" VALUES (0, 'old', 0), (1, 'old', 0)")
        records = [order(0, "a", 1), order(0, "c", 3)]
    kafka.produce(topic, records, partition=0)
    create_running(worker, "jdbc", pg_sink(postgres, database, topic, **{
        "insert.mode": mode, "pk.mode": pk_mode, "pk.fields": pk_fields,
        "auto.create": "true"}))  # fmt: skip
    query = f'SELECT id, item, qty FROM "{topic}" ORDER BY id, qty'
    ordered = sorted(expected, key=lambda r: (r[0], r[2]))
    wait_for(lambda: pg_rows(postgres, database, query) == ordered, 120, what=f"{mode} rows")


def test_auto_create_ddl_logical_types_and_db_timezone(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    schema = {
        "type": "struct",
        "name": "Typed",
        "fields": [
            {"field": "id", "type": "int64"},
            {"field": "small", "type": "int16", "optional": True},
            {"field": "flag", "type": "boolean", "optional": True, "default": True},
            {"field": "ratio", "type": "double", "optional": True},
            {"field": "blob", "type": "bytes", "optional": True},
            {"field": "price", "type": "bytes", "optional": True, "name": DECIMAL,
             "parameters": {"scale": "2"}},
            {"field": "day", "type": "int32", "optional": True, "name": DATE},
            {"field": "at", "type": "int32", "optional": True, "name": TIME},
            {"field": "ts", "type": "int64", "optional": True, "name": TIMESTAMP},
        ],
    }  # fmt: skip
    payload = {
        "id": 1,
        "small": 7,
        "flag": None,
        "ratio": 0.5,
        "blob": "AQI=",  # bytes 01 02
        "price": "MDk=",  # unscaled 12345 -> 123.45
        "day": 19000,  # 2022-01-08
        "at": 3_600_000,  # 01:00:00 UTC
        "ts": 1_700_000_000_000,  # 2023-11-14T22:13:20Z
    }
    topic = unique("typed").replace("-", "_")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [(enveloped(KEY, {"id": 1}), enveloped(schema, payload))], partition=0)
    create_running(worker, "jdbc", pg_sink(postgres, database, topic, **{
        "pk.mode": "record_value", "pk.fields": "id", "auto.create": "true",
        "db.timezone": "Europe/Paris"}))  # fmt: skip
    query = f'SELECT id, small, flag, ratio, blob, price, day, "at", ts FROM "{topic}"'
    found = wait_for(lambda: pg_rows(postgres, database, query), 120, what="the typed row")
    import datetime
    import decimal

    assert found == [
        (
            1,
            7,
            True,  # a null with a default: the default (replace.null.with.default)
            0.5,
            b"\x01\x02",
            decimal.Decimal("123.45"),
            datetime.date(2022, 1, 8),
            datetime.time(2, 0),  # 01:00 UTC is 02:00 in Paris in January 1970
            datetime.datetime(2023, 11, 14, 23, 13, 20),  # wall clock in Paris
        )
    ]
    ddl = postgres.query(
        database,
        "SELECT column_name, data_type, is_nullable, column_default IS NOT NULL "
        "FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
        topic,
    )
    assert ddl == [
        ("id", "bigint", "NO", False),
        ("small", "smallint", "YES", False),
        ("flag", "boolean", "YES", True),
        ("ratio", "double precision", "YES", False),
        ("blob", "bytea", "YES", False),
        ("price", "numeric", "YES", False),
        ("day", "date", "YES", False),
        ("at", "time without time zone", "YES", False),
        ("ts", "timestamp without time zone", "YES", False),
    ]


def test_auto_evolve_adds_optional_fields_and_refuses_required_ones(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    topic = unique("evolve").replace("-", "_")
    kafka.create_topic(topic, 1)
    wider = {**ORDER, "fields": [*ORDER["fields"], {"field": "note", "type": "string",
                                                   "optional": True}]}  # fmt: skip
    kafka.produce(topic, [order(1, "a", 1), order(2, "b", 2, wider)], partition=0)
    name = create_running(worker, "jdbc", pg_sink(postgres, database, topic, **{
        "pk.mode": "record_value", "pk.fields": "id", "auto.create": "true",
        "auto.evolve": "true"}))  # fmt: skip
    query = f'SELECT id, item, qty, note FROM "{topic}" ORDER BY id'
    wait_for(
        lambda: pg_rows(postgres, database, query) == [(1, "a", 1, None), (2, "b", 2, None)],
        120,
        what="a column added",
    )
    required = {**ORDER, "fields": [*ORDER["fields"], {"field": "must", "type": "int32"}]}
    kafka.produce(topic, [order(3, "c", 3, required, must=1)], partition=0)
    trace = failed_trace(worker, name)
    assert (
        f'Cannot ALTER TABLE "{database}"."public"."{topic}" to add missing field '
        "SinkRecordField{schema=Schema{INT32}, name='must', isPrimaryKey=false}, as the field is "
        "not optional and does not have a default value" in trace
    )


def test_tombstones_delete_by_key(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    topic = unique("deletes").replace("-", "_")
    kafka.create_topic(topic, 1)
    kafka.produce(
        topic,
        [order(1, "a", 1), order(2, "b", 2), (enveloped(KEY, {"id": 1}), None), order(3, "c", 3),
         (enveloped(KEY, {"id": 3}), None), order(1, "again", 4)],
        partition=0,
    )  # fmt: skip
    create_running(worker, "jdbc", pg_sink(postgres, database, topic, **{
        "insert.mode": "upsert", "pk.mode": "record_key", "delete.enabled": "true",
        "auto.create": "true"}))  # fmt: skip
    query = f'SELECT id, item FROM "{topic}" ORDER BY id'
    wait_for(
        lambda: pg_rows(postgres, database, query) == [(1, "again"), (2, "b")],
        120,
        what="deleted and re-inserted rows",
    )


def test_a_schemaless_record_fails_the_task_with_confluents_message(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    topic = unique("schemaless").replace("-", "_")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [json.dumps({"id": 1})], partition=0)
    config = pg_sink(postgres, database, topic, **{"auto.create": "true",
                     "value.converter.schemas.enable": "false"})  # fmt: skip
    name = create_running(worker, "jdbc", config)
    trace = failed_trace(worker, name)
    assert (
        f"Sink connector '{name}' is configured with 'delete.enabled=false' and 'pk.mode=none' "
        "and therefore requires records with a non-null Struct or String value and non-null "
        f"Struct or String schema, but found record at (topic='{topic}',partition=0,offset=0,"
    ) in trace
    assert "with a HashMap value and null value schema." in trace


def test_a_missing_table_without_auto_create_fails_the_task(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    topic = unique("missing").replace("-", "_")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [order(1, "a", 1)], partition=0)
    name = create_running(worker, "jdbc", pg_sink(postgres, database, topic))
    trace = failed_trace(worker, name)
    assert (
        f'Table "{database}"."public"."{topic}" is missing and auto-creation is disabled' in trace
    )


BAD_CONFIGS = [
    ("pk.mode", {"delete.enabled": "true", "pk.mode": "kafka"}),
    ("delete.enabled", {"delete.enabled": "true", "pk.mode": "kafka"}),
    ("insert.mode", {"insert.mode": "Upsert"}),  # Confluent: all lower or all upper case
    ("pk.mode", {"insert.mode": "upsert"}),  # upsert needs a key
    ("dialect.name", {"dialect.name": "OracleDatabaseDialect"}),
    ("table.types", {"table.types": "VIEW"}),
    ("db.timezone", {"db.timezone": "Mars/Base"}),
    ("connection.url", {"connection.url": "postgresql://127.0.0.1/x"}),
    ("connection.url", {"connection.url": "jdbc:oracle:thin:@h:1521/x"}),
    ("connection.url", {"connection.url": "jdbc:sqlite:/usr/lib/evil.db"}),  # allowed paths
    ("jdbc.credentials.provider.class", {"jdbc.credentials.provider.class": "a.B"}),
]


@pytest.mark.parametrize(("key", "extra"), BAD_CONFIGS)
def test_bad_configs_are_400s_that_name_the_key(
    worker: EmbeddedConnect, key: str, extra: dict[str, str]
) -> None:
    config = {**sink("jdbc:postgresql://127.0.0.1:1/x", "t"), **extra}
    response = worker.http.put("/connector-plugins/JdbcSink/config/validate", config)
    assert response.status == 200, response.body
    errors = {c["value"]["name"]: c["value"]["errors"] for c in response.body["configs"]}
    assert errors[key], (key, errors)
    created = worker.http.post("/connectors", {"name": unique("bad"), "config": config})
    assert created.status == 400, created.body
    assert errors[key][0] in created.body["message"]  # Kafka's 400 lists the keys' errors


def test_the_password_is_hidden_in_validate_and_logs(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    """Configs are returned as written (as in Kafka: keep secrets in config providers), but
    validate shows a PASSWORD as [hidden], and no log line quotes it."""
    topic = unique("secret").replace("-", "_")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [order(1, "a", 1)], partition=0)
    config = pg_sink(postgres, database, topic, **{"connection.password": "s3cret-pw",
                     "auto.create": "true"})  # fmt: skip
    answer = worker.http.put("/connector-plugins/JdbcSink/config/validate", config).body
    shown = {c["value"]["name"]: c["value"]["value"] for c in answer["configs"]}
    assert shown["connection.password"] == "[hidden]"
    create_running(worker, "jdbc", config)
    query = f'SELECT id FROM "{topic}"'
    wait_for(lambda: pg_rows(postgres, database, query) == [(1,)], 120, what="the row")
    assert "s3cret-pw" not in worker.log_text()


def test_a_refused_record_goes_to_the_dead_letter_queue_alone(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    topic, dlq = unique("checked").replace("-", "_"), unique("jdbc-dlq")
    kafka.create_topic(topic, 1)
    postgres.query(
        database,
        f'CREATE TABLE "{topic}" (id INT PRIMARY KEY, item TEXT, qty BIGINT CHECK (qty >= 0))',
    )
    records = [order(1, "a", 1), order(2, "b", -5), order(3, "c", 3)]
    kafka.produce(topic, records, partition=0)
    name = create_running(worker, "jdbc", pg_sink(postgres, database, topic, **{
        "pk.mode": "record_value", "pk.fields": "id", "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true"}))  # fmt: skip
    query = f'SELECT id, qty FROM "{topic}" ORDER BY id'
    wait_for(lambda: pg_rows(postgres, database, query) == [(1, 1), (3, 3)], 120, what="the rest")
    dead = kafka.consume(dlq, 1, timeout=60)
    assert [m.value for m in dead] == [records[1][1].encode()]  # the record as consumed
    headers = dict(dead[0].headers)
    assert headers["__connect.errors.stage"] == b"TASK_PUT"
    assert b"check constraint" in headers["__connect.errors.exception.message"]
    assert worker.client.status(name)["tasks"][0]["state"] == "RUNNING"


def test_the_database_away_for_a_while_loses_nothing(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    topic = unique("outage").replace("-", "_")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [order(i, "before", i) for i in range(5)], partition=0)
    name = create_running(worker, "jdbc", pg_sink(postgres, database, topic, **{
        "insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true",
        "connection.backoff.ms": "200", "retry.backoff.ms": "500"}))  # fmt: skip
    query = f'SELECT count(*) FROM "{topic}"'
    wait_for(lambda: pg_rows(postgres, database, query) == [(5,)], 120, what="first rows")
    postgres.crash()  # kill -9 of the server and all its processes
    try:
        kafka.produce(topic, [order(i, "during", i) for i in range(5, 50)], partition=0)
        wait_for(lambda: "The database did not take the batch" in worker.log_text(), 60,
                 what="a retried batch")  # fmt: skip
        # RUNNING, its trace and task-error-metrics show the refusal
        task = poll(lambda: worker.client.status(name)["tasks"][0], lambda t: "trace" in t,
                    "the retry in the status", 60)  # fmt: skip
        assert task["state"] == "RUNNING"
        assert "The database did not take the batch" in task["trace"]
        assert (metric(worker, "total_retries", name) or 0) >= 1
    finally:
        postgres.resume()
    wait_for(lambda: pg_rows(postgres, database, query) == [(50,)], 120, what="every row")
    wait_for(lambda: "trace" not in worker.client.status(name)["tasks"][0], 60,
             what="the trace gone once the batch is taken")  # fmt: skip

    def committed() -> int:
        body = worker.http.get(f"/connectors/{name}/offsets").body
        return int(body["offsets"][0]["offset"]["kafka_offset"]) if body["offsets"] else 0

    wait_for(lambda: committed() == 50, 60, what="offsets after the outage")


def test_kill_9_mid_stream_leaves_the_upserted_table_as_without_the_crash(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    topic = unique("crash").replace("-", "_")
    kafka.create_topic(topic, 2)
    create_running(worker, "jdbc", pg_sink(postgres, database, topic, **{
        "insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true"}))  # fmt: skip
    # keys 0..99 in partition 0, 100..199 in 1; ten rounds, each newer than the last
    for round_ in range(5):
        for partition in (0, 1):
            base = 100 * partition
            kafka.produce(
                topic, [order(base + k, f"r{round_}", round_) for k in range(100)], partition
            )
    query = f'SELECT count(*) FROM "{topic}"'
    wait_for(lambda: pg_rows(postgres, database, query) == [(200,)], 120, what="some rows")
    for round_ in range(5, 10):
        for partition in (0, 1):
            base = 100 * partition
            kafka.produce(
                topic, [order(base + k, f"r{round_}", round_) for k in range(100)], partition
            )
    worker.kill_worker()
    worker.start_worker()
    final = f'SELECT id, item, qty FROM "{topic}" ORDER BY id'
    expected = [(k, "r9", 9) for k in range(200)]
    wait_for(lambda: pg_rows(postgres, database, final) == expected, 180, what="the final table")


def test_confluent_licence_keys_are_accepted_with_one_warning(
    worker: EmbeddedConnect, kafka: KafkaHelpers
) -> None:
    topic = unique("licensed").replace("-", "_")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [order(1, "a", 1)], partition=0)
    path = worker.workdir / f"{topic}.db"
    extra = {"confluent.license": "", "confluent.topic.bootstrap.servers": "x:9092",
             "auto.create": "true", "undocumented.key": "ignored"}  # fmt: skip
    name = create_running(worker, "jdbc", sink(f"jdbc:sqlite:{path}", topic, **extra))

    def rows() -> list[tuple[Any, ...]]:
        with sqlite3.connect(path) as conn:
            return conn.execute(f'SELECT id FROM "{topic}"').fetchall()

    wait_for(lambda: path.exists() and rows() == [(1,)], 120, what="the row")
    warnings = [
        line for line in worker.log_text().splitlines()
        if "Ignoring Confluent licence keys" in line and f"[{name}" in line
    ]  # fmt: skip
    assert len(warnings) == 1, warnings
    assert "confluent.license, confluent.topic.bootstrap.servers" in warnings[0]


def test_timestamps_keep_their_instant_in_an_existing_timestamptz_column(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    """db.timezone is the session's time zone too: a wall-clock time bound in it lands on the
    same instant in a timestamptz column (the server's own zone is UTC here)."""
    import datetime

    topic = unique("tz").replace("-", "_")
    postgres.query(database, f'CREATE TABLE "{topic}" (id INT PRIMARY KEY, at TIMESTAMPTZ)')
    schema = {"type": "struct", "fields": [
        {"field": "id", "type": "int32"},
        {"field": "at", "type": "int64", "optional": True, "name": TIMESTAMP}]}  # fmt: skip
    kafka.create_topic(topic, 1)
    value = enveloped(schema, {"id": 1, "at": 1_700_000_000_000})
    kafka.produce(topic, [(enveloped(KEY, {"id": 1}), value)], partition=0)
    create_running(worker, "jdbc", pg_sink(postgres, database, topic, **{
        "pk.mode": "record_value", "pk.fields": "id",
        "db.timezone": "America/New_York"}))  # fmt: skip
    found = wait_for(
        lambda: pg_rows(postgres, database, f'SELECT at FROM "{topic}"'), 120, what="the row"
    )
    assert found[0][0] == datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.UTC)


def test_a_login_the_database_refuses_fails_the_task(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    """A wrong user is not a passing outage: no retry for ever."""
    topic = unique("login").replace("-", "_")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, [order(1, "a", 1)], partition=0)
    config = pg_sink(postgres, database, topic, **{"connection.user": "no_such_role",
                     "connection.attempts": "1", "auto.create": "true"})  # fmt: skip
    name = create_running(worker, "jdbc", config)
    assert 'role "no_such_role" does not exist' in failed_trace(worker, name)


def test_large_batches_go_by_copy_and_keep_the_last_record_of_each_key(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    """Batches of 200 rows and more are COPYed (the PostgreSQL dialect's bulk_write): an
    upsert of 3,000 records over 100 keys ends with each key's last record, and an insert
    writes every record once."""
    upserted, inserted = (unique(n).replace("-", "_") for n in ("bulk_up", "bulk_in"))
    for topic in (upserted, inserted):
        kafka.create_topic(topic, 1)
        kafka.produce(topic, [order(n % 100, f"v{n}", n) for n in range(3000)], partition=0)
    create_running(worker, "jdbc", pg_sink(postgres, database, upserted, **{
        "insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true"}))  # fmt: skip
    create_running(worker, "jdbc", pg_sink(postgres, database, inserted, **{
        "pk.mode": "kafka", "auto.create": "true"}))  # fmt: skip
    last = f'SELECT id, item, qty FROM "{upserted}" ORDER BY id'
    expected = [(k, f"v{2900 + k}", 2900 + k) for k in range(100)]
    wait_for(lambda: pg_rows(postgres, database, last) == expected, 120, what="the last rows")
    every = f'SELECT count(*), count(DISTINCT __connect_offset), sum(qty) FROM "{inserted}"'
    wait_for(lambda: pg_rows(postgres, database, every) == [(3000, 3000, sum(range(3000)))],
             120, what="every inserted row")  # fmt: skip
