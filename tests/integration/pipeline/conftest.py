"""One real local SparkSession for the whole test session, started in the background."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from pyspark import cloudpickle

from connect_lite.pipeline import SparkRuntime
from tests.integration.pipeline import plugins

# Ship the test plugins by value, as plugin locations are not on the workers' path.
cloudpickle.register_pickle_by_value(plugins)

SPARK_CONF = {
    "spark.master": "local[2]",
    "spark.default.parallelism": "4",  # four chunks per batch: order over several partitions
    "spark.sql.shuffle.partitions": "3",
    "spark.connectlite.test.marker": "passed-through",
}


@dataclass
class BackgroundStart:
    call_seconds: float
    started_right_after_call: bool


@pytest.fixture(scope="session")
def spark_start() -> Iterator[tuple[SparkRuntime, BackgroundStart]]:
    runtime = SparkRuntime(SPARK_CONF)
    before = time.monotonic()
    runtime.start_in_background()
    info = BackgroundStart(time.monotonic() - before, runtime.is_started)
    yield runtime, info
    runtime.stop()


@pytest.fixture(scope="session")
def runtime(spark_start: tuple[SparkRuntime, BackgroundStart]) -> SparkRuntime:
    """The session's SparkRuntime (its SparkSession is created once, in the background)."""
    return spark_start[0]
