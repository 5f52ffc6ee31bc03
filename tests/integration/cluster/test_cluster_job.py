"""A batch job whose transform comes from a plugin location runs on a real Spark standalone cluster.

The cluster (a master and two 1-core workers from the pyspark wheel) is the session's
``spark_standalone``. The transform, ``stamp.StampTransformation`` of tests/plugins/stamp-*,
stamps into each record the pid of the Python process that applied it and the files its
module and its sibling module were loaded from: the pid is not this (the driver's) process,
and the files lie in an executor's work directory, in the directory Spark unpacked the
shipped archive of the location to, not under tests/plugins.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connect_lite.api import Schema, SourceRecord
from connect_lite.control import components
from connect_lite.pipeline import SourceJob, SparkEngine
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.protocol.job_spec import JobSpec, TransformSpec
from connect_lite.testing.spark_cluster import SparkCluster
from tests.integration.cluster.properties import spark_conf

pytestmark = pytest.mark.integration

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
STAMP = "stamp.StampTransformation"
CONVERTERS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    "header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
}


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins([str(PLUGINS)], entry_points=False)


@pytest.fixture(scope="module")
def engine(spark_standalone: SparkCluster) -> Iterator[SparkEngine]:
    """A SparkEngine on the cluster with the README's properties: two 1-core executors."""
    engine = SparkEngine(spark_conf(spark_standalone))
    engine.session()
    yield engine
    engine.stop()


def stamp_spec(plugins: Plugins, job_id: str, version: str) -> JobSpec:
    """A spec as the worker builds it: converters by their Kafka names, and the stamp
    transform at ``version``, with the plugin locations its components come from."""
    chosen: components.Chosen = []
    key, value, header = (
        components.converter_factory(plugins, which, {}, CONVERTERS, None, chosen)
        for which in ("key", "value", "header")
    )
    desc = plugins.find(STAMP, [PluginType.TRANSFORMATION], version)
    chosen.append(("transform", "stamp", desc))
    return JobSpec(
        job_id,
        key,
        value,
        header,
        (TransformSpec(functools.partial(components.build_configured, desc.ref, {})),),
        plugin_locations=tuple(sorted({d.location for _, _, d in chosen if d.location})),
    )


def records(n: int) -> list[SourceRecord]:
    return [
        SourceRecord(
            source_partition={"p": 0},
            source_offset={"o": i},
            topic="stamped",
            value=f"v{i}",
            value_schema=Schema.STRING_SCHEMA,
        )
        for i in range(n)
    ]


def stamps(job: SourceJob, n: int) -> list[dict[str, Any]]:
    result = job.run(records(n))
    assert [r.index for r in result.records] == list(range(n))
    return [json.loads(r.value or b"") for r in result.records]


def shipped_under(cluster: SparkCluster, file: str) -> Path | None:
    """The worker work directory ``file`` lies under, or None."""
    path = Path(file).resolve()
    return next((w for w in cluster.work_dirs if path.is_relative_to(w.resolve())), None)


def test_a_plugin_transform_runs_on_the_executors_from_the_shipped_location(
    spark_standalone: SparkCluster, engine: SparkEngine, plugins: Plugins
) -> None:
    job = SourceJob(engine, stamp_spec(plugins, "stamp-1", "1.0.0"), "cluster:stamp-1")
    out = stamps(job, 40)
    assert [s["value"] for s in out] == [f"v{i}" for i in range(40)]
    assert {s["version"] for s in out} == {"1.0.0"}
    assert os.getpid() not in {s["pid"] for s in out}
    assert {s["pool"] for s in out} == {"cluster:stamp-1"}  # the task's own pool (FAIR)
    for stamp in out:
        for file in (stamp["file"], stamp["helper_file"]):
            assert shipped_under(spark_standalone, file), f"{file} was not shipped"
            assert not Path(file).resolve().is_relative_to(PLUGINS)
            # <work-N>/<app-id>/<executor-id>/<archive>/stamp.py: the unpacked archive
            assert Path(file).parent.name.startswith("stamp_1_0_0_")
            assert Path(file).parent.name.endswith(".zip")
        # connect_lite itself came as the zip the session shipped (addPyFile), not the checkout
        assert shipped_under(
            spark_standalone, os.path.join(stamp["cwd"], stamp["connect_lite_file"])
        )
        assert "/connect_lite-" in stamp["connect_lite_file"]


def test_two_versions_of_one_plugin_run_side_by_side_on_the_same_executors(
    spark_standalone: SparkCluster, engine: SparkEngine, plugins: Plugins
) -> None:
    jobs = {
        version: SourceJob(
            engine, stamp_spec(plugins, f"side-{version}", version), f"cluster:side-{version}"
        )
        for version in ("1.0.0", "2.0.0")
    }
    seen: dict[str, list[dict[str, Any]]] = {version: [] for version in jobs}
    failures: list[BaseException] = []

    def run(version: str) -> None:
        try:
            for _ in range(3):  # both connectors' batches at once, several times
                seen[version].extend(stamps(jobs[version], 20))
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=run, args=(v,)) for v in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    assert not failures, failures
    for version, out in seen.items():
        assert len(out) == 60
        assert {s["version"] for s in out} == {version}
        assert {s["pool"] for s in out} == {f"cluster:side-{version}"}
        slug = "stamp_" + version.replace(".", "_") + "_"
        for stamp in out:
            assert Path(stamp["file"]).parent.name.startswith(slug)
            assert Path(stamp["helper_file"]).parent == Path(stamp["file"]).parent
            assert shipped_under(spark_standalone, stamp["file"])
    # The same Python worker processes applied both versions: each loaded its own copy.
    pids = {version: {s["pid"] for s in out} for version, out in seen.items()}
    assert pids["1.0.0"] & pids["2.0.0"]
    assert os.getpid() not in pids["1.0.0"] | pids["2.0.0"]
