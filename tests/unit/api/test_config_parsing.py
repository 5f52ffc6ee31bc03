"""ConfigDef parsing reads numbers as Kafka's Java ConfigDef does, not as Python does."""

from __future__ import annotations

import math

import pytest

from connect_lite.api.config import ConfigKey, Type, parse_value


@pytest.mark.parametrize(
    ("raw", "parsed"), [("5", 5), (" -7 ", -7), ("+3", 3), (9, 9), ("2147483647", 2**31 - 1)]
)
def test_an_int_is_read_as_java_reads_it(raw: object, parsed: int) -> None:
    assert parse_value(ConfigKey("k", Type.INT), raw) == parsed


@pytest.mark.parametrize("raw", ["1_000", "abc", "1.5", "", "0x10", "2147483648", "9" * 5000, True])
def test_what_java_refuses_is_not_an_int(raw: object) -> None:
    with pytest.raises(ValueError, match="for configuration k: Not a number of type INT"):
        parse_value(ConfigKey("k", Type.INT), raw)


def test_a_long_holds_64_bits() -> None:
    assert parse_value(ConfigKey("k", Type.LONG), "9223372036854775807") == 2**63 - 1
    with pytest.raises(ValueError, match="Not a number of type LONG"):
        parse_value(ConfigKey("k", Type.LONG), "9223372036854775808")


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ("0.5", 0.5),
        (" 1 ", 1.0),
        (".25", 0.25),
        ("1e3", 1000.0),
        ("2d", 2.0),
        ("-Infinity", -math.inf),
    ],
)
def test_a_double_is_read_as_java_reads_it(raw: str, parsed: float) -> None:
    assert parse_value(ConfigKey("k", Type.DOUBLE), raw) == parsed


@pytest.mark.parametrize("raw", ["inf", "nan", "1_0", "abc", "", "1e"])
def test_what_java_refuses_is_not_a_double(raw: str) -> None:
    with pytest.raises(ValueError, match="Not a number of type DOUBLE"):
        parse_value(ConfigKey("k", Type.DOUBLE), raw)


def test_nan_is_a_double_as_in_java() -> None:
    assert math.isnan(parse_value(ConfigKey("k", Type.DOUBLE), "NaN"))
