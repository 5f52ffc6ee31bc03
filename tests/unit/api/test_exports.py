"""connect_lite.api exports the logical types and KIP-821 field paths PLUGIN_API.md promises."""

from __future__ import annotations

import datetime as dt
import decimal

import connect_lite.api as api
from connect_lite.api import (
    FIELD_SYNTAX_VERSION,
    ConfigDef,
    Date,
    Decimal,
    FieldPath,
    SchemaType,
    Time,
    Timestamp,
    define_field_syntax,
)


def test_every_name_in_all_is_exported() -> None:
    missing = [name for name in api.__all__ if not hasattr(api, name)]
    assert missing == []


def test_decimal_round_trips_through_its_encoded_form() -> None:
    schema = Decimal.schema(2)
    assert (schema.type, schema.name, dict(schema.parameters)) == (
        SchemaType.BYTES,
        "org.apache.kafka.connect.data.Decimal",
        {"scale": "2"},
    )
    encoded = Decimal.from_logical(schema, decimal.Decimal("-12.34"))
    assert encoded == (-1234).to_bytes(2, "big", signed=True)
    assert Decimal.to_logical(schema, encoded) == decimal.Decimal("-12.34")


def test_date_time_and_timestamp_use_kafkas_encodings() -> None:
    assert Date.from_logical(Date.schema(), dt.date(1970, 1, 3)) == 2
    assert Date.to_logical(Date.schema(), 2) == dt.date(1970, 1, 3)
    assert Time.from_logical(Time.schema(), dt.time(0, 0, 1, 500_000)) == 1500
    assert Time.to_logical(Time.schema(), 1500) == dt.time(0, 0, 1, 500_000)
    moment = dt.datetime(1970, 1, 1, 0, 0, 2, tzinfo=dt.UTC)
    assert Timestamp.from_logical(Timestamp.schema(), moment) == 2000
    assert Timestamp.to_logical(Timestamp.schema(), 2000) == moment
    assert (Date.schema().type, Time.schema().type, Timestamp.schema().type) == (
        SchemaType.INT32,
        SchemaType.INT32,
        SchemaType.INT64,
    )
    assert Timestamp.schema(optional=True).optional


def test_field_syntax_key_and_v2_paths() -> None:
    config = define_field_syntax(ConfigDef())
    assert config.parse({})[FIELD_SYNTAX_VERSION] == "V1"
    path = FieldPath.parse("a.`b.c`", "V2")
    assert path.steps == ("a", "b.c")
    assert FieldPath.parse("a.b", "V1").steps == ("a.b",)
    assert path.name == "b.c" and not path.is_root
