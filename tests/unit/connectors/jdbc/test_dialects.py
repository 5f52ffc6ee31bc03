"""The JDBC sink's SQL, in the shapes Confluent's PostgreSQL and SQLite dialects write."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.api import ConnectError
from connect_lite.connectors.jdbc.dialects import (
    Column,
    PostgreSqlDialect,
    SqliteDialect,
    TableId,
    postgres_params,
    redact_url,
)

ID = Column("id", {"type": "int32", "optional": False}, primary=True)
NAME = Column("name", {"type": "string", "optional": True})
FLAG = Column("flag", {"type": "boolean", "optional": True, "default": True})
T = TableId.parse("t")


def test_create_table_as_confluents_generic_dialect() -> None:
    assert PostgreSqlDialect(True).create_table(T, [ID, NAME, FLAG]) == (
        'CREATE TABLE "t" (\n"id" INT NOT NULL,\n"name" TEXT NULL,\n"flag" BOOLEAN DEFAULT TRUE,\n'
        'PRIMARY KEY("id"))'
    )
    assert SqliteDialect(True).create_table(T, [NAME]) == 'CREATE TABLE "t" (\n"name" TEXT NULL)'


def test_alter_table_postgres_in_one_statement_sqlite_one_per_column() -> None:
    assert PostgreSqlDialect(True).alter_table(T, [NAME, FLAG]) == [
        'ALTER TABLE "t" \nADD "name" TEXT NULL,\nADD "flag" BOOLEAN DEFAULT TRUE'
    ]
    assert SqliteDialect(True).alter_table(T, [NAME, FLAG]) == [
        'ALTER TABLE "t" ADD "name" TEXT NULL',
        'ALTER TABLE "t" ADD "flag" INTEGER DEFAULT 1',
    ]


def test_insert_upsert_update_delete() -> None:
    pg, lite = PostgreSqlDialect(True), SqliteDialect(True)
    assert pg.insert(T, [ID, NAME]) == 'INSERT INTO "t" ("id","name") VALUES (%s,%s)'
    assert lite.insert(T, [ID, NAME]) == 'INSERT INTO "t"("id","name") VALUES(?,?)'
    assert pg.upsert(T, [ID], [NAME, FLAG]) == (
        'INSERT INTO "t" ("id","name","flag") VALUES (%s,%s,%s) ON CONFLICT ("id") DO UPDATE '
        'SET "name"=EXCLUDED."name","flag"=EXCLUDED."flag"'
    )
    assert pg.upsert(T, [ID], []) == (
        'INSERT INTO "t" ("id") VALUES (%s) ON CONFLICT ("id") DO NOTHING'
    )
    assert lite.upsert(T, [ID], [NAME]) == 'INSERT OR REPLACE INTO "t"("id","name") VALUES(?,?)'
    assert pg.update(T, [ID], [NAME]) == 'UPDATE "t" SET "name" = %s WHERE "id" = %s'
    assert lite.delete(T, [ID]) == 'DELETE FROM "t" WHERE "id" = ?'


def test_types_as_confluent_maps_them() -> None:
    pg, lite = PostgreSqlDialect(True), SqliteDialect(True)
    cases = [
        ({"type": "int8"}, "SMALLINT", "INTEGER"),
        ({"type": "int64"}, "BIGINT", "INTEGER"),
        ({"type": "float32"}, "REAL", "REAL"),
        ({"type": "float64"}, "DOUBLE PRECISION", "REAL"),
        ({"type": "bytes"}, "BYTEA", "BLOB"),
        ({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal"}, "DECIMAL", "NUMERIC"),
        ({"type": "int32", "name": "org.apache.kafka.connect.data.Date"}, "DATE", "NUMERIC"),
        ({"type": "int32", "name": "org.apache.kafka.connect.data.Time"}, "TIME", "NUMERIC"),
        (
            {"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp"},
            "TIMESTAMP",
            "NUMERIC",
        ),
    ]
    for form, in_pg, in_sqlite in cases:
        assert (pg.sql_type(form), lite.sql_type(form)) == (in_pg, in_sqlite), form
    assert pg.sql_type({"type": "array", "items": {"type": "string"}}) == "TEXT[]"
    with pytest.raises(ConnectError, match="does not support the type STRUCT"):
        pg.sql_type({"type": "struct"})


def test_quoting_never_and_qualified_names() -> None:
    table = TableId.parse("sales.Orders")
    assert PostgreSqlDialect(False).table(table) == "sales.orders"  # PG lowercases the table
    assert SqliteDialect(False).table(table) == "sales.Orders"
    assert PostgreSqlDialect(True).table(table) == '"sales"."Orders"'
    with pytest.raises(ConnectError):
        TableId.parse("a..b")


def test_postgres_urls() -> None:
    assert postgres_params(
        "jdbc:postgresql://db.example:6543/shop?user=u&password=p&sslmode=require"
    ) == {
        "host": "db.example",
        "port": 6543,
        "dbname": "shop",
        "user": "u",
        "password": "p",
        "sslmode": "require",
    }
    assert postgres_params("jdbc:postgresql:shop") == {"dbname": "shop"}
    assert redact_url("jdbc:postgresql://h/db?user=u&password=p1") == (
        "jdbc:postgresql://h/db?user=u&password=[hidden]"
    )
    with pytest.raises(ConnectError, match="Not a PostgreSQL JDBC URL"):
        postgres_params("jdbc:mysql://h/db")


def test_unquoted_names_must_be_plain_identifiers() -> None:
    assert PostgreSqlDialect(False).ident("order_id$2") == "order_id$2"
    with pytest.raises(ConnectError, match="cannot be used without quotes"):
        PostgreSqlDialect(False).ident("a INT); DROP TABLE x; --")
    assert PostgreSqlDialect(True).ident('we"ird') == '"we""ird"'


def test_sqlite_opens_only_what_the_path_check_saw(tmp_path: Any) -> None:
    lite = SqliteDialect(True)
    with pytest.raises(ConnectError, match="Not an SQLite JDBC URL"):
        lite.connect(f"jdbc:abcdefg{tmp_path}/x.db", None, None)
    lite.connect("jdbc:sqlite::memory:", None, None).close()
    lite.connect(f"jdbc:sqlite:{tmp_path}/y.db", None, None).close()
    assert (tmp_path / "y.db").exists()


def test_postgres_url_parameters_are_mapped_or_refused() -> None:
    assert postgres_params("jdbc:postgresql://h/db?ssl=true")["sslmode"] == "verify-full"
    assert postgres_params("jdbc:postgresql://h/db?currentSchema=shop")["options"] == (
        "-csearch_path=shop"
    )
    with pytest.raises(ConnectError, match="parameter loggerLevel"):
        postgres_params("jdbc:postgresql://h/db?loggerLevel=DEBUG")
