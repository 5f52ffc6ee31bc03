"""A connector config for tests that build a transform chain from a few transforms.* keys."""

from __future__ import annotations

from connect_lite.config.connector_config import ConnectorConfig


def chain_config(config: dict[str, str]) -> ConnectorConfig:
    """``config`` as a source connector's typed config, with a name and class filled in."""
    return ConnectorConfig({"name": "chain", "connector.class": "X", **config}, "source")
