"""The status page's metrics arithmetic (ui_static/sparklines.js), run in the session's headless
Chromium: parsing the worker's real /metrics text, rates from successive scrapes, sparkline
layout."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from connect_lite.control.metric_samples import MetricSources
from connect_lite.control.metrics import WorkerMetrics
from connect_lite.control.retry import StatusCounters
from connect_lite.control.topic_tracking import TopicTracker
from connect_lite.storage.memory import open_memory_stores
from tests.unit.control.test_worker_metrics import FakeTask

SPARKLINES_JS = Path(__file__).resolve().parents[2] / "connect_lite/rest/ui_static/sparklines.js"
pytestmark = pytest.mark.integration

RunJs = Callable[[str, Any], Any]

ODD = 'a "quoted" \\ name, {braced}'
"""A connector name that needs escaping in Prometheus label values."""


def exposition(tasks: list[FakeTask]) -> str:
    """GET /metrics' body for these tasks, as the worker renders it."""
    stores = open_memory_stores()
    sources = MetricSources(StatusCounters(), lambda: tasks, stores.statuses)
    tracker = TopicTracker(stores.topics, True, True)
    return WorkerMetrics(stores.configs, tracker, sources=sources).exposition().decode()


@pytest.fixture(scope="module")
def page(browser: Browser) -> Iterator[Page]:
    """A blank page with sparklines.js loaded, as the status page loads it."""
    blank = browser.new_page()
    blank.add_script_tag(path=str(SPARKLINES_JS))
    try:
        yield blank
    finally:
        blank.close()


@pytest.fixture
def run_js(page: Page) -> RunJs:
    """Run a function body with ``m`` (sparklines.js) and ``data`` in scope; it returns JSON."""

    def run(body: str, data: Any) -> Any:
        script = f"(data) => {{ const m = globalThis.ConnectLiteMetrics; {body} }}"
        return page.evaluate(script, data)

    return run


def test_the_workers_metrics_text_is_parsed_with_escaped_labels(
    run_js: Callable[[str, Any], Any],
) -> None:
    source = FakeTask(ODD, 0, "source")
    source.counters.add(records_in=10, records_out=9)
    sink = FakeTask("snk", 1, "sink")
    sink.counters.add(records_in=5, records_out=4)
    sink.error_counters.add(total_record_errors=2)
    samples = run_js(
        "return m.parsePrometheus(data).filter(s => "
        "[...m.RECORD_COUNTERS, ...m.ERROR_COUNTERS].includes(s.name));",
        exposition([source, sink]),
    )
    assert sorted((s["name"], s["labels"]["connector"], s["value"]) for s in samples) == [
        ("kafka_connect_sink_task_metrics_sink_record_send_total", "snk", 4),
        ("kafka_connect_source_task_metrics_source_record_write_total", ODD, 9),
        ("kafka_connect_task_error_metrics_total_record_errors", ODD, 0),
        ("kafka_connect_task_error_metrics_total_record_errors", "snk", 2),
    ]
    assert all(set(s["labels"]) == {"connector", "task"} for s in samples)


def test_unreadable_lines_are_skipped(run_js: RunJs) -> None:
    text = 'ok{a="1"} 2\nbroken{a="1" 3\n{a="1"} 4\nnovalue\nspecial NaN\nbig +Inf 123\n'
    samples = run_js(
        "return m.parsePrometheus(data).map(s => [s.name, s.labels, String(s.value)]);", text
    )
    assert samples == [["ok", {"a": "1"}, "2"], ["special", {}, "NaN"], ["big", {}, "Infinity"]]


def scrape(values: dict[tuple[str, str, int], float]) -> list[dict[str, Any]]:
    """Samples for sparklines.js: (kind, connector, task) -> counter value."""
    names = {
        "source": "kafka_connect_source_task_metrics_source_record_write_total",
        "sink": "kafka_connect_sink_task_metrics_sink_record_send_total",
        "errors": "kafka_connect_task_error_metrics_total_record_errors",
    }
    return [
        {"name": names[kind], "labels": {"connector": c, "task": str(t)}, "value": v}
        for (kind, c, t), v in values.items()
    ]


def test_throughput_and_errors_come_from_successive_scrapes(
    run_js: Callable[[str, Any], Any],
) -> None:
    scrapes = [
        (0, {("source", "src", 0): 100, ("source", "src", 1): 50, ("errors", "src", 0): 1}),
        (2000, {("source", "src", 0): 110, ("source", "src", 1): 60, ("errors", "src", 0): 3}),
        (2500, {("source", "src", 0): 999}),  # too soon after the last: skipped
        # task 1 restarted (its counter starts again) and task 2 is new
        (4000, {("source", "src", 0): 120, ("source", "src", 1): 4, ("source", "src", 2): 6}),
        (6000, {("sink", "snk", 0): 40, ("source", "src", 0): 120}),
    ]
    points = run_js(
        "const h = new m.History(5000);"
        "for (const [t, samples] of data) h.record(samples, t, ['snk', 'src']);"
        "return {src: h.of('src'), snk: h.of('snk'), gone: h.of('gone')};",
        [(t, scrape(values)) for t, values in scrapes],
    )
    assert points["src"] == [
        {"t": 2000, "rate": 10, "errors": 2},  # (10 + 10) / 2 s
        {"t": 4000, "rate": 10, "errors": 0},  # (10 + 4 + 6) / 2 s; task 0's errors vanished
        {"t": 6000, "rate": 0, "errors": 0},
    ]
    assert points["snk"] == [  # no metrics yet: zeros
        {"t": 2000, "rate": 0, "errors": 0},
        {"t": 4000, "rate": 0, "errors": 0},
        {"t": 6000, "rate": 20, "errors": 0},  # a new series counts in full
    ]
    assert points["gone"] == []


def test_a_baseline_first_then_points_within_the_window_of_known_connectors(
    run_js: Callable[[str, Any], Any],
) -> None:
    result = run_js(
        "const h = new m.History(5000);"
        "const lengths = [];"
        "for (const t of [0, 2000, 4000, 8000]) {"
        "  h.record(data, t, ['src']); lengths.push(h.of('src').map(p => p.t));"
        "}"
        "h.keepOnly([]);"
        "lengths.push(h.of('src'));"
        "return lengths;",
        scrape({("source", "src", 0): 5}),
    )
    assert result == [[], [2000], [2000, 4000], [4000, 8000], []]


def test_a_sparkline_is_right_aligned_in_time_and_scaled_to_its_peak(run_js: RunJs) -> None:
    points = [{"t": 1000, "rate": 0}, {"t": 3000, "rate": 5}, {"t": 5000, "rate": 10}]
    drawn = run_js(
        "return [m.sparkline(data, 'rate', 5000, 100, 20, 4000), "
        "m.sparkline(data.map(p => ({...p, rate: 0})), 'rate', 5000, 100, 20, 4000), "
        "m.sparkline([], 'rate', 5000, 100, 20)];",
        points,
    )
    assert drawn == [
        {"points": "0,18 50,10 100,2", "max": 10},
        {"points": "0,18 50,18 100,18", "max": 0},
        {"points": "", "max": 0},
    ]


def test_a_young_history_is_drawn_across_the_whole_chart(run_js: RunJs) -> None:
    points = [{"t": 1000, "rate": 4}, {"t": 2000, "rate": 2}, {"t": 3000, "rate": 4}]
    drawn = run_js("return m.sparkline(data, 'rate', 3000, 100, 20, 300000);", points)
    assert drawn == {"points": "0,2 50,10 100,2", "max": 4}
