"""GET /ui: the status page and its assets, their headers, and what the page may reference."""

from __future__ import annotations

import base64
import fnmatch
import re
import tomllib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from flask.testing import FlaskClient

from connect_lite.config.rest_security import RestSecurity
from connect_lite.logs.loggers import Loggers
from connect_lite.rest import create_app
from connect_lite.rest.edge import LOOPBACK_ENVIRON
from connect_lite.rest.ui import ASSETS

from .fake_herder import FakeHerder
from .helpers import error

REPO = Path(__file__).resolve().parents[3]
STATIC = REPO / "connect_lite" / "rest" / "ui_static"
SVG_NAMESPACE = "http://www.w3.org/2000/svg"
"""An XML namespace name (in favicon.svg and app.js's createElementNS), never fetched."""
USERS = {"alice": "s3cret", "bob": "hunter2"}


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


class Page(HTMLParser):
    """The elements of the page, as (tag, attributes) pairs, and the text inside scripts."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.script_text = ""
        self._in_script = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.script_text += data.strip()

    def all(self, *tags: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag in tags]


def page(client: FlaskClient) -> Page:
    return Page(client.get("/ui").get_data(as_text=True))


def test_the_page_is_html_with_a_strict_content_security_policy(client: FlaskClient) -> None:
    response = client.get("/ui")
    assert response.status_code == 200
    assert response.content_type == "text/html; charset=utf-8"
    policy = response.headers["Content-Security-Policy"]
    assert policy.startswith("default-src 'self';")
    assert "unsafe" not in policy  # no inline script or style, no eval
    assert "frame-ancestors 'none'" in policy
    assert response.headers["Cache-Control"] == "no-cache"
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_the_page_has_no_inline_script_style_or_handlers(client: FlaskClient) -> None:
    found = page(client)
    assert found.script_text == ""
    assert [attrs["src"] for attrs in found.all("script")] == ["ui/sparklines.js", "ui/app.js"]
    assert found.all("style") == []
    for tag, attrs in found.elements:
        assert "style" not in attrs, tag
        assert not [name for name in attrs if name.startswith("on")], tag


def test_the_scripts_build_the_dom_without_parsing_html() -> None:
    """Connector names, traces and error messages reach the page as text only."""
    for script in ("app.js", "sparklines.js"):
        source = (STATIC / script).read_text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert sink not in source, (script, sink)


def test_the_page_has_a_language_one_h1_and_labelled_controls(client: FlaskClient) -> None:
    found = page(client)
    assert found.all("html") == [{"lang": "en"}]
    assert len(found.all("h1")) == 1
    labelled = {attrs["for"] for attrs in found.all("label")}
    controls = found.all("input", "select", "textarea")
    assert controls
    for attrs in controls:
        assert attrs.get("id") in labelled or attrs.get("aria-label"), attrs
    for attrs in found.all("dialog"):
        assert attrs.get("aria-labelledby"), attrs


def test_the_scripts_name_every_button_they_make() -> None:
    source = (STATIC / "app.js").read_text()
    made = re.findall(r'button\("([\w-]+)", "(\w+)", `([^`]+)`', source)
    assert {action for action, _, _ in made} == {
        "pause",
        "resume",
        "stop",
        "restart",
        "delete",
        "restart-task",
    }
    for _, text, label in made:
        assert label.startswith(text)  # the accessible name contains the visible text


@pytest.mark.parametrize("name", sorted(ASSETS))
def test_each_asset_is_served_with_its_type_and_revalidated(client: FlaskClient, name: str) -> None:
    response = client.get(f"/ui/{name}")
    assert response.status_code == 200
    assert response.content_type == ASSETS[name]
    assert response.get_data() == (STATIC / name).read_bytes()
    assert response.headers["Cache-Control"] == "no-cache"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    etag = response.headers["ETag"]
    again = client.get(f"/ui/{name}", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.get_data() == b""


def test_every_file_of_the_page_is_package_data_and_served() -> None:
    """An installed wheel has the page: pyproject's package data covers each file, and each
    file but the page itself is an asset (nothing is shipped that is not served)."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["connect_lite.rest"]
    files = sorted(path.name for path in STATIC.iterdir())
    for name in files:
        assert any(fnmatch.fnmatch(f"ui_static/{name}", p) for p in patterns), name
    assert files == sorted({*ASSETS, "index.html"})


@pytest.mark.parametrize("path", ["/ui/nothing.js", "/ui/index.html", "/ui/app.js/x"])
def test_an_unknown_asset_is_the_apis_404(client: FlaskClient, path: str) -> None:
    error(client.get(path), 404, "HTTP 404 Not Found")


@pytest.mark.parametrize(
    "path",
    [
        "/ui/../app.py",
        "/ui/%2e%2e/app.py",
        "/ui/%2E%2E%2Fapp.py",
        "/ui/..%2f..%2fpyproject.toml",
        "/ui/../ui.py",
        "/ui/./app.js",
        "/ui/ui_static/app.js",
    ],
)
def test_no_path_reaches_another_file(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    error(response, 404, "HTTP 404 Not Found")


def test_a_trailing_slash_redirects_to_the_page(client: FlaskClient) -> None:
    """The page's URLs are relative to /ui; under /ui/ they would point one level too deep."""
    response = client.get("/ui/")
    assert response.status_code == 308
    assert response.headers["Location"] == "../ui"
    assert urljoin("http://localhost/ui/", response.headers["Location"]) == "http://localhost/ui"


def test_the_page_references_only_its_own_assets(client: FlaskClient) -> None:
    references = [
        value
        for attrs in page(client).all("link", "script", "img", "a")
        for key in ("href", "src")
        if (value := attrs.get(key))
    ]
    assert references
    for reference in references:
        parts = urlsplit(reference)
        assert not parts.scheme and not parts.netloc and not reference.startswith("/"), reference
        resolved = urlsplit(urljoin("http://localhost/ui", reference)).path
        assert client.get(resolved).status_code == 200, reference


def test_no_file_of_the_page_names_another_origin() -> None:
    """No CDN, no absolute URL (which would also break behind TLS or a proxy)."""
    protocol_relative = re.compile(r"""(?:src|href)\s*=\s*["']//|url\(\s*["']?//|@import""")
    for path in sorted(STATIC.iterdir()):
        text = path.read_text()
        assert set(re.findall(r"https?://[^\s\"'`)>]+", text)) <= {SVG_NAMESPACE}, path.name
        assert not protocol_relative.search(text), path.name


def test_behind_basic_auth_the_page_and_assets_need_credentials(
    herder: FakeHerder, loggers: Loggers
) -> None:
    client = create_app(herder, loggers, RestSecurity(credentials=USERS)).test_client()
    for path in ("/ui", "/ui/app.js", "/ui/style.css", "/ui/nothing.js"):
        refused = client.get(path)
        assert refused.status_code == 401, path
        assert refused.headers["WWW-Authenticate"] == 'Basic realm="connect-lite"'
    assert client.get("/ui", headers=basic("alice", "wrong")).status_code == 401
    allowed = client.get("/ui", headers=basic("alice", "s3cret"))
    assert allowed.status_code == 200
    assert allowed.content_type == "text/html; charset=utf-8"
    assert client.get("/ui/app.js", headers=basic("bob", "hunter2")).status_code == 200


def test_on_a_loopback_listener_the_page_passes_the_host_check(
    herder: FakeHerder, loggers: Loggers
) -> None:
    client = create_app(herder, loggers, RestSecurity()).test_client()
    flagged = {LOOPBACK_ENVIRON: True}
    ok = client.get("/ui", headers={"Host": "127.0.0.1:8083"}, environ_base=flagged)
    assert ok.status_code == 200
    rebound = client.get("/ui/app.js", headers={"Host": "attacker.example"}, environ_base=flagged)
    assert rebound.status_code == 403


def test_the_buttons_calls_need_no_body(client: FlaskClient, with_connector: str) -> None:
    """What the page's buttons send, as a browser sends it: no body and no Content-Type (a
    browser sends Content-Length: 0 on a bodiless PUT or POST). The edge lets them through."""
    calls = [
        ("PUT", f"/connectors/{with_connector}/pause", 202),
        ("PUT", f"/connectors/{with_connector}/resume", 202),
        ("PUT", f"/connectors/{with_connector}/stop", 204),
        ("POST", f"/connectors/{with_connector}/restart?includeTasks=true&onlyFailed=false", 202),
        ("POST", f"/connectors/{with_connector}/tasks/0/restart", 204),
        ("DELETE", f"/connectors/{with_connector}", 204),
    ]
    for method, path, status in calls:
        response = client.open(path, method=method, headers={"Content-Length": "0"})
        assert response.status_code == status, (method, path, response.get_json())
