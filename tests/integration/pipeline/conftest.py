"""One real local SparkSession for the whole test session, started in the background."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark import cloudpickle

from connect_lite.pipeline import SparkEngine
from tests.integration.pipeline import plugins

# Ship the test plugins by value, as plugin locations are not on the workers' path.
cloudpickle.register_pickle_by_value(plugins)

SPARK_CONF = {
    "spark.master": "local[2]",
    "spark.default.parallelism": "4",  # four chunks per batch: order over several partitions
    "spark.sql.shuffle.partitions": "3",
    "spark.connectlite.test.marker": "passed-through",
}


@pytest.fixture(scope="session")
def engine() -> Iterator[SparkEngine]:
    """The session's SparkEngine, started in the background as a worker starts it; the
    fixture waits for the session, so no test depends on one that ran before it. (A first
    batch before the session exists is tested in a fresh process, in test_transform_forms.)"""
    engine = SparkEngine(SPARK_CONF)
    engine.start_in_background()
    engine.session()
    yield engine
    engine.stop()
