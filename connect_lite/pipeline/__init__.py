"""Spark: the data-plane process's SparkSession and the batch stages that run on it.

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
        RecordError,
        StageCancelledError,
        StageExecutionError,
    )
    from connect_lite.pipeline.session import SparkEngine
    from connect_lite.pipeline.sink_stage import SinkBatchResult, SinkStage
    from connect_lite.pipeline.source_stage import (
        ProducedRecord,
        SourceBatchResult,
        SourceStage,
    )

_HOMES = {
    "HEADER_CONVERTER": "record_errors",
    "KEY_CONVERTER": "record_errors",
    "PREDICATE": "record_errors",
    "TRANSFORMATION": "record_errors",
    "VALUE_CONVERTER": "record_errors",
    "RecordError": "record_errors",
    "StageCancelledError": "record_errors",
    "StageExecutionError": "record_errors",
    "SparkEngine": "session",
    "SinkBatchResult": "sink_stage",
    "SinkStage": "sink_stage",
    "ProducedRecord": "source_stage",
    "SourceBatchResult": "source_stage",
    "SourceStage": "source_stage",
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
    "ProducedRecord",
    "RecordError",
    "SinkBatchResult",
    "SinkStage",
    "SourceBatchResult",
    "SourceStage",
    "SparkEngine",
    "StageCancelledError",
    "StageExecutionError",
]
