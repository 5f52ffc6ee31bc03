"""A sink's batch size follows max.poll.records when the worker or the connector sets it."""

from __future__ import annotations

import pytest

from connect_lite.api.errors import ConnectError
from connect_lite.config.batching import Batching
from connect_lite.control.worker import sink_batching

WORKER = Batching(max_records=200_000, max_wait_ms=500)


def test_without_max_poll_records_the_worker_batch_size_holds() -> None:
    assert sink_batching(WORKER, {"group.id": "g"}) == WORKER


def test_max_poll_records_bounds_a_sink_batch() -> None:
    assert sink_batching(WORKER, {"max.poll.records": "500"}) == Batching(500, 500)


@pytest.mark.parametrize("bad", ["0", "-3", "many"])
def test_a_bad_max_poll_records_is_a_clear_error(bad: str) -> None:
    with pytest.raises(ConnectError, match=f"Invalid value {bad} for configuration max.poll"):
        sink_batching(WORKER, {"max.poll.records": bad})
