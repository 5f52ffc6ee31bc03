"""The sink's Spark work, with only the methods of the DataFrame it is given (and its
``sparkSession``): collect a batch's small columns, buffer a batch, write committed files.

Buffered pieces are Parquet, partitioned by ``_tp`` (``<topic>+<partition>``), one directory
per put: ``<buffer area>/<put id>/_tp=<topic>+<partition>/part-*.parquet``, with the columns
``topic``, ``partition``, ``offset``, ``_dir`` and ``value``. A commit round reads the pieces
of the partitions it commits back, keeps the rows of the segments it commits, and writes
one file per (topic partition, segment, directory) into a temporary directory, rows in
offset order: ``<tmp>/__connect_lite_file=<key>/part-*``, where the key is
``<topic>+<partition>+<segment's first offset>/<dir>``, one directory level since Spark
escapes the ``/`` (and ``=``, ``%`` ...) of a partition value as ``%XX``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from connect_lite.api import TopicPartition

from .config import Format
from .partitioning import FILE_COLUMN, BatchPlan, sql_string

PARTITION_COLUMN = "_tp"


@dataclass
class PartitionRows:
    """One topic partition's records of a batch, in offset order."""

    offsets: list[int] = field(default_factory=list)
    times: list[int | None] = field(default_factory=list)
    dirs: list[str | None] = field(default_factory=list)
    nulls: list[bool] = field(default_factory=list)


def collect_rows(df: Any, plan: BatchPlan) -> dict[TopicPartition, PartitionRows]:
    """Each record's offset, time (epoch ms), directory and whether its value is null, by
    topic partition; one small Spark job (Arrow transfer)."""
    table = df.selectExpr(
        "topic",
        "partition",
        "offset",
        f"{plan.time_sql} AS t",
        f"{plan.dir_sql} AS d",
        "value IS NULL AS n",
    ).toArrow()
    columns = [
        table.column(name).to_pylist() for name in ("topic", "partition", "offset", "t", "d", "n")
    ]
    rows: dict[TopicPartition, PartitionRows] = {}
    for topic, partition, offset, time, directory, null in zip(*columns, strict=True):
        tp = TopicPartition(topic, partition)
        found = rows.get(tp)
        if found is None:
            found = rows[tp] = PartitionRows()
        found.offsets.append(offset)
        found.times.append(time)
        found.dirs.append(directory)
        found.nulls.append(bool(null))
    for part in rows.values():
        _sort_by_offset(part)
    return rows


def _sort_by_offset(part: PartitionRows) -> None:
    offsets = part.offsets
    if all(a < b for a, b in itertools.pairwise(offsets)):
        return
    order = sorted(range(len(offsets)), key=offsets.__getitem__)
    part.offsets = [offsets[i] for i in order]
    part.times = [part.times[i] for i in order]
    part.dirs = [part.dirs[i] for i in order]
    part.nulls = [part.nulls[i] for i in order]


def buffer_batch(df: Any, plan: BatchPlan, url: str, condition: str | None) -> None:
    """Write the batch's rows (those matching ``condition``) as one buffered piece per topic
    partition under ``url``."""
    rows = df.where(condition) if condition else df
    rows.selectExpr(
        "topic",
        "partition",
        "offset",
        f"{plan.dir_sql} AS _dir",
        f"{plan.value_sql} AS value",
        f"concat(topic, '+', partition) AS {PARTITION_COLUMN}",
    ).write.partitionBy(PARTITION_COLUMN).mode("errorifexists").parquet(url)


def piece_dir(put_dir: str, tp: TopicPartition) -> str:
    """The directory of one topic partition's piece inside a put's buffer directory."""
    return f"{put_dir}/{PARTITION_COLUMN}={tp.topic}+{tp.partition}"


def write_files(
    session: Any,
    fmt: Format,
    piece_urls: Sequence[str],
    bounds: Sequence[tuple[str, int, int, int]],
    url: str,
    value_is_struct: bool,
) -> None:
    """Write one file per (topic partition, segment, directory) under ``url``.

    ``bounds`` are the segments as (topic, partition, first offset, last offset). A segment
    is joined to its rows by a broadcast range join; the file key is hashed so each file is
    written by one Spark task, sorted by offset."""
    buffered = session.read.parquet(*piece_urls)
    segments = session.createDataFrame(
        list(bounds), "_bt string, _bp int, _first long, _last long"
    ).hint("broadcast")
    rows = buffered.crossJoin(segments).where(
        "topic = _bt AND partition = _bp AND offset BETWEEN _first AND _last"
    )
    keyed = rows.selectExpr(
        f"concat(topic, '+', partition, '+', _first, '/', _dir) AS {FILE_COLUMN}",
        "offset",
        "value",
    )
    ordered = keyed.repartition(FILE_COLUMN).sortWithinPartitions(FILE_COLUMN, "offset")
    out = ordered.selectExpr(FILE_COLUMN, "value.*" if value_is_struct else "value")
    writer = out.write.partitionBy(FILE_COLUMN).option("maxRecordsPerFile", 0)
    if fmt is Format.CSV:
        writer = writer.option("header", "true")
    writer.format(fmt.value).mode("errorifexists").save(url)


def keep_rows_sql(skip_below: dict[TopicPartition, int], drop_nulls: bool) -> str | None:
    """A condition keeping the rows to buffer: not below a partition's next offset (rows
    buffered or committed already), and, if asked, not null."""
    parts = [
        f"NOT (topic = {sql_string(tp.topic)} AND partition = {int(tp.partition)} "
        f"AND offset < {int(offset)})"
        for tp, offset in sorted(skip_below.items(), key=lambda i: (i[0].topic, i[0].partition))
    ]
    if drop_nulls:
        parts.append("value IS NOT NULL")
    return " AND ".join(parts) or None
