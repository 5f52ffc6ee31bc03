"""wait_for and poll: the value once it holds, errors kept as the last state, timeouts that say
what was awaited and what was seen."""

from __future__ import annotations

import pytest

from connect_lite.testing import WaitFailed, WaitTimeout, wait_for


def test_wait_for_returns_the_first_truthy_value() -> None:
    answers = iter([None, 0, [], {"state": "RUNNING"}])
    assert wait_for(lambda: next(answers), 5, interval=0.001) == {"state": "RUNNING"}


def test_an_error_is_the_last_state_and_polling_goes_on() -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionRefusedError("not yet")
        return "up"

    assert wait_for(flaky, 5, interval=0.001) == "up"
    assert len(calls) == 3


def test_a_timeout_names_what_was_awaited_and_the_last_value() -> None:
    with pytest.raises(WaitTimeout) as timeout:
        wait_for(lambda: [], 0.05, interval=0.01, what="three lines in out.txt")
    assert str(timeout.value).startswith(
        "timed out after 0.05s waiting for three lines in out.txt; last seen: []"
    )
    assert timeout.value.last_seen == []


def test_without_what_the_docstring_or_name_says_it() -> None:
    def broker_gone() -> bool:
        """the broker's process gone"""
        return False

    def sink_done() -> bool:
        raise OSError("refused")

    with pytest.raises(
        WaitTimeout, match="waiting for the broker's process gone; last seen: false"
    ):
        wait_for(broker_gone, 0.02, interval=0.01)
    with pytest.raises(WaitTimeout, match="waiting for sink_done; last seen: OSError: refused"):
        wait_for(sink_done, 0.02, interval=0.01)


def test_wait_failed_ends_the_wait_at_once() -> None:
    def failed() -> bool:
        raise WaitFailed("the task FAILED")

    with pytest.raises(WaitFailed, match="the task FAILED"):
        wait_for(failed, 60)
