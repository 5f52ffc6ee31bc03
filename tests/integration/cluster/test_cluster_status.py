"""A real worker on the session's Spark standalone cluster (two 1-core workers) says where a
task's last batch ran: its scheduler pool and both executors, in the connector's status (an
extra field of each task) and in /metrics.

The task is a sink's: a sink batch is split over the executors, where a source batch of one
source partition runs in one Spark task, to keep its order (pipeline/source_send.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connect_lite.testing import EmbeddedConnect, wait_for
from tests.integration.testkit import create_running, sink_config, source_config, unique

pytestmark = pytest.mark.integration

GAUGE = "kafka_connect_spark_task_metrics_last_batch_executors"


def last_batch(worker: EmbeddedConnect, name: str) -> dict[str, Any] | None:
    tasks = worker.client.status(name).get("tasks", [])
    return tasks[0].get("spark_last_batch") if tasks else None


def test_status_and_metrics_show_the_pool_and_both_executors_of_a_tasks_last_batch(
    cluster_worker: EmbeddedConnect, tmp_path: Path
) -> None:
    # An endless source feeds the sink: while one sink batch runs the next fills up, so
    # batches have many records, in two chunks or more (a Spark task each).
    topic = unique("spread")
    source = create_running(cluster_worker, "spread-in", source_config(topic))
    name = create_running(cluster_worker, "spread", sink_config(topic, tmp_path / "out.jsonl"))
    pool = f"connect-lite:{name}-0"
    batch = wait_for(
        lambda: (b := last_batch(cluster_worker, name)) is not None and b["executors"] == 2 and b,
        timeout=180,
        what="a batch on both executors, in the status",
    )
    assert batch["scheduler_pool"] == pool
    assert len(batch["executor_ids"]) == 2 and "driver" not in batch["executor_ids"]

    found = wait_for(
        lambda: cluster_worker.metrics().find(GAUGE, connector=name, task="0"),
        what="the gauge",
    )
    assert [labels["scheduler_pool"] for labels, _ in found] == [pool]
    wait_for(
        lambda: cluster_worker.metrics().value(GAUGE, connector=name, task="0") == 2,
        what="two executors in /metrics",
    )
    assert cluster_worker.http.delete(f"/connectors/{name}").status == 204
    assert cluster_worker.http.delete(f"/connectors/{source}").status == 204
