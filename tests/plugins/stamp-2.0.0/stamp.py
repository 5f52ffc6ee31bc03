"""A transformation that stamps where it ran: for the cluster tests, at two versions.

The value becomes a JSON string holding the original value, this copy's version, the pid of
the process that ran ``apply`` (a Spark Python worker) and the files this module and its
sibling were loaded from, which tell whether the location was shipped to the executor, and
the file connect_lite was imported from there, and the Spark scheduler pool of the job.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

import stamp_version
from stamp_version import VERSION

import connect_lite
from connect_lite.api import ConfigDef, Schema, Transformation


def _scheduler_pool() -> str | None:
    """The Spark scheduler pool of the job applying this (None outside a Spark task)."""
    try:
        from pyspark import TaskContext
    except ImportError:
        return None
    context = TaskContext.get()
    return None if context is None else context.getLocalProperty("spark.scheduler.pool")


class StampTransformation(Transformation):
    """Replaces the value with a JSON stamp of where and by which version it was applied."""

    def version(self) -> str:
        return VERSION

    def config(self) -> ConfigDef:
        return ConfigDef()

    def configure(self, config: dict[str, str]) -> None:
        pass

    def apply(self, record: Any) -> Any:
        stamp = {
            "value": record.value,
            "version": VERSION,
            "pid": os.getpid(),
            "file": __file__,
            "helper_file": stamp_version.__file__,
            "connect_lite_file": connect_lite.__file__,
            "cwd": os.getcwd(),  # Spark's Python workers may see relative paths
            "pool": _scheduler_pool(),
        }
        return dataclasses.replace(
            record, value=json.dumps(stamp), value_schema=Schema.STRING_SCHEMA
        )
