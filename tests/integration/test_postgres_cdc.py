"""The PostgreSQL CDC connector (Debezium's configs and events) against a real worker, broker
and PostgreSQL 15 (the test session's server, with wal_level=logical)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, KafkaHelpers, wait_for
from connect_lite.testing.metrics import Metrics
from connect_lite.testing.postgres import PostgresServer
from tests.integration.testkit import create_running, unique

pytestmark = pytest.mark.integration

JSON = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
}


def cdc(postgres: PostgresServer, database: str, prefix: str, **extra: str) -> dict[str, str]:
    """A config as a Debezium user writes it."""
    return {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "database.hostname": postgres.host,
        "database.port": str(postgres.port),
        "database.user": postgres.user,
        "database.password": "unused",
        "database.dbname": database,
        "topic.prefix": prefix,
        "plugin.name": "pgoutput",
        "slot.name": prefix.replace("-", "_"),
        "publication.name": f"pub_{prefix.replace('-', '_')}",
        "slot.drop.on.stop": "true",
        "poll.interval.ms": "100",
        **JSON,
        **extra,
    }


@pytest.fixture(scope="module")
def database(postgres: PostgresServer) -> str:
    return postgres.create_database(unique("cdc").replace("-", "_"))


def events(kafka: KafkaHelpers, topic: str, count: int) -> list[tuple[Any, Any]]:
    found = kafka.consume(topic, count, timeout=90)
    return [(json.loads(m.key) if m.key else None, json.loads(m.value) if m.value else None)
            for m in found]  # fmt: skip


def test_a_snapshot_then_inserts_updates_and_deletes_as_debezium_writes_them(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    table = unique("orders").replace("-", "_")
    postgres.query(
        database,
        f"CREATE TABLE {table} (id SERIAL PRIMARY KEY, item TEXT NOT NULL, "
        "qty BIGINT, price NUMERIC(10,2), at TIMESTAMP, "
        "stamp TIMESTAMPTZ, day DATE, doc JSONB, tag UUID, raw BYTEA, "
        "state VARCHAR(8) NOT NULL DEFAULT 'new', made TIMESTAMP DEFAULT now())",
    )
    postgres.query(database, f"INSERT INTO {table} VALUES (1, 'a', 5, 1.50, "
                             "'2026-01-02 03:04:05.123456', '2026-01-02 03:04:05+02', "
                             "'2026-01-02', '{\"k\": 1}', "
                             "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x0102')")  # fmt: skip
    prefix = unique("dbz")
    topic = f"{prefix}.public.{table}"
    kafka.create_topic(topic, 1)
    name = create_running(worker, "cdc", cdc(postgres, database, prefix))
    (first,) = kafka.consume(topic, 1, timeout=90)
    # Debezium's bytes: a serial key's schema carries the type's placeholder as its default
    assert (
        first.key
        == (
            '{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"default":0,'
            f'"field":"id"}}],"optional":false,"name":"{topic}.Key"}},"payload":{{"id":1}}}}'
        ).encode()
    )
    key, value = json.loads(first.key), json.loads(first.value)
    assert key["schema"]["name"] == f"{topic}.Key"
    assert key["payload"] == {"id": 1}
    assert value["schema"]["name"] == f"{topic}.Envelope"
    assert [f["field"] for f in value["schema"]["fields"]] == [
        "before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]  # fmt: skip
    payload = value["payload"]
    assert payload["op"] == "r" and payload["before"] is None
    assert payload["source"]["snapshot"] == "last"
    assert payload["source"]["connector"] == "postgresql"
    assert payload["source"]["table"] == table and payload["source"]["schema"] == "public"
    after = payload["after"]
    assert after["id"] == 1 and after["item"] == "a" and after["qty"] == 5
    assert after["at"] == 1767323045123456  # io.debezium.time.MicroTimestamp
    assert after["stamp"] == "2026-01-02T01:04:05.000000Z"  # ZonedTimestamp, in UTC
    assert after["day"] == 20455  # io.debezium.time.Date: days since the epoch
    assert after["doc"] == '{"k": 1}'
    assert after["tag"] == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
    assert after["raw"] == "AQI="  # bytes, base64 in JSON
    assert after["price"] == "AJY="  # Decimal 1.50: unscaled 150
    fields = {f["field"]: f for f in value["schema"]["fields"][1]["fields"]}
    assert fields["at"]["name"] == "io.debezium.time.MicroTimestamp"
    assert list(fields["price"]["parameters"].items()) == [  # in Debezium's order
        ("scale", "2"), ("connect.decimal.precision", "10")]  # fmt: skip
    assert fields["state"]["default"] == "new" and after["state"] == "new"
    assert fields["made"]["default"] == 0  # now(): the epoch, as Debezium puts it
    assert "default" not in fields["qty"]
    assert fields["item"]["optional"] is False and fields["qty"]["optional"] is True

    postgres.query(database, f"INSERT INTO {table} (id, item) VALUES (2, 'b')")
    postgres.query(database, f"UPDATE {table} SET qty = 7 WHERE id = 2")
    postgres.query(database, f"DELETE FROM {table} WHERE id = 1")
    changes = events(kafka, topic, 5)[1:]
    assert [v["payload"]["op"] if v else None for _, v in changes] == ["c", "u", "d", None]
    inserted, updated, deleted, tombstone = changes
    assert inserted[1]["payload"]["after"]["item"] == "b"
    assert updated[1]["payload"]["before"] is None  # REPLICA IDENTITY DEFAULT
    assert updated[1]["payload"]["after"]["qty"] == 7
    assert deleted[1]["payload"]["before"]["id"] == 1 and deleted[1]["payload"]["after"] is None
    assert deleted[0]["payload"] == {"id": 1} and tombstone[0]["payload"] == {"id": 1}
    source = updated[1]["payload"]["source"]
    assert source["snapshot"] == "false" and source["lsn"] > 0 and source["txId"] > 0

    def committed() -> dict[str, Any]:
        body = worker.http.get(f"/connectors/{name}/offsets").body
        return next((o["offset"] for o in body["offsets"]), {})

    wait_for(lambda: committed().get("messageType") == "DELETE", timeout=60)
    offsets = worker.http.get(f"/connectors/{name}/offsets").body["offsets"]
    assert offsets[0]["partition"] == {"server": prefix}
    assert {"lsn", "txId", "ts_usec", "lsn_commit", "lsn_proc"} <= offsets[0]["offset"].keys()


def slot_position(postgres: PostgresServer, database: str, slot: str) -> int:
    rows = postgres.query(database, "SELECT confirmed_flush_lsn - '0/0' FROM pg_replication_slots "
                                    "WHERE slot_name = %s", slot)  # fmt: skip
    return int(rows[0][0]) if rows else 0


def test_kill_9_mid_stream_loses_nothing_and_the_slot_advances_after_commits(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    import threading

    table = unique("crash").replace("-", "_")
    postgres.query(database, f"CREATE TABLE {table} (id INT PRIMARY KEY, n INT)")
    prefix = unique("dbzk")
    slot = prefix.replace("-", "_")
    topic = f"{prefix}.public.{table}"
    kafka.create_topic(topic, 1)
    create_running(
        worker,
        "cdc",
        cdc(
            postgres, database, prefix, **{"slot.drop.on.stop": "false", "snapshot.mode": "no_data"}
        ),
    )
    start = slot_position(postgres, database, slot)

    def insert(first: int, last: int) -> None:
        for i in range(first, last, 10):  # transactions of ten rows
            values = ", ".join(f"({k}, {k})" for k in range(i, min(i + 10, last)))
            postgres.query(database, f"INSERT INTO {table} VALUES {values}")

    insert(0, 300)
    events(kafka, topic, 300)
    wait_for(lambda: slot_position(postgres, database, slot) > start, 90, what="the slot to move")
    writer = threading.Thread(target=insert, args=(300, 1500))
    writer.start()
    wait_for(lambda: len(kafka.consume(topic, 400, timeout=60)) >= 400, 90, what="more events")
    worker.kill_worker()
    writer.join(120)
    worker.start_worker()

    def ids() -> list[int]:
        found = kafka.consume(topic, None, timeout=30, idle=2.0)
        return [json.loads(m.value)["payload"]["after"]["id"] for m in found if m.value]

    wait_for(lambda: set(ids()) >= set(range(1500)), 120, what="every row after the crash")
    seen = ids()
    assert len(seen) >= 1500  # at least once: duplicates only from the uncommitted stretch


def test_bad_configs_are_400s_that_name_the_key(worker: EmbeddedConnect) -> None:
    bad = [
        ("plugin.name", {"plugin.name": "decoderbufs"}, "stock PostgreSQL"),
        ("snapshot.mode", {"snapshot.mode": "sometimes"}, ""),
        ("message.key.columns", {"message.key.columns": "public.t:id"}, "does not support"),
        ("provide.transaction.metadata", {"provide.transaction.metadata": "true"}, "support"),
        ("topic.prefix", {"topic.prefix": "bad prefix"}, ""),
        ("skipped.operations", {"skipped.operations": "x"}, ""),
    ]
    base = {
        "connector.class": "PostgresConnector",
        "database.hostname": "127.0.0.1",
        "database.user": "u",
        "database.dbname": "d",
        "topic.prefix": "p",
    }
    for key, extra, words in bad:
        answer = worker.http.put(
            "/connector-plugins/PostgresConnector/config/validate", {**base, **extra}
        ).body
        errors = {c["value"]["name"]: c["value"]["errors"] for c in answer["configs"]}
        assert errors.get(key), (key, answer)
        assert words in " ".join(errors[key]), errors[key]
    missing = {k: v for k, v in base.items() if k != "topic.prefix"}
    answer = worker.http.put("/connector-plugins/PostgresConnector/config/validate", missing)
    assert answer.body["error_count"] >= 1
    created = worker.http.put("/connectors/cdc-bad/config", {**base, "plugin.name": "decoderbufs"})
    assert created.status == 400 and "plugin.name" in created.body["message"]


def test_snapshot_modes_and_a_new_snapshot_after_the_offsets_are_deleted(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    table = unique("modes").replace("-", "_")
    postgres.query(database, f"CREATE TABLE {table} (id INT PRIMARY KEY)")
    postgres.query(database, f"INSERT INTO {table} VALUES (1), (2)")
    for mode, expected in (("no_data", ["c"]), ("initial_only", ["r", "r", "r"])):
        prefix = unique(f"dbz-{mode.replace('_', '')}")
        topic = f"{prefix}.public.{table}"
        kafka.create_topic(topic, 1)
        name = create_running(worker, "cdc", cdc(postgres, database, prefix,
                                                 **{"snapshot.mode": mode}))  # fmt: skip
        if mode == "no_data":  # once the stream runs, an insert is captured
            slot = prefix.replace("-", "_")
            wait_for(lambda s=slot: slot_position(postgres, database, s) > 0, 60)
            postgres.query(database, f"INSERT INTO {table} VALUES (3)")
        ops = [v["payload"]["op"] for _, v in events(kafka, topic, len(expected))]
        assert ops == expected, (mode, ops)
        if mode == "initial_only":  # no stream (and no slot): a later insert never comes
            slots = "SELECT count(*) FROM pg_replication_slots WHERE slot_name = %s"
            assert postgres.query(database, slots, prefix.replace("-", "_")) == [(0,)]
            postgres.query(database, f"INSERT INTO {table} VALUES (4)")
            assert len(kafka.consume(topic, None, timeout=5, idle=3)) == 3
        assert worker.http.delete(f"/connectors/{name}").status == 204
    postgres.query(database, f"DELETE FROM {table} WHERE id > 2")

    prefix = unique("dbz-again")
    topic = f"{prefix}.public.{table}"
    kafka.create_topic(topic, 1)
    name = create_running(worker, "cdc", cdc(postgres, database, prefix))
    assert [v["payload"]["op"] for _, v in events(kafka, topic, 2)] == ["r", "r"]
    wait_for(lambda: worker.http.get(f"/connectors/{name}/offsets").body["offsets"], 60)
    assert worker.http.put(f"/connectors/{name}/stop", None).status == 204
    wait_for(lambda: worker.http.get(f"/connectors/{name}/status").body["connector"]["state"]
             == "STOPPED", 60)  # fmt: skip
    assert worker.http.delete(f"/connectors/{name}/offsets").status == 200
    assert worker.http.put(f"/connectors/{name}/resume", None).status == 202
    ops = [v["payload"]["op"] for _, v in events(kafka, topic, 4)]
    assert ops == ["r", "r", "r", "r"]  # snapshot.mode=initial: no offsets, a new snapshot


def test_truncate_full_replica_identity_toast_filters_and_a_new_column(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    table = unique("wide").replace("-", "_")
    other = unique("skipped").replace("-", "_")
    postgres.query(database, f"CREATE TABLE {table} (id INT PRIMARY KEY, big TEXT, n INT, "
                             "secret TEXT)")  # fmt: skip
    postgres.query(database, f"CREATE TABLE {other} (id INT PRIMARY KEY)")
    postgres.query(database, f"ALTER TABLE {table} REPLICA IDENTITY FULL")
    prefix = unique("dbz-wide")
    topic = f"{prefix}.public.{table}"
    kafka.create_topic(topic, 1)
    kafka.create_topic(f"{prefix}.public.{other}", 1)
    config = cdc(postgres, database, prefix, **{
        "table.include.list": f"public\\.{table}", "column.exclude.list": r"public\..*\.secret",
        "skipped.operations": "none"})  # fmt: skip
    create_running(worker, "cdc", config)
    wait_for(lambda: slot_position(postgres, database, prefix.replace("-", "_")) > 0, 60)
    big = os.urandom(40_000).hex()  # stored out of line (TOAST): it does not compress
    postgres.query(database, f"INSERT INTO {table} VALUES (1, %s, 1, 's')", big)
    postgres.query(database, f"INSERT INTO {other} VALUES (1)")
    postgres.query(database, f"ALTER TABLE {table} REPLICA IDENTITY DEFAULT")
    postgres.query(database, f"UPDATE {table} SET n = 2 WHERE id = 1")  # big: unchanged TOAST
    postgres.query(database, f"ALTER TABLE {table} REPLICA IDENTITY FULL")
    postgres.query(database, f"UPDATE {table} SET n = 3 WHERE id = 1")
    postgres.query(database, f"ALTER TABLE {table} ADD COLUMN note TEXT")
    postgres.query(database, f"UPDATE {table} SET note = 'new' WHERE id = 1")
    postgres.query(database, f"TRUNCATE {table}")
    found = events(kafka, topic, 5)
    ops = [v["payload"]["op"] for _, v in found]
    assert ops == ["c", "u", "u", "u", "t"]
    created, toasted, full, added, truncated = (v["payload"] for _, v in found)
    assert created["after"]["big"] == big and "secret" not in created["after"]
    assert toasted["after"]["big"] == "__debezium_unavailable_value"
    assert toasted["before"] is None
    assert full["before"]["n"] == 2 and full["after"]["n"] == 3  # REPLICA IDENTITY FULL
    assert added["after"]["note"] == "new"
    assert truncated["before"] is None and truncated["after"] is None
    assert found[4][0] is None  # a truncate has no key
    assert kafka.consume(f"{prefix}.public.{other}", None, timeout=3, idle=2) == []


def test_heartbeats_move_the_slot_while_the_captured_tables_are_quiet(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    quiet = unique("quiet").replace("-", "_")
    busy = unique("busy").replace("-", "_")
    postgres.query(database, f"CREATE TABLE {quiet} (id INT PRIMARY KEY)")
    postgres.query(database, f"CREATE TABLE {busy} (id INT PRIMARY KEY)")
    prefix = unique("dbz-beat")
    slot = prefix.replace("-", "_")
    heartbeats = f"__debezium-heartbeat.{prefix}"
    kafka.create_topic(heartbeats, 1)
    config = cdc(postgres, database, prefix, **{
        "table.include.list": f"public\\.{quiet}", "heartbeat.interval.ms": "300",
        "snapshot.mode": "no_data", "offset.flush.interval.ms": "500"})  # fmt: skip
    create_running(worker, "cdc", config)
    wait_for(lambda: slot_position(postgres, database, slot) > 0, 60)
    for i in range(30):  # WAL the connector does not capture
        postgres.query(database, f"INSERT INTO {busy} VALUES ({i})")
    written = int(postgres.query(database, "SELECT pg_current_wal_lsn() - '0/0'")[0][0])
    wait_for(lambda: slot_position(postgres, database, slot) >= written, 60,
             what="the slot to pass the uncaptured writes")  # fmt: skip
    (key, value), *_ = events(kafka, heartbeats, 1)
    assert key["schema"]["name"] == "io.debezium.connector.common.ServerNameKey"
    assert key["payload"] == {"serverName": prefix}
    assert value["schema"]["name"] == "io.debezium.connector.common.Heartbeat"
    assert value["payload"]["ts_ms"] > 0


def test_a_postgresql_restart_mid_stream_loses_nothing(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    table = unique("restart").replace("-", "_")
    postgres.query(database, f"CREATE TABLE {table} (id INT PRIMARY KEY)")
    prefix = unique("dbz-restart")
    topic = f"{prefix}.public.{table}"
    kafka.create_topic(topic, 1)
    name = create_running(worker, "cdc", cdc(postgres, database, prefix,
                                             **{"snapshot.mode": "no_data"}))  # fmt: skip
    wait_for(lambda: slot_position(postgres, database, prefix.replace("-", "_")) > 0, 60)
    for i in range(50):
        postgres.query(database, f"INSERT INTO {table} VALUES ({i})")
    events(kafka, topic, 50)
    postgres.halt()
    try:
        wait_for(lambda: "replication stream failed" in worker.log_text()
                 or "RetriableError" in worker.log_text(), 60)  # fmt: skip
    finally:
        postgres.resume()
    for i in range(50, 100):
        postgres.query(database, f"INSERT INTO {table} VALUES ({i})")

    def ids() -> set[int]:
        found = kafka.consume(topic, None, timeout=20, idle=2.0)
        return {json.loads(m.value)["payload"]["after"]["id"] for m in found if m.value}

    wait_for(lambda: ids() == set(range(100)), 120, what="every row after the restart")
    status = worker.http.get(f"/connectors/{name}/status").body
    assert status["tasks"][0]["state"] == "RUNNING", status


def test_the_types_as_debezium_gives_them_in_the_snapshot_and_the_stream(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    table = unique("types").replace("-", "_")
    mood = f"{table}_mood"
    postgres.query(database, f"CREATE TYPE {mood} AS ENUM ('sad', 'ok', 'happy')")
    postgres.query(database, f"CREATE TABLE {table} (id INT PRIMARY KEY, big BIGINT, "
                             "amount NUMERIC, name VARCHAR(20), ok BOOLEAN, "
                             f"feeling {mood}, tags TEXT[], counts INT[], moods {mood}[], "
                             "wait INTERVAL, at_time TIME, zoned TIMETZ, cost MONEY, "
                             "doc JSON, real_num REAL)")  # fmt: skip
    row = (
        "(1, 9000000000, 12.345, 'n', true, 'happy', '{a,\"b c\",NULL}', '{1,2}', "
        "'{sad,ok}', '1 day 2 hours', '01:02:03.5', '10:00:00+02', 12.5, '[1]', 1.5)"
    )
    postgres.query(database, f"INSERT INTO {table} VALUES {row}")
    prefix = unique("dbz-types")
    topic = f"{prefix}.public.{table}"
    kafka.create_topic(topic, 1)
    create_running(worker, "cdc", cdc(postgres, database, prefix))
    events(kafka, topic, 1)
    postgres.query(database, f"INSERT INTO {table} VALUES {row.replace('(1,', '(2,', 1)}")
    (_, snapshot), (_, streamed) = events(kafka, topic, 2)
    fields = {f["field"]: f for f in snapshot["schema"]["fields"][1]["fields"]}
    assert fields["feeling"]["name"] == "io.debezium.data.Enum"
    assert fields["feeling"]["parameters"] == {"allowed": "sad,ok,happy"}
    assert fields["tags"]["type"] == "array" and fields["tags"]["items"]["type"] == "string"
    assert fields["moods"]["items"]["name"] == "io.debezium.data.Enum"
    assert fields["amount"]["name"] == "io.debezium.data.VariableScaleDecimal"
    assert fields["wait"]["name"] == "io.debezium.time.MicroDuration"
    assert fields["at_time"]["name"] == "io.debezium.time.MicroTime"
    assert fields["zoned"]["name"] == "io.debezium.time.ZonedTime"
    assert fields["real_num"]["type"] == "float"  # Kafka's name of FLOAT32
    for event in (snapshot, streamed):
        after = event["payload"]["after"]
        assert after["big"] == 9000000000 and after["name"] == "n" and after["ok"] is True
        assert after["feeling"] == "happy" and after["tags"] == ["a", "b c", None]
        assert after["counts"] == [1, 2] and after["moods"] == ["sad", "ok"]
        assert after["amount"] == {"scale": 3, "value": "MDk="}  # 12345
        assert after["wait"] == (24 + 2) * 3600 * 1_000_000
        assert after["at_time"] == 3_723_500_000 and after["zoned"] == "08:00:00Z"
        assert after["cost"] == "BOI="  # Decimal 12.50, scale 2: unscaled 1250
        assert after["doc"] == "[1]" and after["real_num"] == 1.5


def test_cdc_then_unwrap_then_the_jdbc_sink_mirror_a_table_deletes_included(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    """The pipeline people build first: Debezium's events, ExtractNewRecordState, and
    Confluent's JDBC sink upserting and deleting by key into another database."""
    table = unique("mirror").replace("-", "_")
    columns = ("id INT PRIMARY KEY, item TEXT NOT NULL, qty BIGINT, price NUMERIC(10,2), "
               "day DATE, at TIMESTAMP, ok BOOLEAN, ratio DOUBLE PRECISION")  # fmt: skip
    postgres.query(database, f"CREATE TABLE {table} ({columns})")
    row = "'2026-01-02', '2026-01-02 03:04:05.123', true, 0.5"
    postgres.query(database, f"INSERT INTO {table} VALUES (1, 'a', 1, 1.50, {row}), "
                             f"(2, 'b', NULL, NULL, {row})")  # fmt: skip
    target = postgres.create_database(unique("mirror").replace("-", "_"))
    prefix = unique("dbz-mirror")
    topic = f"{prefix}.public.{table}"
    kafka.create_topic(topic, 1)
    create_running(worker, "cdc", cdc(postgres, database, prefix,
                                      **{"time.precision.mode": "connect"}))  # fmt: skip
    sink = {
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
        "topics": topic,
        "connection.url": postgres.url(target),
        "connection.user": "postgres",
        "insert.mode": "upsert",
        "pk.mode": "record_key",
        "delete.enabled": "true",
        "auto.create": "true",
        "table.name.format": table,
        "transforms": "unwrap",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        "transforms.unwrap.drop.tombstones": "false",
        "transforms.unwrap.delete.handling.mode": "none",
        **JSON,
    }
    create_running(worker, "mirror", sink)
    postgres.query(database, f"INSERT INTO {table} VALUES (3, 'c', 3, 3.25, {row})")
    postgres.query(database, f"UPDATE {table} SET qty = 10, price = 9.99 WHERE id = 1")
    postgres.query(database, f"DELETE FROM {table} WHERE id = 2")
    query = f"SELECT * FROM {table} ORDER BY id"

    def mirrored() -> list[tuple[Any, ...]]:
        try:
            return postgres.query(target, query)
        except Exception:  # not created yet
            return []

    expected = postgres.query(database, query)
    assert [r[0] for r in expected] == [1, 3]
    wait_for(lambda: mirrored() == expected, 120, what="the mirrored table")
    types = postgres.query(
        target,
        "SELECT column_name, data_type FROM information_schema.columns "
        f"WHERE table_name = '{table}' ORDER BY ordinal_position",
    )
    assert dict(types)["day"] == "date" and dict(types)["at"].startswith("timestamp")


def test_a_large_transaction_arrives_through_small_polls_and_a_kept_slot_warns_of_its_wal(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    table = unique("large").replace("-", "_")
    postgres.query(database, f"CREATE TABLE {table} (id INT PRIMARY KEY, pad TEXT)")
    prefix = unique("dbz-large")
    slot = prefix.replace("-", "_")
    topic = f"{prefix}.public.{table}"
    kafka.create_topic(topic, 1)
    name = create_running(
        worker,
        "cdc",
        cdc(
            postgres,
            database,
            prefix,
            **{"snapshot.mode": "no_data", "max.batch.size": "500", "slot.drop.on.stop": "false"},
        ),
    )
    wait_for(lambda: slot_position(postgres, database, slot) > 0, 60)
    postgres.query(database, f"INSERT INTO {table} SELECT g, repeat('x', 100) "
                             "FROM generate_series(1, 20000) g")  # one transaction  # fmt: skip
    found = kafka.consume(topic, 20000, timeout=120)
    assert sorted(json.loads(m.value)["payload"]["after"]["id"] for m in found) == list(
        range(1, 20001)
    )
    assert worker.http.put(f"/connectors/{name}/stop", None).status == 204
    wait_for(lambda: f"The replication slot {slot} stays and retains" in worker.log_text(), 60)

    def retained() -> int:
        status = worker.http.get(f"/connectors/{name}/status").body["connector"]
        return int(status.get("details", {}).get("retained_wal_bytes", 0))

    before = wait_for(retained, 60)  # the STOPPED connector's status shows its slot's WAL
    postgres.query(database, f"INSERT INTO {table} SELECT g, repeat('y', 100) "
                             "FROM generate_series(20001, 30000) g")  # fmt: skip
    assert worker.http.put(f"/connectors/{name}/stop", None).status == 204  # samples again
    wait_for(lambda: retained() > before + 1_000_000, 60)  # ~1.5 MB of WAL for those rows
    scrape = Metrics.parse(worker.http.request("GET", "/metrics").raw.decode())
    detail = "kafka_connect_connector_status_detail"
    assert scrape.value(detail, connector=name, detail="retained_wal_bytes") > before + 1_000_000
    assert worker.http.delete(f"/connectors/{name}").status == 204
    wait_for(lambda: postgres.query(database, "SELECT count(*) FROM pg_replication_slots "
                                              "WHERE slot_name = %s AND active", slot)[0][0] == 0,
             30)  # fmt: skip
    postgres.query(database, "SELECT pg_drop_replication_slot(%s)", slot)


def test_a_filtered_publication_holds_only_the_captured_tables(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    kept = unique("kept").replace("-", "_")
    other = unique("other").replace("-", "_")
    for table in (kept, other):
        postgres.query(database, f"CREATE TABLE {table} (id INT PRIMARY KEY)")
    prefix = unique("dbz-filtered")
    publication = f"pub_{prefix.replace('-', '_')}"
    topic = f"{prefix}.public.{kept}"
    kafka.create_topic(topic, 1)
    create_running(worker, "cdc", cdc(postgres, database, prefix, **{
        "publication.autocreate.mode": "filtered", "table.include.list": f"public\\.{kept}",
        "snapshot.mode": "no_data"}))  # fmt: skip
    tables = "SELECT tablename FROM pg_publication_tables WHERE pubname = %s"
    assert wait_for(lambda: postgres.query(database, tables, publication), 60) == [(kept,)]
    wait_for(lambda: slot_position(postgres, database, prefix.replace("-", "_")) > 0, 60)
    postgres.query(database, f"INSERT INTO {other} VALUES (1)")
    postgres.query(database, f"INSERT INTO {kept} VALUES (7)")
    ((key, _),) = events(kafka, topic, 1)
    assert key["payload"] == {"id": 7}


def test_unwrap_on_the_source_side_gives_rows_and_rewritten_deletes(
    worker: EmbeddedConnect, kafka: KafkaHelpers, postgres: PostgresServer, database: str
) -> None:
    """ExtractNewRecordState in the CDC connector's own chain (its column form runs for a
    batch of one table's inserts): flat rows with the added metadata, a delete rewritten."""
    table = unique("flat").replace("-", "_")
    postgres.query(database, f"CREATE TABLE {table} (id SERIAL PRIMARY KEY, "
                             "item TEXT DEFAULT 'none', qty INT)")  # fmt: skip
    prefix = unique("dbz-flat")
    topic = f"{prefix}.public.{table}"
    kafka.create_topic(topic, 1)
    create_running(worker, "cdc", cdc(postgres, database, prefix, **{
        "snapshot.mode": "no_data", "transforms": "unwrap",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
        "transforms.unwrap.add.fields": "op,table,source.lsn:pos"}))  # fmt: skip
    wait_for(lambda: slot_position(postgres, database, prefix.replace("-", "_")) > 0, 60)
    postgres.query(database, f"INSERT INTO {table} (item, qty) "
                             "SELECT NULL, g FROM generate_series(1, 50) g")  # fmt: skip
    postgres.query(database, f"DELETE FROM {table} WHERE id = 7")
    found = events(kafka, topic, 51)
    rows = [value["payload"] for _, value in found]
    assert [r["id"] for r in rows] == [*range(1, 51), 7]
    assert {r["__op"] for r in rows[:50]} == {"c"} and rows[50]["__op"] == "d"
    # a null in a column with a default: Kafka's JsonConverter writes the default (KIP-1040)
    assert rows[0]["item"] == "none" and rows[0]["qty"] == 1 and rows[0]["__table"] == table
    assert [r["__deleted"] for r in (rows[0], rows[50])] == ["false", "true"]
    assert rows[50]["qty"] is None  # REPLICA IDENTITY DEFAULT: the key only
    assert all(r["__pos"] > 0 for r in rows)
    schema = found[0][1]["schema"]
    assert schema["name"] == f"{topic}.Value" and schema["optional"] is False
    assert [f["field"] for f in schema["fields"]] == [
        "id", "item", "qty", "__deleted", "__op", "__table", "__pos"]  # fmt: skip
