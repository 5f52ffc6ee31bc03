"""Spark: the data-plane process's SparkSession and the batch jobs that run on it.

The names below are imported on first use, so that importing a light module of this package
(``java``, which the worker's start-up uses to check for Java) loads no Spark, Arrow or pandas."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from connect_lite.pipeline.record_errors import (
        HEADER_CONVERTER,
        KEY_CONVERTER,
        PREDICATE,
        TRANSFORMATION,
        VALUE_CONVERTER,
        JobCancelledError,
        JobFailedError,
        RecordError,
    )
    from connect_lite.pipeline.session import SparkEngine
    from connect_lite.pipeline.sink_job import SinkBatchResult, SinkJob
    from connect_lite.pipeline.source_job import (
        ProducedRecord,
        SourceBatchResult,
        SourceJob,
    )

_HOMES = {
    "HEADER_CONVERTER": "record_errors",
    "KEY_CONVERTER": "record_errors",
    "PREDICATE": "record_errors",
    "TRANSFORMATION": "record_errors",
    "VALUE_CONVERTER": "record_errors",
    "RecordError": "record_errors",
    "JobCancelledError": "record_errors",
    "JobFailedError": "record_errors",
    "SparkEngine": "session",
    "SinkBatchResult": "sink_job",
    "SinkJob": "sink_job",
    "ProducedRecord": "source_job",
    "SourceBatchResult": "source_job",
    "SourceJob": "source_job",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "HEADER_CONVERTER",
    "KEY_CONVERTER",
    "PREDICATE",
    "TRANSFORMATION",
    "VALUE_CONVERTER",
    "JobCancelledError",
    "JobFailedError",
    "ProducedRecord",
    "RecordError",
    "SinkBatchResult",
    "SinkJob",
    "SourceBatchResult",
    "SourceJob",
    "SparkEngine",
]
