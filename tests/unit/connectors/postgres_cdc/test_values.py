"""PostgreSQL's text forms as Debezium's values, under each handling mode."""

from __future__ import annotations

import decimal

from connect_lite.api import SchemaType, Struct
from connect_lite.connectors.postgres_cdc import values as v
from connect_lite.connectors.postgres_cdc.values import Modes, mapped

ADAPTIVE = Modes()


def convert(oid: int, text: str, modifier: int = -1, modes: Modes = ADAPTIVE) -> object:
    found = mapped(oid, modifier, True, modes)
    assert found is not None
    return found.convert(text)


def numeric(precision: int, scale: int) -> int:
    return ((precision << 16) | scale) + 4


def test_temporal_types_under_adaptive_and_connect() -> None:
    assert convert(v.DATE, "2026-01-02") == 20455
    assert convert(v.TIMESTAMP, "2026-01-02 03:04:05.123456") == 1767323045123456
    assert convert(v.TIMESTAMP, "2026-01-02 03:04:05.123", modifier=3) == 1767323045123
    assert convert(v.TIMESTAMPTZ, "2026-01-02 03:04:05.5+02") == "2026-01-02T01:04:05.500000Z"
    assert convert(v.TIMESTAMPTZ, "2026-01-02 03:04:05+00", modifier=0) == "2026-01-02T03:04:05Z"
    assert convert(v.TIME, "01:02:03.000004") == 3_723_000_004
    found = mapped(v.TIMESTAMP, -1, False, Modes(time="connect"))
    assert found is not None and found.schema.name == "org.apache.kafka.connect.data.Timestamp"
    schema = mapped(v.TIMESTAMP, -1, True, ADAPTIVE)
    assert schema is not None and schema.schema.name == "io.debezium.time.MicroTimestamp"


def test_numerics_precise_variable_double_and_string() -> None:
    fixed = mapped(v.NUMERIC, numeric(10, 2), False, ADAPTIVE)
    assert fixed is not None
    assert fixed.schema.params == {"connect.decimal.precision": "10", "scale": "2"}
    assert fixed.convert("1.5") == decimal.Decimal("1.50")
    variable = convert(v.NUMERIC, "-12.345")
    assert isinstance(variable, Struct)
    assert variable.schema.name == "io.debezium.data.VariableScaleDecimal"
    assert variable.get("scale") == 3
    assert int.from_bytes(variable.get("value"), "big", signed=True) == -12345
    assert convert(v.NUMERIC, "1.25", numeric(5, 2), Modes(decimal="double")) == 1.25
    assert convert(v.NUMERIC, "1.25", numeric(5, 2), Modes(decimal="string")) == "1.25"


def test_bytes_json_uuid_and_unmapped_types() -> None:
    assert convert(v.BYTEA, "\\x0102ff") == b"\x01\x02\xff"
    assert convert(v.BYTEA, "\\x0102ff", modes=Modes(binary="hex")) == "0102ff"
    assert convert(v.BYTEA, "\\x0102ff", modes=Modes(binary="base64")) == "AQL/"
    json_type = mapped(v.JSONB, -1, True, ADAPTIVE)
    assert json_type is not None and json_type.schema.name == "io.debezium.data.Json"
    assert convert(v.BOOL, "t") is True and convert(v.BOOL, "f") is False
    assert convert(v.BOOL, "true") is True  # boolean::text, as the snapshot reads it
    assert mapped(v.INT2, -1, False, ADAPTIVE).schema.type is SchemaType.INT16  # type: ignore[union-attr]
    assert mapped(600, -1, True, ADAPTIVE) is None  # point: not mapped, left out


def test_enums_arrays_intervals_times_with_zones_and_money() -> None:
    from connect_lite.connectors.postgres_cdc.values import TypeFacts, array_items

    enum = mapped(20000, -1, True, ADAPTIVE, TypeFacts(enum_labels=("new", "paid")))
    assert enum is not None and enum.schema.name == "io.debezium.data.Enum"
    assert enum.schema.params == {"allowed": "new,paid"} and enum.convert("paid") == "paid"
    ints = mapped(1007, -1, True, ADAPTIVE, TypeFacts(element=v.INT4))
    assert ints is not None and ints.schema.type is SchemaType.ARRAY
    assert ints.schema.value_schema is not None and ints.schema.value_schema.optional
    assert ints.convert("{1,NULL,3}") == [1, None, 3]
    texts = mapped(1009, -1, True, ADAPTIVE, TypeFacts(element=v.TEXT))
    assert texts is not None
    assert texts.convert('{a,"b c","d\\"e",NULL,"NULL"}') == ["a", "b c", 'd"e', None, "NULL"]
    assert array_items("{}") == []
    assert mapped(1187, -1, True, ADAPTIVE, TypeFacts(element=v.INTERVAL)) is None
    assert convert(v.INTERVAL, "P1Y2M3DT4H5M6.78S") == (
        int(14 * 365.25 / 12 * 86_400 * 1_000_000)
        + ((3 * 24 + 4) * 60 + 5) * 60_000_000
        + 6_780_000
    )
    assert convert(v.INTERVAL, "P1D", modes=Modes(interval="string")) == "P1D"
    assert convert(v.TIMETZ, "13:51:30.1237+02") == "11:51:30.1237Z"
    assert convert(v.TIMETZ, "11:51:02+00") == "11:51:02Z"
    assert convert(v.MONEY, "-$1,234.50") == decimal.Decimal("-1234.50")


def default(oid: int, expression: str | None, modifier: int = -1, **kw: object) -> object:
    found = mapped(oid, modifier, False, Modes(**kw))  # type: ignore[arg-type]
    assert found is not None
    return v.with_default(found, oid, None, expression).schema.default


def test_literal_defaults_as_debezium_reads_them() -> None:
    assert default(v.INT4, "42") == 42
    assert default(v.INT8, "'9223372036854775807'::bigint") == 9223372036854775807
    assert default(v.INT2, "'-7'::smallint") == -7
    assert default(v.TEXT, "'it''s'::text") == "it's"
    assert default(v.VARCHAR, "'new'::character varying") == "new"
    assert default(v.BOOL, "true") is True and default(v.BOOL, "false") is False
    assert default(v.FLOAT8, "1.5") == 1.5
    assert default(v.JSONB, "'{\"a\": 1}'::jsonb") == '{"a": 1}'
    uuid = "'76019D1A-AD2E-4B22-96E9-1A6D6543C818'::uuid"
    assert default(v.UUID, uuid) == "76019d1a-ad2e-4b22-96e9-1a6d6543c818"
    assert default(v.DATE, "'2026-01-02'::date") == 20455
    assert default(v.TIMESTAMP, "'2026-01-02 03:04:05'::timestamp without time zone") == (
        1767323045000000
    )
    assert default(v.NUMERIC, "12.5", numeric(10, 2)) == decimal.Decimal("12.50")
    assert default(v.NUMERIC, "12.5", numeric(10, 2), decimal="string") == "12.5"
    assert default(v.INTERVAL, "'P1D'::interval") == 86_400_000_000


def test_generated_defaults_get_the_types_placeholder() -> None:
    assert default(v.INT4, "nextval('orders_id_seq'::regclass)") == 0
    assert default(v.INT8, "nextval('\"Odd\".seq'::regclass)") == 0
    assert default(v.TIMESTAMP, "now()") == 0
    assert default(v.TIMESTAMPTZ, "CURRENT_TIMESTAMP") == "1970-01-01T00:00:00.000000Z"
    assert default(v.DATE, "CURRENT_DATE") == 0
    assert default(v.UUID, "gen_random_uuid()") == "00000000-0000-0000-0000-000000000000"
    assert default(v.TEXT, "md5((random())::text)") == ""
    assert default(v.BOOL, "(now() > '2020-01-01')") is False


def test_no_default_for_null_for_what_cannot_be_read_and_for_unread_types() -> None:
    assert default(v.INT4, None) is None
    assert default(v.TEXT, "NULL::text") is None
    assert default(v.INT4, "(1 + 2)") is None
    assert default(v.INT2, "'99999'::integer") is None  # out of the column's range
    assert default(v.NUMERIC, "1.5") is None  # numeric without precision: a Struct
    assert default(v.BYTEA, "'\\x00'::bytea") is None
    assert default(v.MONEY, "'1.00'::money") is None
    assert default(v.TIMETZ, "'10:00:00+00'::time with time zone") is None


def test_enum_defaults_and_array_columns() -> None:
    enum = v.TypeFacts(enum_labels=("new", "done"))
    found = mapped(90_000, -1, False, ADAPTIVE, enum)
    assert found is not None
    assert v.with_default(found, 90_000, enum, "'new'::mood").schema.default == "new"
    assert v.with_default(found, 90_000, enum, "pick()").schema.default is None
    ints = v.TypeFacts(element=v.INT4)
    array = mapped(1007, -1, False, ADAPTIVE, ints)
    assert array is not None
    assert v.with_default(array, 1007, ints, "'{1,2}'::integer[]").schema.default is None
