"""The helpers every built-in shares: Java class names, validators, Struct reads, Java syntax."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import time

import pytest

from connect_lite.api import (
    ConfigError,
    Headers,
    Schema,
    SchemaBuilder,
    SchemaType,
    SinkRecord,
    SourceRecord,
    Struct,
)
from connect_lite.transforms.base import (
    java_class,
    java_class_name,
    java_narrow,
    java_pattern,
    java_regex_problem,
    non_empty_list,
    non_empty_string,
    require_map,
    require_sink_record,
    schema_type_of,
    updated,
)
from connect_lite.transforms.header_from import HeaderFromValue
from connect_lite.transforms.predicates import HasHeaderKey
from connect_lite.transforms.regex_router import RegexRouter

STRUCT = Struct(SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build(), {"a": 1})


class _Moment(dt.datetime):
    """A datetime subclass, as libraries hand out: still a java.util.Date to Kafka."""


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        (True, "java.lang.Boolean"),
        (1, "java.lang.Long"),
        (1.5, "java.lang.Double"),
        ("s", "java.lang.String"),
        (bytearray(b"x"), "[B"),
        (decimal.Decimal(1), "java.math.BigDecimal"),
        (dt.date(2020, 1, 1), "java.util.Date"),
        (_Moment(2020, 1, 1), "java.util.Date"),
        (STRUCT, "org.apache.kafka.connect.data.Struct"),
        ((1, 2), "builtins.tuple"),
    ],
)
def test_java_class_name(value: object, expected: str) -> None:
    assert java_class_name(value) == expected


def test_java_class_prints_as_java_does_and_requirements_use_the_bare_name() -> None:
    assert java_class([]) == "class java.util.ArrayList"
    with pytest.raises(Exception, match=r"found: org\.apache\.kafka\.connect\.data\.Struct$"):
        require_map(STRUCT, "p")


def test_require_sink_record() -> None:
    sink = SinkRecord("t", 0, 0, None, None, None, None)
    assert require_sink_record(sink, "p") is sink
    with pytest.raises(Exception, match=r"^Only SinkRecord supported for \[p\], found: .*Source"):
        require_sink_record(SourceRecord(None, None, "t", None), "p")


def test_validators_keep_kafka_messages() -> None:
    assert non_empty_string("k", None) is None
    assert non_empty_string("k", "x") is None
    blank = "Invalid value  for configuration k: String must be non-empty"
    assert non_empty_string("k", "") == non_empty_string("k", "  ") == blank
    assert non_empty_list("k", None) is None and non_empty_list("k", ["a"]) is None
    assert non_empty_list("k", []) == "Invalid value [] for configuration k: Empty list"


def test_blank_header_name_is_rejected_as_kafka_trims_strings() -> None:
    with pytest.raises(ConfigError, match="String must be non-empty"):
        HasHeaderKey().configure({"name": "  "})


@pytest.mark.parametrize(
    ("number", "bits", "expected"),
    [(300, 8, 44), (128, 8, -128), (-1, 16, -1), (2**63, 64, -(2**63))],
)
def test_java_narrow(number: int, bits: int, expected: int) -> None:
    assert java_narrow(number, bits) == expected


def test_schema_type_of() -> None:
    assert [schema_type_of(v) for v in (True, 1, {}, STRUCT, dt.date.today())] == [
        SchemaType.BOOLEAN,
        SchemaType.INT64,
        SchemaType.MAP,
        SchemaType.STRUCT,
        None,
    ]


def test_header_from_reads_an_unset_field_without_its_default_when_asked() -> None:
    defaulted = SchemaBuilder.of(SchemaType.STRING).optional().default_value("d").build()
    schema = SchemaBuilder.struct().field("f", defaulted).build()
    record = SinkRecord("t", 0, 0, None, Struct(schema), None, schema)
    headers = {}
    for replace in ("true", "false"):
        xform = HeaderFromValue()
        xform.configure(
            {
                "fields": "f",
                "headers": "h",
                "operation": "copy",
                "replace.null.with.default": replace,
            }
        )
        header = xform.apply(record).headers.last_with_name("h")
        assert header is not None
        headers[replace] = header.value
    assert headers == {"true": "d", "false": None}


def test_regex_router_takes_java_named_groups() -> None:
    router = RegexRouter()
    router.configure({"regex": r"(?<name>\w+)-raw", "replacement": "${name}-clean"})
    routed = router.apply(SourceRecord(None, None, "orders-raw", None))
    assert routed.topic == "orders-clean"
    with pytest.raises(ConfigError, match="Invalid regex: Unclosed group"):
        RegexRouter().configure({"regex": "(", "replacement": "x"})


def test_java_pattern_takes_linear_time() -> None:
    began = time.monotonic()
    assert java_pattern(r"a\k<g>" * 200_000) == "a(?P=g)" * 200_000  # 1.6 MB
    assert time.monotonic() - began < 5  # copying the rest at each character: minutes


def test_a_java_regex_too_deep_or_too_large_is_a_validation_error() -> None:
    assert java_regex_problem("regex", "(" * 5000 + ")" * 5000) == (
        "Invalid value " + "(" * 5000 + ")" * 5000 + " for configuration regex: "
        "Invalid regex: too many nested groups"
    )
    assert java_regex_problem("regex", "a{4294967296}") == (
        "Invalid value a{4294967296} for configuration regex: "
        "Invalid regex: the repetition number is too large"
    )


def test_updated_is_dataclasses_replace_without_init() -> None:
    source = SourceRecord({"p": 1}, {"o": 2}, "t", "v", key="k", headers=Headers.of([("h", 1)]))
    sink = SinkRecord("t", 0, 5, "k", "v")
    for record in (source, sink):
        changed = updated(record, topic="other", value="w")
        assert changed == dataclasses.replace(record, topic="other", value="w")
        assert type(changed) is type(record) and record.topic == "t"  # the input is unchanged
    with pytest.raises(TypeError):
        updated(sink, no_such_field=1)
