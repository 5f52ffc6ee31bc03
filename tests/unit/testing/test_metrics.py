"""Metrics: one scrape of /metrics, looked up by name and labels."""

from __future__ import annotations

import pytest

from connect_lite.testing import Metrics

TEXT = """\
# HELP records_total Records.
# TYPE records_total counter
records_total{connector="a",task="0"} 3.0
records_total{connector="a",task="1"} 4.0
records_total{connector="b",task="0"} 5.0
# HELP up Up.
# TYPE up gauge
up 1.0
"""


def test_find_and_value_by_name_and_labels() -> None:
    metrics = Metrics.parse(TEXT)
    assert metrics.value("up") == 1.0
    assert metrics.value("records_total", connector="b") == 5.0
    assert sorted(v for _, v in metrics.find("records_total", connector="a")) == [3.0, 4.0]
    assert metrics.find("records_total", connector="c") == []
    assert ("records_total", {"connector": "a", "task": "0"}, 3.0) in metrics.samples


def test_value_needs_exactly_one_sample() -> None:
    metrics = Metrics.parse(TEXT)
    with pytest.raises(LookupError, match="2 samples of records_total"):
        metrics.value("records_total", connector="a")
    with pytest.raises(LookupError, match="0 samples of nothing"):
        metrics.value("nothing")
