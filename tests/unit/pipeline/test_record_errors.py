"""A record's error names the failing plugin's class as the plugin listings show it."""

from __future__ import annotations

from connect_lite.api import SourceRecord
from connect_lite.control.components import transform_chain
from connect_lite.dataplane.error_handling import ErrorContext, context_headers
from connect_lite.pipeline.plugin_calls import FAILED, Failures, apply_transforms
from connect_lite.pipeline.record_errors import TRANSFORMATION, capture
from connect_lite.plugins.registry import Plugins
from tests.chain_config import chain_config


class _ThirdPartyTransform:
    pass


def test_a_failing_builtin_transform_is_named_as_kafka_names_it() -> None:
    """The DLQ header __connect.errors.class.name and the error log line carry it."""
    config = {
        "transforms": "pick",
        "transforms.pick.type": "ExtractField$Value",
        "transforms.pick.field": "id",
    }
    [(make, _, _)] = transform_chain(Plugins([]), chain_config(config))
    failures = Failures()
    record = SourceRecord(None, None, "t", 42)  # not a map: ExtractField fails
    assert apply_transforms([(make(), None, False)], record, 0, failures) is FAILED
    error = failures[0]
    assert (error.stage, error.component) == (
        TRANSFORMATION,
        "org.apache.kafka.connect.transforms.ExtractField$Value",
    )
    headers = dict(context_headers(ErrorContext.of(error), "c", 0))
    assert headers["__connect.errors.class.name"] == error.component.encode()


def test_other_plugins_are_named_by_their_python_names() -> None:
    failed = capture(ValueError("x"), 0, TRANSFORMATION, _ThirdPartyTransform())
    assert failed.component == f"{__name__}._ThirdPartyTransform"
    assert capture(ValueError("x"), 0, TRANSFORMATION, "given.Name").component == "given.Name"
