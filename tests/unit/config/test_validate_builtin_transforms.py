"""/config/validate with Kafka's built-in transforms and predicates (the real registry)."""

from __future__ import annotations

from pathlib import Path

from connect_lite.config.validation import validate_connector_config
from connect_lite.config.worker import WorkerConfig
from connect_lite.plugins.registry import Plugins

PLUGINS = Plugins([str(Path(__file__).resolve().parents[3] / "plugins")])
SOURCE = {
    "name": "src",
    "connector.class": "FileStreamSource",
    "file": "/tmp/in.txt",
    "topic": "t",
}


def _errors(config: dict[str, str]) -> dict[str, list[str]]:
    infos = validate_connector_config(
        PLUGINS,
        WorkerConfig({"bootstrap.servers": "x:1", "connector.allowed.paths": "/tmp"}),
        config,
    )
    return {c["value"]["name"]: c["value"]["errors"] for c in infos.configs if c["value"]["errors"]}


def test_embedded_validators_name_the_plugins_own_key() -> None:
    """As Kafka's ConfigDef.embed: the message names ``pattern``, not the prefixed key."""
    errors = _errors(
        {
            **SOURCE,
            "transforms": "drop",
            "transforms.drop.type": "org.apache.kafka.connect.transforms.Filter",
            "transforms.drop.predicate": "p",
            "predicates": "p",
            "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
            "predicates.p.pattern": "[",
        }
    )
    assert list(errors) == ["predicates.p.pattern"]
    assert errors["predicates.p.pattern"][0].startswith(
        "Invalid value [ for configuration pattern:"
    )


def test_a_valid_kafka_chain_has_no_errors() -> None:
    assert not _errors(
        {
            **SOURCE,
            "transforms": "route,insert",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": "(.*)",
            "transforms.route.replacement": "$1-x",
            "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertHeader",
            "transforms.insert.header": "h",
            "transforms.insert.value.literal": "v",
        }
    )
