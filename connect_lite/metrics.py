"""Worker metrics in Prometheus text format; the only importer of prometheus_client."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from connect_lite.runtime.topic_tracking import TopicTracker
from connect_lite.storage.base import ConfigStore

CONTENT_TYPE = CONTENT_TYPE_LATEST
"""The Content-Type of ``WorkerMetrics.exposition()``."""


class _ActiveTopics(Collector):
    """KIP-558: the number of active topics of each connector (group connector-metrics)."""

    def __init__(self, configs: ConfigStore, tracker: TopicTracker) -> None:
        self.configs = configs
        self.tracker = tracker

    def collect(self) -> Iterator[Metric]:
        gauge = GaugeMetricFamily(
            "kafka_connect_connector_metrics_active_topic_count",
            "The number of topics the connector has used since it was created or reset (KIP-558).",
            labels=["connector"],
        )
        for connector, count in self.tracker.counts(self.configs.connector_names()).items():
            gauge.add_metric([connector], count)
        yield gauge


class WorkerMetrics:
    """The worker's metric registry; read at scrape time from the stores."""

    def __init__(self, configs: ConfigStore, tracker: TopicTracker) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(_ActiveTopics(configs, tracker))

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
