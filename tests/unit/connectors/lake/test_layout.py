"""Visible file names and the connector's hidden paths."""

from __future__ import annotations

import pytest

from connect_lite.connectors.lake.layout import (
    FileName,
    Layout,
    connector_dir_name,
    unescape_partition_value,
)


def test_file_names_are_zero_padded_and_parse_back() -> None:
    name = FileName("orders", 0, 0, 999, "parquet")
    assert name.render(10) == "orders+0+0000000000+0000000999.parquet"
    assert FileName.parse("orders+0+0000000000+0000000999.parquet") == name
    assert FileName("a.b-c_d", 12, 5, 123456789012, "json").render(3) == (
        "a.b-c_d+12+005+123456789012.json"
    )
    assert FileName("t", 1, 7, 8, "csv").render(0) == "t+1+7+8.csv"


@pytest.mark.parametrize(
    "name",
    [
        "part-00000-abc.c000.snappy.parquet",
        "_SUCCESS",
        ".orders+0+0000000000+0000000009.parquet.crc",
        "orders+0+0000000000.parquet",  # Confluent's S3 names: no last offset
        "orders+x+1+2.parquet",
        "orders+0+1+2",
    ],
)
def test_other_names_are_not_visible_files(name: str) -> None:
    assert FileName.parse(name) is None


def test_multi_part_extensions_parse() -> None:
    parsed = FileName.parse("t+3+0000000010+0000000020.snappy.parquet")
    assert parsed == FileName("t", 3, 10, 20, "snappy.parquet")


def test_connector_dir_names_are_safe_and_distinct() -> None:
    assert connector_dir_name("orders-lake_1.0") == "orders-lake_1.0"
    spaced, slashed = connector_dir_name("my lake"), connector_dir_name("my/lake")
    assert spaced.startswith("my_lake-") and slashed.startswith("my_lake-")
    assert spaced != slashed
    assert "/" not in slashed and connector_dir_name("..") != ".."


def test_spark_partition_values_unescape() -> None:
    assert unescape_partition_value("t+0+5%2Fyear%3D2024%2Fx%25y") == "t+0+5/year=2024/x%y"
    assert unescape_partition_value("caf\u00e9 a+b") == "caf\u00e9 a+b"


def test_layout_paths() -> None:
    layout = Layout("topics", "lake", 2)
    assert layout.buffer_root == "_connect-lite/lake/task-2/staging"
    assert layout.temp_root == "_connect-lite/lake/task-2/tmp"
    assert layout.journal("r1") == "_connect-lite/lake/task-2/journal-r1.json"
    assert layout.visible_file("t", "partition=0", "f.parquet") == "topics/t/partition=0/f.parquet"
