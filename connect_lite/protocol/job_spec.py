"""What a batch job runs: its converter and transform factories, and its error settings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from connect_lite.api.components import Converter, HeaderConverter, Predicate, Transformation

Chain = Sequence[tuple[Transformation[Any], Predicate[Any] | None, bool]]
"""A built transform chain: (transform, predicate or None, negate), in order."""


@dataclass(frozen=True)
class ShippedLocation:
    """A plugin location shipped to a cluster's executors as an archive.

    ``origin`` is the location's directory on the worker (it names the location's private
    package, so module names agree on both sides); ``archive`` is the archive's file name,
    unique per location and content, which Spark unpacks to a directory of that name in
    each executor's work directory (``SparkFiles.get(archive)``).
    """

    origin: str
    archive: str


@dataclass(frozen=True)
class TransformSpec:
    """A transformation factory, with an optional predicate factory that gates it."""

    factory: Callable[[], Transformation[Any]]
    predicate: Callable[[], Predicate[Any]] | None = None
    negate: bool = False


@dataclass(frozen=True)
class JobSpec:
    """What a batch job runs: converter factories (already configured) and the transform chain.

    ``job_id`` keys the per-worker-process component cache, so it must be unique among
    live batch jobs (e.g. ``"<connector>-<task>"``); each new SourceJob/SinkJob instance
    rebuilds its components once, even under an id used before.
    """

    job_id: str
    key_converter: Callable[[], Converter]
    value_converter: Callable[[], Converter]
    header_converter: Callable[[], HeaderConverter]
    transforms: tuple[TransformSpec, ...] = ()
    columns: bool = True
    """Run a chain of built-ins as Spark column expressions when the batch has a schema."""
    retry_timeout_ms: int = 0
    """errors.retry.timeout: how long a RetriableError is retried; 0 = never, -1 = forever."""
    retry_delay_max_ms: int = 60000
    """errors.retry.delay.max.ms: the cap of the exponential backoff between retries."""
    plugin_locations: tuple[str, ...] = ()
    """The plugin location directories the converters, transforms and predicates come from:
    shipped to the executors when the master is not local (SparkEngine.ship)."""
    shipped: tuple[ShippedLocation, ...] = ()
    """Where executors load those locations from; empty in local mode (the worker's paths)."""
