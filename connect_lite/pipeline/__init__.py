"""The data plane: the worker's SparkSession and the batch stages that run on it."""

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
from connect_lite.pipeline.source_stage import ProducedRecord, SourceBatchResult, SourceStage
from connect_lite.pipeline.stage_spec import StageSpec, TransformSpec

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
