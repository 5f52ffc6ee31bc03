"""KIP-891 version keys in validation, against the real registry and the versioned test plugin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connect_lite.config.validation import validate_connector_config
from connect_lite.config.worker import WorkerConfig
from connect_lite.control import components
from connect_lite.plugins.registry import Plugins

PLUGINS = str(Path(__file__).resolve().parents[2] / "plugins")
SOURCE = "acme_versioned.VersionedSourceConnector"
CONVERTER = "acme_versioned.VersionedConverter"
BROKER = {"bootstrap.servers": "127.0.0.1:9092"}


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins([PLUGINS])


def _configs(plugins: Plugins, worker: WorkerConfig, config: dict[str, Any]) -> dict[str, Any]:
    infos = validate_connector_config(plugins, worker, config)
    return {c["value"]["name"]: c["value"] for c in infos.configs if c["value"]}


def test_every_version_key_recommends_the_installed_versions_lowest_first(
    plugins: Plugins,
) -> None:
    """Kafka's recommenders list a sorted plugin set: ascending, each version once."""
    config = {
        "connector.class": SOURCE,
        "key.converter": CONVERTER,
        "value.converter": CONVERTER,
        "header.converter": "acme_versioned.VersionedHeaderConverter",
        "transforms": "t",
        "transforms.t.type": "acme_versioned.VersionedTransformation",
        "transforms.t.predicate": "p",
        "predicates": "p",
        "predicates.p.type": "acme_versioned.VersionedPredicate",
    }
    configs = _configs(plugins, WorkerConfig(BROKER), config)
    for key in (
        "connector.plugin.version",
        "key.converter.plugin.version",
        "value.converter.plugin.version",
        "header.converter.plugin.version",
        "transforms.t.plugin.version",
        "predicates.p.plugin.version",
    ):
        assert configs[key]["recommended_values"] == ["1.0.0", "2.0.0", "3.0.0"], key
        assert configs[key]["errors"] == [], key


def test_an_invalid_worker_version_key_fails_only_connectors_that_inherit_it(
    plugins: Plugins,
) -> None:
    worker = WorkerConfig(
        {**BROKER, "value.converter": CONVERTER, "value.converter.plugin.version": "[9.0"}
    )  # the worker config itself is accepted
    inherits = _configs(plugins, worker, {"connector.class": SOURCE})
    assert inherits["value.converter.plugin.version"]["errors"] == ["Unbounded range: [9.0"]
    with pytest.raises(Exception, match="Unbounded range"):
        components.converter_factory(plugins, "value", {}, worker.raw)
    own = {"connector.class": SOURCE, "value.converter": CONVERTER}
    assert _configs(plugins, worker, own)["value.converter.plugin.version"]["errors"] == []
    factory = components.converter_factory(plugins, "value", own, worker.raw)
    assert factory().version() == "3.0.0"


def test_a_connector_version_key_without_its_class_is_ignored(plugins: Plugins) -> None:
    worker = WorkerConfig({**BROKER, "value.converter": CONVERTER})
    config = {"connector.class": SOURCE, "value.converter.plugin.version": "1.0.0"}
    assert components.converter_factory(plugins, "value", config, worker.raw)().version() == (
        "3.0.0"
    )
    pinned = {**config, "value.converter": CONVERTER}
    assert components.converter_factory(plugins, "value", pinned, worker.raw)().version() == (
        "1.0.0"
    )


def test_worker_version_key_selects_the_default_converter(plugins: Plugins) -> None:
    worker = WorkerConfig(
        {**BROKER, "value.converter": CONVERTER, "value.converter.plugin.version": "2.0"}
    )
    factory = components.converter_factory(plugins, "value", {}, worker.raw)
    assert factory().version() == "2.0.0"
    configs = _configs(plugins, worker, {"connector.class": SOURCE})
    assert configs["value.converter.plugin.version"]["value"] == "2.0"
    assert configs["value.converter.plugin.version"]["errors"] == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("[1.0", "Unbounded range: [1.0"),
        ("[3.0,1.0]", "Range defies version ordering: [3.0,1.0]"),
        ("(,1.0],[1.2,)x", "Only fully-qualified sets allowed in multiple set scenario"),
    ],
)
def test_a_malformed_connector_version_is_an_error_on_its_key(
    plugins: Plugins, spec: str, message: str
) -> None:
    from connect_lite.api.errors import BadRequestError
    from connect_lite.config.validation import ensure_valid_connector_config

    worker = WorkerConfig(BROKER)
    config = {"name": "v", "connector.class": SOURCE, "connector.plugin.version": spec}
    infos = validate_connector_config(plugins, worker, config)
    by_name = {c["value"]["name"]: c for c in infos.configs if c["value"]}
    version = by_name["connector.plugin.version"]
    assert infos.error_count == 1
    assert version["value"]["errors"][0].startswith(message)
    assert by_name["connector.class"]["value"]["errors"] == []
    # the definition shows the newest installed version as the default, as Kafka's does
    assert version["definition"]["default_value"] == "3.0.0"
    assert version["value"]["recommended_values"] == ["1.0.0", "2.0.0", "3.0.0"]  # as Kafka
    with pytest.raises(BadRequestError, match="contains the following 1 error"):
        ensure_valid_connector_config(plugins, worker, config)


def test_validate_shows_the_newest_installed_connector_version_as_default(
    plugins: Plugins,
) -> None:
    infos = validate_connector_config(plugins, WorkerConfig(BROKER), {"connector.class": SOURCE})
    [version] = [c for c in infos.configs if c["definition"]["name"] == "connector.plugin.version"]
    assert version["definition"]["default_value"] == "3.0.0"
