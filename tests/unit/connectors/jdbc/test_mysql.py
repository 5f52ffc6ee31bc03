"""The JDBC connectors' MySQL dialect: Confluent's MySqlDatabaseDialect statements and types,
and Connector/J URLs as PyMySQL's connection keywords."""

from __future__ import annotations

import pytest

from connect_lite.api import ConnectError
from connect_lite.connectors.jdbc.config import connection_errors, inferred_dialect
from connect_lite.connectors.jdbc.dialects import (
    DECIMAL,
    EPOCH_UNIT,
    TIMESTAMP,
    Column,
    PostgreSqlDialect,
    TableId,
    redact_url,
)
from connect_lite.connectors.jdbc.mysql import MySqlDialect, mysql_params
from connect_lite.connectors.jdbc.registry import dialect

ID = Column("id", {"type": "int32", "optional": False}, primary=True)
CODE = Column("code", {"type": "string", "optional": False}, primary=True)
NAME = Column("name", {"type": "string", "optional": True})
T = TableId.parse("t")


def test_ddl_and_types_as_confluents_mysql_dialect() -> None:
    my = MySqlDialect(True)
    assert my.create_table(T, [ID, NAME]) == (
        "CREATE TABLE `t` (\n`id` INT NOT NULL,\n`name` TEXT NULL,\nPRIMARY KEY(`id`))"
    )
    types = {
        "int8": "TINYINT", "int16": "SMALLINT", "int64": "BIGINT", "float32": "FLOAT",
        "float64": "DOUBLE", "boolean": "TINYINT", "bytes": "VARBINARY(1024)",
    }  # fmt: skip
    for kind, sql in types.items():
        assert my.sql_type({"type": kind}) == sql
    decimal = {"type": "bytes", "name": DECIMAL, "parameters": {"scale": "3"}}
    assert my.sql_type(decimal) == "DECIMAL(65,3)"
    assert my.sql_type({"type": "int64", "name": TIMESTAMP}) == "DATETIME(3)"
    assert my.sql_type({"type": "int64", "name": TIMESTAMP, EPOCH_UNIT: "us"}) == "DATETIME(6)"
    with pytest.raises(ConnectError, match="does not support the type ARRAY"):
        my.sql_type({"type": "array", "items": {"type": "int32"}})


def test_a_string_key_column_is_a_varchar_mysql_can_index() -> None:
    assert MySqlDialect(True).column_spec(CODE) == "`code` VARCHAR(256) NOT NULL"


def test_upsert_on_duplicate_key_and_the_other_statements() -> None:
    my = MySqlDialect(True)
    assert my.upsert(T, [ID], [NAME]) == (
        "insert into `t`(`id`,`name`) values(%s,%s) on duplicate key update `name`=values(`name`)"
    )
    assert my.upsert(T, [ID], []) == (
        "insert into `t`(`id`) values(%s) on duplicate key update `id`=values(`id`)"
    )
    assert my.update(T, [ID], [NAME]) == "UPDATE `t` SET `name` = %s WHERE `id` = %s"
    assert my.delete(TableId.parse("shop.t"), [ID]) == "DELETE FROM `shop`.`t` WHERE `id` = %s"


def test_quotes_and_percent_signs_in_names_are_escaped_for_the_driver() -> None:
    odd = Column("a`b%c", {"type": "int32", "optional": True})
    assert MySqlDialect(True).insert(T, [odd]) == "INSERT INTO `t`(`a``b%%c`) VALUES(%s)"
    assert PostgreSqlDialect(True).ident('x"%') == '"x""%%"'


def test_connector_j_urls() -> None:
    assert mysql_params("jdbc:mysql://db.example:3307/shop?user=u&password=p") == {
        "host": "db.example", "port": 3307, "database": "shop", "user": "u", "password": "p",
    }  # fmt: skip
    assert mysql_params("jdbc:mariadb://u:p%40ss@h/shop")["password"] == "p@ss"
    assert mysql_params("jdbc:mysql://h/db")["port"] == 3306
    tls = mysql_params("jdbc:mysql://h/db?sslMode=VERIFY_IDENTITY")
    assert tls["ssl_verify_cert"] and tls["ssl_verify_identity"]
    assert "ssl" in mysql_params("jdbc:mysql://h/db?useSSL=true")
    assert "ssl" not in mysql_params("jdbc:mysql://h/db?useSSL=false&serverTimezone=UTC")
    assert mysql_params("jdbc:mysql://h/db?connectTimeout=5000")["connect_timeout"] == 5
    with pytest.raises(ConnectError, match="parameter cachePrepStmts"):
        mysql_params("jdbc:mysql://h/db?cachePrepStmts=true")
    with pytest.raises(ConnectError, match="one MySQL host"):
        mysql_params("jdbc:mysql://h1,h2/db")
    with pytest.raises(ConnectError, match="Invalid sslMode"):
        mysql_params("jdbc:mysql://h/db?sslMode=MAYBE")


def test_the_url_picks_the_dialect_and_validate_names_a_bad_parameter() -> None:
    assert inferred_dialect("jdbc:mariadb://h/db") == "MySqlDatabaseDialect"
    assert isinstance(dialect("MySqlDatabaseDialect", True), MySqlDialect)
    errors = connection_errors({"connection.url": "jdbc:mysql://u:secret@h/db?bogus=1"})
    (message,) = errors["connection.url"]
    assert message.startswith("Invalid value jdbc:mysql://u:[hidden]@h/db?bogus=1 for "
                              "configuration connection.url")  # fmt: skip
    assert "secret" not in message
    missing = connection_errors({"connection.url": "jdbc:mysql://h/db"}, lambda module: False)
    assert "pip install 'connect-lite[mysql]'" in missing["connection.url"][0]


def test_passwords_in_urls_are_hidden() -> None:
    assert redact_url("jdbc:mysql://u:pw@h/db?password=x&a=1") == (
        "jdbc:mysql://u:[hidden]@h/db?password=[hidden]&a=1"
    )
