"""What the integration tests' workers run with, on top of connect_lite.testing's defaults: the
testkit plugins of tests/plugins and string converters; names and configs for the testkit's
connectors (ScriptedSource, RecordingSink)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

from connect_lite.testing import EmbeddedConnect

REPO = Path(__file__).resolve().parents[2]
TEST_PLUGINS = REPO / "tests" / "plugins"

STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
WORKER_PROPERTIES = {
    "offset.flush.interval.ms": "500",
    "key.converter": STRING_CONVERTER,
    "value.converter": STRING_CONVERTER,
}
"""Records as text (the tests read them as strings), offsets flushed every half second."""


WAIT_TIMEOUT = 120.0
"""Seconds a wait may take: a connector's first task may wait for Spark on a busy machine."""


def worker_options(**kwargs: Any) -> dict[str, Any]:
    """EmbeddedConnect keyword arguments for a test worker: the testkit plugins,
    WORKER_PROPERTIES and WAIT_TIMEOUT, then ``kwargs`` (their ``worker_properties`` on top of
    WORKER_PROPERTIES)."""
    properties = {**WORKER_PROPERTIES, **kwargs.pop("worker_properties", {})}
    return {
        "plugin_paths": [TEST_PLUGINS],
        "wait_timeout": WAIT_TIMEOUT,
        "worker_properties": properties,
        **kwargs,
    }


def unique(prefix: str) -> str:
    """A name no other test uses: prefix plus 8 random hex digits."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def source_config(topic: str, **extra: str) -> dict[str, str]:
    """A testkit ScriptedSource writing value-N records to ``topic``."""
    return {"connector.class": "ScriptedSource", "topic": topic, "tasks.max": "1", **extra}


def sink_config(topic: str, out: Path, **extra: str) -> dict[str, str]:
    """A testkit RecordingSink writing what it gets to ``out`` as JSON lines."""
    return {
        "connector.class": "RecordingSink",
        "topics": topic,
        "output.file": str(out),
        "tasks.max": "1",
        **extra,
    }


def lines(path: Path) -> list[str]:
    """The lines of a file, or none if it does not exist yet."""
    return path.read_text().splitlines() if path.exists() else []


def create_running(worker: EmbeddedConnect, prefix: str, config: dict[str, str]) -> str:
    """Create a connector named ``prefix`` plus random digits and wait until it and its one
    task run (``worker.create_running``); its name."""
    return str(worker.create_running(unique(prefix), config, tasks=1)["name"])


def metric(worker: EmbeddedConnect, name: str, connector: str) -> float | None:
    """Task 0's task-error-metrics ``name`` (Prometheus style: total_retries), from /metrics."""
    text = worker.http.request("GET", "/metrics").raw.decode()
    pattern = (
        rf'^kafka_connect_task_error_metrics_{name}\{{connector="{re.escape(connector)}",'
        rf'task="0"\}} ([0-9.e+]+)$'
    )
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else None
