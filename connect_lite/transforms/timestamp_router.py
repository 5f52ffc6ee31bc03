"""TimestampRouter: renames a record's topic from its topic and timestamp (Kafka's transform).

``topic.format`` holds ``${topic}`` and ``${timestamp}``; the timestamp is the record's,
formatted in UTC with the ``timestamp.format`` SimpleDateFormat pattern, so records can be
routed to time-bucketed topics such as ``orders-20240131``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from connect_lite.api import ConfigDef, ConfigError, DataError, Importance, Type
from connect_lite.api.column_form import ColumnFrame, FormatMillis, Lit, ReplaceText
from connect_lite.api.config import invalid
from connect_lite.transforms.base import BuiltinTransformation, kafka_class, updated
from connect_lite.transforms.java_time import JavaDateFormat, PatternError

TOPIC_FORMAT_CONFIG = "topic.format"
TIMESTAMP_FORMAT_CONFIG = "timestamp.format"


class TimestampRouter(BuiltinTransformation):
    """Kafka's TimestampRouter; a record without a timestamp is a DataError."""

    __connect_class_name__ = kafka_class("TimestampRouter")

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define(
                TOPIC_FORMAT_CONFIG,
                Type.STRING,
                "${topic}-${timestamp}",
                importance=Importance.HIGH,
                doc="Format string which can contain <code>${topic}</code> and "
                "<code>${timestamp}</code> as placeholders for the topic and timestamp, "
                "respectively.",
            )
            .define(
                TIMESTAMP_FORMAT_CONFIG,
                Type.STRING,
                "yyyyMMdd",
                importance=Importance.HIGH,
                doc="Format string for the timestamp that is compatible with "
                "<code>java.text.SimpleDateFormat</code>.",
            )
        )

    def configure(self, config: dict[str, str]) -> None:
        self.settings = self.config().parse(config)
        self._topic_format: str = self.settings[TOPIC_FORMAT_CONFIG]
        pattern = self.settings[TIMESTAMP_FORMAT_CONFIG]
        try:
            # Kafka only notices a bad pattern on the first record; failing here is clearer.
            self._timestamp_format = JavaDateFormat(pattern)
        except PatternError as error:
            raise ConfigError(invalid(TIMESTAMP_FORMAT_CONFIG, pattern, str(error))) from None

    def apply(self, record: Any) -> Any:
        if record.timestamp is None:
            raise DataError(
                f"Timestamp missing on record from topic {record.topic}"
                + (
                    ""
                    if getattr(record, "kafka_offset", None) is None
                    else f" at offset {record.kafka_offset}"
                )
            )
        try:
            formatted = self._timestamp_format.format(record.timestamp)
        except ValueError as error:
            raise DataError(str(error)) from None
        # Kafka replaces ${topic} first, then ${timestamp} in the result, both literally.
        topic = self._topic_format.replace("${topic}", record.topic)
        return updated(record, topic=topic.replace("${timestamp}", formatted))

    def column_form(self, frame: ColumnFrame, out: Any) -> ColumnFrame | None:
        formatted = FormatMillis(frame.cols["timestamp"], self.settings[TIMESTAMP_FORMAT_CONFIG])
        # Java's String.replace, twice, in Kafka's order: ${topic} first, then ${timestamp}.
        topic = ReplaceText(Lit(self._topic_format), "${topic}", frame.cols["topic"])
        topic = ReplaceText(topic, "${timestamp}", formatted)
        return dataclasses.replace(frame.with_column("topic", topic), needs_timestamp=True)


__all__ = ["TimestampRouter"]
