"""The docs site builds with ``mkdocs build --strict`` (the development page's command), and
what docs/hooks/generated.py writes into it is complete: every worker and connector key, every
route of the OpenAPI document, every name of the plugin API."""

from __future__ import annotations

import functools
import html
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import connect_lite.api
from connect_lite.config import framework
from connect_lite.config.worker import WORKER_CONFIG_DEF, worker_config_markdown
from connect_lite.rest.app import create_app
from connect_lite.rest.openapi import document
from tests.file_modules import load_file
from tests.unit.docs.doc_blocks import block

REPO = Path(__file__).resolve().parents[3]
MKDOCS = Path(sys.executable).with_name("mkdocs")


@functools.cache
def hooks() -> ModuleType:
    """docs/hooks/generated.py, the MkDocs hook (not a package: loaded from its file)."""
    return load_file("docs_hooks", REPO / "docs/hooks/generated.py")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built by the command of docs/development.md into a temporary directory."""
    command = block("docs-build").text.strip()
    assert command == ".venv/bin/mkdocs build --strict"
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    return out


def page_text(site: Path, name: str) -> str:
    """A built page's text, tags removed and entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", (site / name / "index.html").read_text()))


def test_every_page_of_the_nav_is_built(site: Path) -> None:
    nav = re.findall(r":\s*([\w-]+)\.md$", (REPO / "mkdocs.yml").read_text(), re.M)
    assert len(nav) >= 20
    missing = [n for n in nav if not (site / ("" if n == "index" else n) / "index.html").exists()]
    assert missing == []


def test_no_marker_is_left_unfilled(site: Path) -> None:
    left = [p for p in site.rglob("*.html") if "<!-- generated:" in p.read_text()]
    assert left == []


def test_the_configuration_page_has_every_key(site: Path) -> None:
    text = page_text(site, "configuration")
    connector_keys = {
        *framework.source_config_def().keys,
        *framework.sink_config_def().keys,
    }
    missing = [key for key in [*WORKER_CONFIG_DEF.keys, *connector_keys] if key not in text]
    assert missing == []


def test_the_rest_api_page_has_every_route(site: Path) -> None:
    text = page_text(site, "rest-api")
    paths = document(create_app(None, None))["paths"]  # type: ignore[arg-type]  # no herder needed
    missing = [
        f"{method.upper()} {path}"
        for path, item in paths.items()
        for method in item
        if method != "parameters" and f"{method.upper()} {path}" not in text
    ]
    assert missing == []


def test_the_plugin_api_page_documents_every_public_name(site: Path) -> None:
    built = (site / "plugin-api" / "index.html").read_text()
    missing = [n for n in connect_lite.api.__all__ if f'id="connect_lite.api.{n}"' not in built]
    assert missing == []


def test_the_worker_key_table_is_the_declarations() -> None:
    assert hooks().generate("<!-- generated: worker-keys -->") == worker_config_markdown().strip()


def test_a_marker_is_replaced_at_its_indent_and_an_unknown_one_fails() -> None:
    filled = hooks().generate("- keys:\n\n    <!-- generated: new-worker-keys -->\n")
    assert "\n    - `log.format`\n" in filled
    with pytest.raises(KeyError, match="no-such"):
        hooks().generate("<!-- generated: no-such -->")


def test_source_and_sink_tables_hold_only_their_own_keys() -> None:
    common = set(framework.connector_config_def().keys)
    for table in (hooks().source_keys(), hooks().sink_keys()):
        keys = set(re.findall(r"^\| `([^`]+)` \|", table, re.M))
        assert keys and not keys & common
