"""Configuration: worker config, .properties files, connector framework configs, validation."""

from connect_lite.config.connector_config import ConnectorConfig
from connect_lite.config.framework import (
    check_connector_name,
    connector_config_def,
    sink_config_def,
    source_config_def,
)
from connect_lite.config.properties import load_connector_file, load_properties, parse_properties
from connect_lite.config.validation import (
    ensure_valid_connector_config,
    invalid_config_message,
    plugin_config_keys,
    validate_connector_config,
)
from connect_lite.config.worker import WORKER_CONFIG_DEF, WorkerConfig, worker_config_markdown

__all__ = [
    "WORKER_CONFIG_DEF",
    "ConnectorConfig",
    "WorkerConfig",
    "check_connector_name",
    "connector_config_def",
    "ensure_valid_connector_config",
    "invalid_config_message",
    "load_connector_file",
    "load_properties",
    "parse_properties",
    "plugin_config_keys",
    "sink_config_def",
    "source_config_def",
    "validate_connector_config",
    "worker_config_markdown",
]
