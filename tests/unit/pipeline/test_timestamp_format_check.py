"""The check of which TimestampRouter formats Spark's date_format renders as Java does."""

from __future__ import annotations

import time

import pytest

from connect_lite.pipeline.column_compilers import _SAME_PATTERN


@pytest.mark.parametrize(
    ("pattern", "same"),
    [
        ("yyyyMMdd", True),
        ("yyyy-MM-dd HH:mm:ss", True),
        ("yyMd", True),
        ("yyyyyy", True),
        ("yyy", False),
        ("'year'yyyy", False),
        ("EEE", False),
    ],
)
def test_formats_spark_renders_the_same(pattern: str, same: bool) -> None:
    assert (_SAME_PATTERN.fullmatch(pattern) is not None) is same


def test_a_long_format_is_checked_in_linear_time() -> None:
    began = time.monotonic()
    assert _SAME_PATTERN.fullmatch("M" * 200 + "x") is None  # without ++: ages
    assert _SAME_PATTERN.fullmatch("yyyyMMdd" * 100 + "y") is None
    assert time.monotonic() - began < 5
