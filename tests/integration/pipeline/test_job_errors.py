"""Failures inside a batch job come back as clean ConnectErrors naming the stage and the record."""

from __future__ import annotations

import functools

import pytest

from connect_lite.api import ConfigError, DataError, Headers, RetriableError, SourceRecord
from connect_lite.pipeline import SinkJob, SourceJob, SparkEngine
from connect_lite.protocol.job_spec import TransformSpec
from tests.integration.pipeline import plugins
from tests.integration.pipeline.jobs import Message, spec

pytestmark = pytest.mark.integration


def source(i: int, value: object, topic: str = "t", **kw: object) -> SourceRecord:
    return SourceRecord({"file": "f"}, {"pos": i}, topic, value, **kw)


def raises_from(stage, batch, cls: type[Exception]) -> Exception:
    with pytest.raises(cls) as info:
        stage.run(batch)
    return info.value


def test_key_converter_error_on_source(engine: SparkEngine):
    stage = SourceJob(engine, spec("err-key", key_fail_on="boom"), "task-err-key")
    batch = [source(i, "v", key="boom" if i == 33 else "k", kafka_partition=4) for i in range(50)]
    err = raises_from(stage, batch, DataError)
    assert str(err).startswith("Error in stage KEY_CONVERTER (")
    assert "topic='t', partition=4" in str(err) and "{'pos': 33}" in str(err)
    assert "ValueError: cannot convert 'boom'" in str(err)
    assert "Traceback" in err.trace and "from_connect_data" in err.trace
    assert err.record_index == 33 and err.stage == "KEY_CONVERTER"


def test_value_converter_error_on_sink_keeps_the_connect_error_class(engine: SparkEngine):
    stage = SinkJob(engine, spec("err-value", value_fail_on="boom"), "task-err-value")
    batch = [Message("t", 2, 100 + i, None, b"boom" if i == 7 else b"ok") for i in range(20)]
    err = raises_from(stage, batch, RetriableError)
    assert "Error in stage VALUE_CONVERTER" in str(err)
    assert "topic='t', partition=2, offset=107" in str(err)
    assert "RetriableError: cannot read 'boom'" in err.trace


def test_vectorized_converter_failure_names_the_record(engine: SparkEngine):
    stage = SourceJob(
        engine, spec("err-vec", plugins.BatchUtf8Converter, value_fail_on="bad"), "task-err-vec"
    )
    err = raises_from(
        stage, [source(i, "bad" if i == 12 else "fine") for i in range(30)], DataError
    )
    assert "VALUE_CONVERTER" in str(err) and err.record_index == 12


def test_header_converter_error_on_both_sides(engine: SparkEngine):
    src = SourceJob(engine, spec("err-h1", header_fail_on="bad"), "task-err-h")
    err = raises_from(src, [source(0, "v", headers=Headers().add("bad", 1))], DataError)
    assert "Error in stage HEADER_CONVERTER" in str(err)
    sink = SinkJob(engine, spec("err-h2", header_fail_on="bad"), "task-err-h")
    err = raises_from(sink, [Message("t", 0, 5, None, b"v", [("bad", b"1")])], DataError)
    assert "Error in stage HEADER_CONVERTER" in str(err) and "offset=5" in str(err)


def test_transformation_and_predicate_errors(engine: SparkEngine):
    tx = SourceJob(
        engine, spec("err-tx", transforms=(TransformSpec(plugins.UpperValue),)), "task-err-tx"
    )
    err = raises_from(tx, [source(0, "fine"), source(1, "explode")], DataError)
    assert "Error in stage TRANSFORMATION" in str(err) and "UpperValue" in str(err)
    assert "KeyError" in str(err) and err.record_index == 1
    gated = (TransformSpec(plugins.UpperValue, functools.partial(plugins.TopicIs, "x")),)
    pred = SinkJob(engine, spec("err-pred", transforms=gated), "task-err-pred")
    err = raises_from(pred, [Message("bad-topic", 0, 9, None, b"v")], DataError)
    assert "Error in stage PREDICATE" in str(err) and "TopicIs" in str(err)
    assert "RuntimeError: predicate failed" in str(err)


def test_tolerated_errors_are_reported_and_the_rest_goes_through(engine: SparkEngine):
    stage = SinkJob(engine, spec("err-tol", value_fail_on="boom"), "task-err-tol")
    batch = [Message("t", 0, i, None, b"boom" if i in (3, 8) else b"ok") for i in range(10)]
    result = stage.run(batch, tolerate_errors=True)
    assert [e.index for e in result.errors] == [3, 8]
    assert {e.stage for e in result.errors} == {"VALUE_CONVERTER"}
    assert result.errors[0].exception_class.endswith("RetriableError")
    assert result.indices == [i for i in range(10) if i not in (3, 8)]
    assert len(result.offsets) == 10


def test_failing_factory_is_a_clean_error(engine: SparkEngine):
    def broken() -> None:
        raise ConfigError("missing option 'x'")

    stage = SourceJob(
        engine, spec("err-build", transforms=(TransformSpec(broken),)), "task-err-build"
    )
    err = raises_from(stage, [source(0, "v")], ConfigError)
    assert "Error in stage TRANSFORMATION" in str(err) and "missing option 'x'" in str(err)
