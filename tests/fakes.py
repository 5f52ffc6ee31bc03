"""Fakes the unit tests share. One home each: a test that needs one imports it from here."""

from __future__ import annotations


class FakeClock:
    """A clock the test moves by hand (``clock.now += 5``), in place of ``time.monotonic``
    (call it) and ``time.sleep`` (``clock.sleep``: records the delay, then moves on by it)."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now
        self.sleeps: list[float] = []
        """Every delay ``sleep`` was asked for, rounded to the microsecond."""

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds
