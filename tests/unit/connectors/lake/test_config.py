"""The lake sink's configuration: parsing, names of formats and partitioners, clear errors."""

from __future__ import annotations

from typing import Any

import pytest

from connect_lite.api import ConfigError
from connect_lite.connectors.lake.config import (
    CONFIG_DEF,
    Extractor,
    Format,
    LakeConfig,
    Partitioner,
    TimeLayout,
)
from connect_lite.connectors.lake.sink import LakeSinkConnector
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType

BASE = {"store.url": "file:///data/lake/", "flush.size": "100"}


def errors_of(props: dict[str, str]) -> dict[str, list[str]]:
    with pytest.raises(ConfigError) as raised:
        LakeConfig.parse(props)
    return raised.value.errors


def test_defaults_follow_confluent() -> None:
    config = LakeConfig.parse(BASE)
    assert config == LakeConfig(
        store_url="file:///data/lake",
        topics_dir="topics",
        format=Format.PARQUET,
        flush_size=100,
        rotate_interval_ms=-1,
        rotate_schedule_interval_ms=-1,
        partitioner=Partitioner.DEFAULT,
        field_names=(),
        time=None,
        extractor=Extractor.WALLCLOCK,
        timestamp_field="timestamp",
        zero_pad_width=10,
        ignore_null_values=False,
        retry_backoff_ms=5000,
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("parquet", Format.PARQUET),
        ("JSON", Format.JSON),
        ("Csv", Format.CSV),
        ("orc", Format.ORC),
        ("io.confluent.connect.s3.format.parquet.ParquetFormat", Format.PARQUET),
        ("io.confluent.connect.s3.format.json.JsonFormat", Format.JSON),
        ("io.confluent.connect.hdfs.parquet.ParquetFormat", Format.PARQUET),
        ("io.confluent.connect.hdfs.orc.OrcFormat", Format.ORC),
        ("io.confluent.connect.hdfs.json.JSONFORMAT", Format.JSON),
    ],
)
def test_format_names(name: str, expected: Format) -> None:
    assert LakeConfig.parse({**BASE, "format.class": name}).format is expected


@pytest.mark.parametrize(
    "name", ["io.confluent.connect.s3.format.avro.AvroFormat", "avro", "Format", ""]
)
def test_an_unsupported_format_is_a_config_error(name: str) -> None:
    assert errors_of({**BASE, "format.class": name}) == {
        "format.class": [
            f"Invalid value {name} for configuration format.class: must be one of parquet, "
            "json, csv, orc (or Confluent's …ParquetFormat, …JsonFormat, …OrcFormat)"
        ]
    }


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("DefaultPartitioner", Partitioner.DEFAULT),
        ("io.confluent.connect.storage.partitioner.FieldPartitioner", Partitioner.FIELD),
        ("timebasedpartitioner", Partitioner.TIME),
        ("io.confluent.connect.storage.partitioner.HourlyPartitioner", Partitioner.HOURLY),
        ("io.confluent.connect.hdfs.partitioner.DailyPartitioner", Partitioner.DAILY),
    ],
)
def test_partitioner_names(name: str, expected: Partitioner) -> None:
    props = {**BASE, "partitioner.class": name, "partition.field.name": "a"}
    props |= {"path.format": "YYYY", "partition.duration.ms": "1000"}
    assert LakeConfig.parse(props).partitioner is expected


def test_an_unknown_partitioner_is_a_config_error() -> None:
    errors = errors_of({**BASE, "partitioner.class": "com.acme.MyPartitioner"})
    assert list(errors) == ["partitioner.class"]
    assert "must be one of DefaultPartitioner, FieldPartitioner" in errors["partitioner.class"][0]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Record", Extractor.RECORD),
        ("recordfield", Extractor.RECORD_FIELD),
        ("Wallclock", Extractor.WALLCLOCK),
        (
            "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordTimestampExtractor",
            Extractor.RECORD,
        ),
    ],
)
def test_extractor_names(name: str, expected: Extractor) -> None:
    assert LakeConfig.parse({**BASE, "timestamp.extractor": name}).extractor is expected


def test_hourly_and_daily_have_fixed_layouts() -> None:
    hourly = LakeConfig.parse({**BASE, "partitioner.class": "HourlyPartitioner"})
    assert hourly.time == TimeLayout("'year='yyyy'/month='MM'/day='dd'/hour='HH", 3_600_000, "UTC")
    daily = LakeConfig.parse(
        {**BASE, "partitioner.class": "DailyPartitioner", "timezone": "Europe/Paris"}
    )
    assert daily.time == TimeLayout("'year='yyyy'/month='MM'/day='dd", 86_400_000, "Europe/Paris")


def test_required_keys_and_ranges() -> None:
    assert errors_of({}) == {
        "store.url": ['Missing required configuration "store.url" which has no default value.'],
        "flush.size": ['Missing required configuration "flush.size" which has no default value.'],
    }
    assert errors_of({**BASE, "flush.size": "0"}) == {
        "flush.size": ["Invalid value 0 for configuration flush.size: Value must be at least 1"]
    }
    assert list(errors_of({**BASE, "rotate.interval.ms": "0"})) == ["rotate.interval.ms"]
    assert list(errors_of({**BASE, "behavior.on.null.values": "write"})) == [
        "behavior.on.null.values"
    ]
    # the worker ignores context.timeout(0): a backoff of 0 would wait for the next commit
    assert errors_of({**BASE, "retry.backoff.ms": "0"}) == {
        "retry.backoff.ms": [
            "Invalid value 0 for configuration retry.backoff.ms: Value must be at least 1"
        ]
    }
    assert LakeConfig.parse({**BASE, "retry.backoff.ms": "1"}).retry_backoff_ms == 1
    assert LakeConfig.parse({**BASE, "behavior.on.null.values": "IGNORE"}).ignore_null_values


def test_a_plain_path_is_a_local_store_relative_to_the_working_directory(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert LakeConfig.parse({**BASE, "store.url": "data/lake/"}).store_url == (
        f"file://{tmp_path}/data/lake"
    )
    assert LakeConfig.parse({**BASE, "store.url": "/srv/lake"}).store_url == "file:///srv/lake"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file://data/lake", "a file URL needs an absolute path: file:///abs/path"),
        ("file:relative", "a file URL needs an absolute path: file:///abs/path"),
        ("s3a://[bucket", "not a valid URL (Invalid IPv6 URL)"),
    ],
)
def test_store_url_errors(url: str, message: str) -> None:
    assert errors_of({**BASE, "store.url": url}) == {
        "store.url": [f"Invalid value {url} for configuration store.url: {message}"]
    }


def test_store_urls_of_other_schemes_pass_unchanged() -> None:
    config = LakeConfig.parse({**BASE, "store.url": "s3a://bucket/lake/"})
    assert config.store_url == "s3a://bucket/lake"


@pytest.mark.parametrize("value", ["", "/", "a/../b", "_connect-lite/x"])
def test_topics_dir_errors(value: str) -> None:
    assert list(errors_of({**BASE, "topics.dir": value})) == ["topics.dir"]


def test_topics_dir_is_normalized() -> None:
    assert LakeConfig.parse({**BASE, "topics.dir": "/raw//topics/"}).topics_dir == "raw/topics"


def test_keys_a_partitioner_needs() -> None:
    assert errors_of({**BASE, "partitioner.class": "FieldPartitioner"}) == {
        "partition.field.name": [
            "partition.field.name must name at least one field for FieldPartitioner"
        ]
    }
    assert errors_of({**BASE, "partitioner.class": "TimeBasedPartitioner"}) == {
        "path.format": ["path.format is required for TimeBasedPartitioner"],
        "partition.duration.ms": [
            "partition.duration.ms must be a positive number of milliseconds for "
            "TimeBasedPartitioner"
        ],
    }
    assert errors_of({**BASE, "timestamp.extractor": "RecordField", "timestamp.field": " "}) == {
        "timestamp.field": ["timestamp.field is required for the RecordField extractor"]
    }


def test_path_format_and_timezone_errors() -> None:
    errors = errors_of({**BASE, "path.format": "'week'=ww", "timezone": "Mars/Olympus"})
    assert errors == {
        "path.format": [
            "Invalid value 'week'=ww for configuration path.format: pattern letter 'w' at 7: "
            "week-based fields are not supported by Spark's date_format"
        ],
        "timezone": [
            "Invalid value Mars/Olympus for configuration timezone: unknown time zone ID (use "
            "e.g. UTC, Europe/Paris, +05:30)"
        ],
    }
    assert LakeConfig.parse({**BASE, "timezone": "+05:30"})


@pytest.mark.parametrize(
    ("zone", "message"),
    [
        ("Europe", "unknown time zone ID (use e.g. UTC, Europe/Paris, +05:30)"),  # a directory
        ("Etc", "unknown time zone ID (use e.g. UTC, Europe/Paris, +05:30)"),
        ("A" * 300, "unknown time zone ID (use e.g. UTC, Europe/Paris, +05:30)"),  # too long
        ("../zoneinfo", "unknown time zone ID (use e.g. UTC, Europe/Paris, +05:30)"),
        ("+99:99", "a zone offset is ±HH:MM from -18:00 to +18:00, minutes below 60"),
        ("+19:00", "a zone offset is ±HH:MM from -18:00 to +18:00, minutes below 60"),
        ("-18:30", "a zone offset is ±HH:MM from -18:00 to +18:00, minutes below 60"),
        ("+05:60", "a zone offset is ±HH:MM from -18:00 to +18:00, minutes below 60"),
    ],
)
def test_a_bad_timezone_is_a_config_error_not_a_crash(zone: str, message: str) -> None:
    props = {**BASE, "partitioner.class": "HourlyPartitioner", "timezone": zone}
    assert errors_of(props) == {
        "timezone": [f"Invalid value {zone} for configuration timezone: {message}"]
    }
    assert CONFIG_DEF.validate(props)["timezone"].errors == [
        f"Invalid value {zone} for configuration timezone: {message}"
    ]
    LakeSinkConnector().validate(props)  # the cross-key checks do not raise either


@pytest.mark.parametrize("zone", ["+18:00", "-18:00", "+00:00", "-09:30", "Etc/GMT+5"])
def test_zone_offsets_within_range(zone: str) -> None:
    assert LakeConfig.parse({**BASE, "timezone": zone})


def test_a_url_urlsplit_rejects_is_a_config_error_in_validate() -> None:
    props = {**BASE, "store.url": "s3a://[bucket"}
    assert CONFIG_DEF.validate(props)["store.url"].errors == [
        "Invalid value s3a://[bucket for configuration store.url: not a valid URL (Invalid "
        "IPv6 URL)"
    ]
    LakeSinkConnector().validate(props)


def test_connector_validate_reports_cross_key_errors_by_key() -> None:
    connector = LakeSinkConnector()
    with pytest.raises(ConfigError) as raised:
        connector.validate({**BASE, "partitioner.class": "FieldPartitioner"})
    assert list(raised.value.errors) == ["partition.field.name"]
    connector.validate(
        {**BASE, "partitioner.class": "FieldPartitioner", "partition.field.name": "a"}
    )
    # a key wrong on its own is the ConfigDef's to report, not validate's
    connector.validate({"partitioner.class": "Nope"})


def test_every_key_is_declared_once_with_docs() -> None:
    assert all(key.doc for key in CONFIG_DEF.keys.values())
    assert CONFIG_DEF.keys["flush.size"].required
    assert not CONFIG_DEF.keys["topics.dir"].required


def test_start_rejects_a_bad_config_and_task_configs_number_the_tasks() -> None:
    connector = LakeSinkConnector()
    with pytest.raises(ConfigError):
        connector.start({"name": "lake", "flush.size": "1"})
    props = {"name": "lake", "connector.class": "LakeSink", "topics": "a", **BASE}
    connector.start(props)
    configs = connector.task_configs(2)
    assert configs == [{**props, "lake.task.id": "0"}, {**props, "lake.task.id": "1"}]
    assert connector.task_class().__name__ == "LakeSinkTask"


def test_the_builtin_answers_to_its_aliases() -> None:
    plugins = Plugins([])
    for name in ("LakeSink", "LakeSinkConnector", "lake.sink.LakeSinkConnector"):
        desc = plugins.find(name, [PluginType.SOURCE, PluginType.SINK])
        assert (desc.class_name, desc.type, desc.version) == (
            "lake.sink.LakeSinkConnector",
            PluginType.SINK,
            "1.0.0",
        )
