"""The status page (``GET /ui``) in a real headless Chromium against a real worker.

The worker serves https with basic auth, as it would on a network, and plain http on loopback
for the test's own REST calls. Connectors are created through the REST API and watched, paused,
resumed and deleted through the page. ``CONNECT_LITE_UI_SCREENSHOT=docs/ui.png`` saves the
README's screenshot from the last test.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Locator, Page, expect
from playwright.sync_api import Error as PlaywrightError

from connect_lite.testing import EmbeddedConnect, free_port, wait_for
from tests.integration.testkit import (
    create_running,
    sink_config,
    source_config,
    unique,
    worker_options,
)
from tests.tls_certs import make_pki

pytestmark = pytest.mark.integration

USER, SECRET = "operator", "ui-s3cret"
TIMEOUT_MS = 60_000


class Guarded:
    """A worker behind TLS and basic auth, and the https address of its status page."""

    def __init__(self, worker: EmbeddedConnect, https_port: int) -> None:
        self.worker = worker
        self.page_url = f"https://127.0.0.1:{https_port}/ui?interval=500"


@pytest.fixture(scope="module")
def guarded(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guarded]:
    workdir = tmp_path_factory.mktemp("status-page")
    pki = make_pki(workdir / "pki")
    credentials = workdir / "credentials.properties"
    credentials.write_text(f"{USER}={SECRET}\n")
    http_port, https_port = free_port(), free_port()
    extra = {
        "listeners": f"http://127.0.0.1:{http_port},https://127.0.0.1:{https_port}",
        "listeners.https.ssl.keystore.type": "PEM",
        "listeners.https.ssl.keystore.location": str(pki.server_pem),
        "rest.basic.auth.credentials.file": str(credentials),
    }
    options = worker_options(workdir=workdir, worker_properties=extra, rest_auth=(USER, SECRET))
    with EmbeddedConnect(bootstrap_servers=bootstrap_servers, **options) as worker:
        assert worker.rest_url == f"http://127.0.0.1:{http_port}"
        yield Guarded(worker, https_port)


@pytest.fixture(autouse=True)
def clean(guarded: Guarded) -> Iterator[None]:
    """Each test's connectors are deleted after it, so none loads the machine for the next."""
    yield
    rest = guarded.worker.http
    for name in rest.get("/connectors").body:
        assert rest.delete(f"/connectors/{name}").status == 204


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A browser profile that knows the password; the test certificate is self-signed."""
    profile = browser.new_context(
        http_credentials={"username": USER, "password": SECRET},
        ignore_https_errors=True,
        viewport={"width": 1280, "height": 900},
    )
    try:
        yield profile
    finally:
        profile.close()


@pytest.fixture
def page(context: BrowserContext, guarded: Guarded) -> Iterator[Page]:
    """The status page, loaded; it fails the test if its script throws or logs an error."""
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
    opened.on("console", lambda message: _script_error(message, problems))
    response = opened.goto(guarded.page_url)
    assert response is not None and response.status == 200
    expect(opened.locator("#connectors")).not_to_have_attribute("data-polls", "0")
    yield opened
    opened.close()
    assert not problems, problems


def _script_error(message: ConsoleMessage, problems: list[str]) -> None:
    # Chromium itself logs every HTTP error answer as "Failed to load resource"; the page shows
    # those in its status line. Anything else at error level comes from the page's script.
    if message.type == "error" and "Failed to load resource" not in message.text:
        problems.append(message.text)


def card(page: Page, name: str) -> Locator:
    return page.locator(f'article.connector[data-connector="{name}"]')


def test_without_the_password_the_page_is_refused(browser: Browser, guarded: Guarded) -> None:
    anonymous = browser.new_context(ignore_https_errors=True)
    try:
        # Challenged for a password it does not have, headless Chromium gives up on the page.
        with pytest.raises(PlaywrightError, match="ERR_INVALID_AUTH_CREDENTIALS"):
            anonymous.new_page().goto(guarded.page_url)
        answer = anonymous.request.get(guarded.page_url)
        assert answer.status == 401
        assert answer.headers["www-authenticate"].startswith("Basic")
    finally:
        anonymous.close()


def test_a_connector_created_through_the_api_appears_with_its_state(
    page: Page, guarded: Guarded, tmp_path: Path
) -> None:
    topic = unique("ui-appears")
    name = create_running(
        guarded.worker, "ui-src", source_config(topic, **{"poll.interval.ms": "50"})
    )
    shown = card(page, name)
    expect(shown).to_be_visible(timeout=TIMEOUT_MS)
    expect(shown.locator("[data-role=connector-state]")).to_have_text("RUNNING")
    expect(shown.locator("[data-role=connector-type]")).to_contain_text("source")
    expect(shown.locator('tr[data-task="0"] [data-role=task-state]')).to_have_text("RUNNING")

    page.fill("#filter", "no-such-connector")
    expect(shown).to_be_hidden()
    page.fill("#filter", name)
    expect(shown).to_be_visible()


def test_pause_and_resume_through_the_page(page: Page, guarded: Guarded) -> None:
    rest = guarded.worker.http
    name = create_running(guarded.worker, "ui-pause", source_config(unique("ui-pause")))
    shown = card(page, name)
    state = shown.locator("[data-role=connector-state]")
    expect(state).to_have_text("RUNNING", timeout=TIMEOUT_MS)

    shown.locator("[data-action=pause]").click()
    expect(state).to_have_text("PAUSED", timeout=TIMEOUT_MS)
    wait_for(lambda: rest.get(f"/connectors/{name}/status").body["connector"]["state"] == "PAUSED")

    shown.locator("[data-action=resume]").focus()
    page.keyboard.press("Enter")  # the buttons work by keyboard too
    expect(state).to_have_text("RUNNING", timeout=TIMEOUT_MS)
    assert rest.get(f"/connectors/{name}/status").body["connector"]["state"] == "RUNNING"


def test_a_throughput_chart_receives_data(page: Page, guarded: Guarded) -> None:
    name = create_running(
        guarded.worker, "ui-chart", source_config(unique("ui-chart"), **{"poll.interval.ms": "20"})
    )
    chart = page.locator(f'svg[data-chart=throughput][data-connector="{name}"]')
    expect(chart).to_be_visible(timeout=TIMEOUT_MS)

    def drawn() -> bool:
        points = int(chart.get_attribute("data-points") or "0")
        return points >= 2 and _peak(chart) > 0

    wait_for(drawn, timeout=60, what="a throughput chart with data")
    assert chart.locator("polyline").count() == 1


def _peak(chart: Locator) -> float:
    """The peak rate a chart's text alternative states ("... records/s (peak 12.5)")."""
    found = re.search(r"peak ([\d.,]+)", chart.locator("title").text_content() or "")
    return float(found.group(1).replace(",", "")) if found else 0.0


def test_delete_asks_first_and_cancel_keeps_the_connector(page: Page, guarded: Guarded) -> None:
    rest = guarded.worker.http
    name = create_running(guarded.worker, "ui-delete", source_config(unique("ui-delete")))
    shown = card(page, name)
    expect(shown).to_be_visible(timeout=TIMEOUT_MS)
    dialog = page.locator("#confirm-dialog")

    shown.locator("[data-action=delete]").click()
    expect(dialog).to_be_visible()
    expect(page.locator("#confirm-text")).to_contain_text(name)
    dialog.locator("[data-action=cancel-delete]").click()
    expect(dialog).to_be_hidden()
    polls = int(page.locator("#connectors").get_attribute("data-polls") or "0")
    wait_for(lambda: int(page.locator("#connectors").get_attribute("data-polls") or "0") > polls)
    assert rest.get(f"/connectors/{name}").status == 200
    expect(shown).to_be_visible()  # still on the page after a poll

    shown.locator("[data-action=delete]").click()
    dialog.locator("[data-action=confirm-delete]").click()
    expect(shown).to_have_count(0, timeout=TIMEOUT_MS)
    assert rest.get(f"/connectors/{name}").status == 404


def test_offsets_and_active_topics_are_shown(page: Page, guarded: Guarded) -> None:
    topic = unique("ui-offsets")
    name = create_running(guarded.worker, "ui-offsets", source_config(topic))
    shown = card(page, name)
    wait_for(lambda: guarded.worker.http.get(f"/connectors/{name}/topics").body[name]["topics"])
    details = shown.locator("details[data-role=connector-details]")
    details.locator("summary").click()
    expect(details.locator("[data-role=topics]")).to_contain_text(topic, timeout=TIMEOUT_MS)
    expect(details.locator("[data-role=offsets]")).to_contain_text("next", timeout=TIMEOUT_MS)


CONTRAST = """() => {
  const rgba = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const background = (element) => {
    for (let e = element; e; e = e.parentElement) {
      const [r, g, b, a = 1] = rgba(getComputedStyle(e).backgroundColor);
      if (a > 0) return [r, g, b];
    }
    return [255, 255, 255];
  };
  const luminance = ([r, g, b]) => {
    const c = [r, g, b].map((v) => v / 255)
      .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const found = [];
  for (const element of document.querySelectorAll("body *")) {
    const own = [...element.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || element.getClientRects().length === 0) continue;
    const style = getComputedStyle(element);
    if (style.visibility === "hidden") continue;
    const fg = rgba(style.color).slice(0, 3);
    const [l1, l2] = [luminance(fg), luminance(background(element))].sort((x, y) => y - x);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    const large = parseFloat(style.fontSize) >= 24
      || (parseFloat(style.fontSize) >= 18.66 && Number(style.fontWeight) >= 700);
    found.push({text: element.textContent.trim().slice(0, 40), ratio, needed: large ? 3 : 4.5});
  }
  return found;
}"""
"""Every visible text's WCAG contrast ratio against the background behind it."""


def test_accessibility_basics_contrast_names_and_keyboard(page: Page, guarded: Guarded) -> None:
    name = create_running(guarded.worker, "ui-a11y", source_config(unique("ui-a11y")))
    shown = card(page, name)
    expect(shown.locator("[data-role=connector-state]")).to_have_text("RUNNING", timeout=TIMEOUT_MS)

    texts = page.evaluate(CONTRAST)
    assert len(texts) > 20
    low = [t for t in texts if t["ratio"] < t["needed"]]
    assert not low, low  # WCAG AA: 4.5:1, 3:1 for large text

    for button in page.locator("button:visible").all():
        label = button.get_attribute("aria-label") or button.inner_text()
        assert label.strip(), button.evaluate("b => b.outerHTML")
    for field in page.locator("input:visible").all():
        labelled = field.evaluate("f => f.labels.length > 0 || !!f.getAttribute('aria-label')")
        assert labelled, field.evaluate("f => f.outerHTML")

    # Tab from the filter reaches this connector's pause button, and Enter presses it.
    page.focus("#filter")
    pause = shown.locator("[data-action=pause]")
    for _ in range(200):
        page.keyboard.press("Tab")
        if pause.evaluate("b => b === document.activeElement"):
            break
    else:
        raise AssertionError("Tab never reached the pause button")
    page.keyboard.press("Enter")
    expect(shown.locator("[data-role=connector-state]")).to_have_text("PAUSED", timeout=TIMEOUT_MS)


def test_a_form_on_another_site_cannot_restart_a_connector(
    context: BrowserContext, guarded: Guarded
) -> None:
    """The browser knows the password; a form from elsewhere POSTs a restart with it."""
    name = create_running(guarded.worker, "ui-csrf", source_config(unique("ui-csrf")))
    target = guarded.page_url.split("/ui")[0] + f"/connectors/{name}/restart?includeTasks=true"
    elsewhere = context.new_page()
    try:
        elsewhere.set_content(f'<form method="post" action="{target}"><button>go</button></form>')
        with elsewhere.expect_response(lambda answer: "/restart" in answer.url) as answered:
            elsewhere.click("button")
        assert answered.value.status == 403
        assert "another site" in answered.value.json()["message"]
    finally:
        elsewhere.close()


def test_a_pipeline_on_the_page(page: Page, guarded: Guarded, tmp_path: Path) -> None:
    """A source and a sink on one topic: both charts receive data. The screenshot is the
    README's when CONNECT_LITE_UI_SCREENSHOT names a file."""
    topic = unique("orders")
    source = create_running(
        guarded.worker, "orders-source", source_config(topic, **{"poll.interval.ms": "20"})
    )
    sink = create_running(guarded.worker, "orders-sink", sink_config(topic, tmp_path / "out.jsonl"))
    for name in (source, sink):
        chart = page.locator(f'svg[data-chart=throughput][data-connector="{name}"]')
        wait_for(
            lambda c=chart: int(c.get_attribute("data-points") or "0") >= 10 and _peak(c) > 0,
            timeout=90,
            what=f"the throughput chart of {name} with data",
        )
    expect(page.locator("article.connector")).to_have_count(2)
    shot = tmp_path / "ui.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    wanted = os.environ.get("CONNECT_LITE_UI_SCREENSHOT")
    if wanted:
        shutil.copyfile(shot, wanted)
