"""docs/compatibility.md stays true to the code.

The list of new worker keys is generated from the worker's ConfigDef when the site is built
(docs/hooks/generated.py); these tests check the rest against the code: the replaced Kafka
keys, the defaults and versions it names, the exit codes, the REST extensions, and that it
does not call built what is built. The behaviour it describes (a RetriableError from ``put``
hands the records over again, and so on) has tests of its own in tests/unit/runtime/ and
tests/integration/.
"""

from __future__ import annotations

import re
from pathlib import Path

from connect_lite import cli
from connect_lite.api import SinkTask
from connect_lite.config.worker import (
    DEFAULT_LISTENER,
    JSON_CONVERTER,
    REPLACED_KAFKA_KEYS,
    WORKER_CONFIG_DEF,
)
from connect_lite.rest.app import create_app
from connect_lite.rest.openapi import EXTENSION, document
from tests.unit.docs.test_site import hooks

REPO = Path(__file__).resolve().parents[3]
COMPATIBILITY = (REPO / "docs" / "compatibility.md").read_text()


def section(title: str) -> str:
    """The text of the ``## title`` section."""
    return COMPATIBILITY.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_every_kafka_key_connect_lite_replaces_is_listed_with_its_replacement() -> None:
    table = COMPATIBILITY.split("| Kafka key | connect-lite |", 1)[1].split("\n\n", 1)[0]
    rows = {line.strip() for line in table.splitlines() if line.strip().startswith("| `")}
    for key, replaced in REPLACED_KAFKA_KEYS.items():
        row = [r for r in rows if f"`{key}`" in r.split(" | ")[0]]
        assert len(row) == 1, key
        assert replaced.replacement in row[0].split(" | ", 1)[1], key


def test_the_new_worker_keys_are_generated_from_the_declaration() -> None:
    assert "<!-- generated: new-worker-keys -->" in section("Worker configuration")
    listed = re.findall(r"^- `(.+)`$", hooks().new_worker_keys(), re.M)
    assert {"plugin.modules", "data.plane.niceness", "log.format", "connector.allowed.paths"} <= (
        set(listed)
    )
    assert set(listed) | hooks().KAFKA_WORKER_KEYS == set(WORKER_CONFIG_DEF.keys)


def test_the_kafka_keys_the_generator_knows_are_declared() -> None:
    assert set(WORKER_CONFIG_DEF.keys) >= hooks().KAFKA_WORKER_KEYS


def test_the_kafka_version_it_names_is_the_one_get_root_answers() -> None:
    named = re.search(r"\(version `([\d.]+)` in `GET /`\)", COMPATIBILITY)
    assert named is not None
    sources = "\n".join(p.read_text() for p in (REPO / "connect_lite").rglob("*.py"))
    assert f'KAFKA_API_VERSION = "{named.group(1)}"' in sources


def test_the_defaults_it_names() -> None:
    assert f"`listeners` defaults to `{DEFAULT_LISTENER}`" in COMPATIBILITY
    for key in ("key.converter", "value.converter"):
        assert WORKER_CONFIG_DEF.keys[key].default == JSON_CONVERTER
    assert "`key.converter` and `value.converter` default to `JsonConverter`" in COMPATIBILITY


def test_the_exit_codes_it_names() -> None:
    text = " ".join(section("Start-up and the command line").split())
    codes = (
        f"{cli.EXIT_USAGE} usage or an unreadable file, "
        f"{cli.EXIT_STARTUP_FAILED} start-up failure, "
        f"{cli.EXIT_CONNECTOR_FILE_FAILED} a connector file is invalid"
    )
    assert codes in text


def test_the_rest_extensions_it_names_are_marked_in_the_openapi_document() -> None:
    paths = document(create_app(None, None))["paths"]  # type: ignore[arg-type]  # no herder needed
    for path in ("/metrics", "/openapi.json", "/ui"):
        assert f"`GET {path}`" in section("REST API")
        assert paths[path]["get"][EXTENSION] is True


def test_what_is_built_is_not_listed_as_not_built() -> None:
    assert callable(getattr(SinkTask, "put_dataframe", None))
    not_built = section("Not built")
    assert "Spark-native" not in not_built
    assert "RetriableError" not in not_built
