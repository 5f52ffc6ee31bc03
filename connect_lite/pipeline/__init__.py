"""The data plane: the worker's SparkSession and the batch stages that run on it.

The names below are imported on first use, so that the worker process, which plans tasks but
runs none (control/dataplane_process.py), can import this package's light modules (``placement``,
``stage_spec``, ``java``) without Spark, Arrow and their memory."""

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
    from connect_lite.pipeline.session import SparkRuntime
    from connect_lite.pipeline.sink_stage import SinkBatchResult, SinkStage
    from connect_lite.pipeline.source_stage import (
        ProducedRecord,
        SourceBatchResult,
        SourceStage,
    )
    from connect_lite.protocol.stage_spec import StageSpec, TransformSpec

_HOMES = {
    "HEADER_CONVERTER": "record_errors",
    "KEY_CONVERTER": "record_errors",
    "PREDICATE": "record_errors",
    "TRANSFORMATION": "record_errors",
    "VALUE_CONVERTER": "record_errors",
    "RecordError": "record_errors",
    "StageCancelledError": "record_errors",
    "StageExecutionError": "record_errors",
    "SparkRuntime": "session",
    "SinkBatchResult": "sink_stage",
    "SinkStage": "sink_stage",
    "ProducedRecord": "source_stage",
    "SourceBatchResult": "source_stage",
    "SourceStage": "source_stage",
    "StageSpec": "stage_spec",
    "TransformSpec": "stage_spec",
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
    "SparkRuntime",
    "StageCancelledError",
    "StageExecutionError",
    "StageSpec",
    "TransformSpec",
]
