"""Worker metrics in Prometheus text format; the only importer of prometheus_client."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from connect_lite.control.connector_details import Details, numeric_details
from connect_lite.control.metric_samples import MetricSources, collect_samples
from connect_lite.control.topic_tracking import TopicTracker
from connect_lite.control.worker import RunningPlugin
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


_CONVERTER_ROLES = ("key_converter", "value_converter", "header_converter")


class _PluginInfo(Collector):
    """KIP-891's constant metrics: class and version of every running plugin, as info metrics."""

    def __init__(self, running: Callable[[], Sequence[RunningPlugin]]) -> None:
        self.running = running

    def collect(self) -> Iterator[Metric]:
        plugins = list(self.running())
        connectors = InfoMetricFamily(
            "kafka_connect_connector",
            "Class, type and version of each running connector (KIP-891).",
            labels=["connector"],
        )
        tasks = InfoMetricFamily(
            "kafka_connect_connector_task",
            "Task class and version, and its key, value and header converters (KIP-891).",
            labels=["connector", "task"],
        )
        for plugin in plugins:
            if plugin.role == "connector":
                connectors.add_metric(
                    [plugin.connector],
                    {
                        "connector_class": plugin.class_name,
                        "connector_type": plugin.connector_type,
                        "connector_version": plugin.version or "",
                    },
                )
        for (connector, task), info in _task_infos(plugins).items():
            tasks.add_metric([connector, str(task)], info)
        yield connectors
        yield tasks
        yield from (_alias_family(plugins, role) for role in ("transform", "predicate"))


def _task_infos(plugins: Sequence[RunningPlugin]) -> dict[tuple[str, int], dict[str, str]]:
    infos: dict[tuple[str, int], dict[str, str]] = {}
    for plugin in plugins:
        if plugin.task is None or plugin.role not in ("task", *_CONVERTER_ROLES):
            continue
        info = infos.setdefault((plugin.connector, plugin.task), {})
        info[f"{plugin.role}_class"] = plugin.class_name
        info[f"{plugin.role}_version"] = plugin.version or ""
    return infos


def _alias_family(plugins: Sequence[RunningPlugin], role: str) -> InfoMetricFamily:
    family = InfoMetricFamily(
        f"kafka_connect_connector_{role}",
        f"Class and version of each {role} a task runs, by alias (KIP-891).",
        labels=["connector", "task", role],
    )
    for plugin in plugins:
        if plugin.role == role and plugin.task is not None:
            family.add_metric(
                [plugin.connector, str(plugin.task), plugin.alias],
                {f"{role}_class": plugin.class_name, f"{role}_version": plugin.version or ""},
            )
    return family


class _Sampled(Collector):
    """Status-store retries, per-task counters and connector task counts, read at scrape time."""

    def __init__(self, sources: MetricSources, configs: ConfigStore) -> None:
        self.sources = sources
        self.configs = configs

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        for sample in collect_samples(self.sources, self.configs.connector_names()):
            family = families.get(sample.name)
            if family is None:
                kind = CounterMetricFamily if sample.counter else GaugeMetricFamily
                family = kind(sample.name, sample.doc, labels=list(sample.labels))
                families[sample.name] = family
            family.add_metric(list(sample.labels.values()), sample.value)  # type: ignore[attr-defined]
        yield from families.values()


class _Details(Collector):
    """Each connector's numeric status details (``Connector.status_details``), as last sampled."""

    def __init__(self, details: Callable[[], Mapping[str, Details]]) -> None:
        self.details = details

    def collect(self) -> Iterator[Metric]:
        gauge = GaugeMetricFamily(
            "kafka_connect_connector_status_detail",
            "What a connector last said it holds in the system it connects to (sampled every "
            "30 s, in any state), e.g. retained_wal_bytes of a replication slot.",
            labels=["connector", "detail"],
        )
        for (connector, detail), value in sorted(numeric_details(self.details()).items()):
            gauge.add_metric([connector, detail], value)
        yield gauge


class WorkerMetrics:
    """The worker's metric registry; read at scrape time from the stores and the worker."""

    def __init__(
        self,
        configs: ConfigStore,
        tracker: TopicTracker,
        running: Callable[[], Sequence[RunningPlugin]] | None = None,
        sources: MetricSources | None = None,
        details: Callable[[], Mapping[str, Details]] | None = None,
    ) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(_ActiveTopics(configs, tracker))
        if sources is not None:
            self.registry.register(_Sampled(sources, configs))
        if running is not None:
            self.registry.register(_PluginInfo(running))
        if details is not None:
            self.registry.register(_Details(details))

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
