"""One scrape of the worker's GET /metrics (Prometheus text), as samples a test can look up."""

from __future__ import annotations

from dataclasses import dataclass

# The parser of the library that writes /metrics (control/metrics.py): read as it is written.
from prometheus_client.parser import (  # noqa: TID251  # parsing, for tests, not a second exporter
    text_string_to_metric_families,
)

Sample = tuple[str, dict[str, str], float]
"""A sample's name (with its ``_total``/``_bucket``... suffix), labels and value."""


@dataclass(frozen=True)
class Metrics:
    """Every sample of one scrape: ``metrics.value(name, connector="c", task="0")``."""

    samples: list[Sample]

    @classmethod
    def parse(cls, text: str) -> Metrics:
        """Parse the Prometheus text format (raises ValueError if it is not)."""
        return cls(
            [
                (sample.name, dict(sample.labels), float(sample.value))
                for family in text_string_to_metric_families(text)
                for sample in family.samples
            ]
        )

    def find(self, name: str, **labels: str) -> list[tuple[dict[str, str], float]]:
        """The (labels, value) of every sample named ``name`` whose labels include ``labels``."""
        return [
            (have, value)
            for sample, have, value in self.samples
            if sample == name and labels.items() <= have.items()
        ]

    def value(self, name: str, **labels: str) -> float:
        """The value of the one sample named ``name`` with these labels; LookupError if there
        is none, or more than one."""
        found = self.find(name, **labels)
        if len(found) != 1:
            raise LookupError(f"{len(found)} samples of {name}{labels}, not 1: {found}")
        return found[0][1]


__all__ = ["Metrics", "Sample"]
