"""A connector's errors.* settings, parsed: retries, tolerance, the error log, the dead letter
queue (Kafka's ConnectorConfig and SinkConnectorConfig accessors)."""

from __future__ import annotations

from dataclasses import dataclass

from connect_lite.config.connector_config import ConnectorConfig


@dataclass(frozen=True)
class ErrorHandling:
    """The errors.* settings of one connector, parsed (Kafka's ConnectorConfig accessors)."""

    tolerance_all: bool = False
    retry_timeout_ms: int = 0
    retry_delay_max_ms: int = 60000
    log_enable: bool = False
    log_include_messages: bool = False
    dlq_topic: str | None = None
    dlq_replication_factor: int = 3
    dlq_context_headers: bool = False

    @classmethod
    def from_config(cls, config: ConnectorConfig) -> ErrorHandling:
        """The settings of a connector's config; sources have no dead letter queue."""
        sink = config.connector_type == "sink"
        return cls(
            tolerance_all=config.errors_tolerance_all,
            retry_timeout_ms=config.errors_retry_timeout_ms,
            retry_delay_max_ms=config.errors_retry_delay_max_ms,
            log_enable=config.errors_log_enable,
            log_include_messages=config.errors_log_include_messages,
            dlq_topic=config.dlq_topic if sink else None,
            dlq_replication_factor=config.dlq_replication_factor if sink else 3,
            dlq_context_headers=config.dlq_context_headers_enable if sink else False,
        )

    @property
    def errant_record_reporter_enabled(self) -> bool:
        """Kafka's SinkConnectorConfig.enableErrantRecordReporter: a DLQ or the error log."""
        return bool(self.dlq_topic) or self.log_enable


NO_ERROR_HANDLING = ErrorHandling()
"""Kafka's defaults: no retries, no tolerance, no error log, no dead letter queue."""


__all__ = ["NO_ERROR_HANDLING", "ErrorHandling"]
