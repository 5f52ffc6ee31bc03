"""Joda-Time path formats as Spark (Java DateTimeFormatter) patterns."""

from __future__ import annotations

import pytest

from connect_lite.connectors.lake.timeformat import joda_to_java


@pytest.mark.parametrize(
    ("joda", "java"),
    [
        ("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", "'year='yyyy'/month='MM'/day='dd'/hour='HH"),
        ("YYYY-MM-dd", "yyyy'-'MM'-'dd"),
        ("yyyyMMdd'T'HHmmss.SSS", "yyyyMMdd'T'HHmmss'.'SSS"),
        ("'it''s' D", "'it''s 'D"),
        ("''HH", "''''HH"),
        ("[YYYY]#{MM}", "'['yyyy']#{'MM'}'"),
        ("EEE h:mm a G", "EEE' 'h':'mm' 'a' 'G"),
        ("", ""),
    ],
)
def test_translation(joda: str, java: str) -> None:
    assert joda_to_java(joda) == java


@pytest.mark.parametrize(
    ("joda", "message"),
    [
        ("xxxx", "pattern letter 'x' at 0: week-based years are not supported"),
        ("YYYY/ZZ", "pattern letter 'Z' at 5: time zone offsets are not supported"),
        ("CC", "pattern letter 'C' at 0: century of era has no Spark pattern letter"),
        ("q", "unknown pattern letter 'q' at 0"),
        ("'open", "unterminated quote at 0"),
    ],
)
def test_letters_without_an_equivalent(joda: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(")):
        joda_to_java(joda)
