"""``GET /ui``: a status page over the REST API, served from package data (no build, no CDN)."""

from __future__ import annotations

import hashlib
from importlib import resources

from flask import Blueprint, Response, current_app, request
from werkzeug.exceptions import NotFound

from connect_lite.rest import render

bp = Blueprint("ui", __name__)

STATIC = resources.files("connect_lite.rest") / "ui_static"
"""The page and its assets; package data, so an installed wheel serves them too."""

PAGE = "index.html"
ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "sparklines.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
"""Every asset the page loads, with its content type. Nothing else under /ui/ is served, so no
path can reach another file."""

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",  # scripts, styles, fetches and images from this origin only
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)
"""No inline script or style, no plugins, and the page may not be framed."""


@bp.get("/ui")
def page() -> Response:
    if request.path.endswith("/"):
        # The page's URLs are relative to /ui (ui/app.js, connectors): /ui/ would break them.
        response = render.empty(308)
        query = request.query_string.decode("latin-1")
        response.headers["Location"] = "../ui" + (f"?{query}" if query else "")
        return response
    response = _file(PAGE, "text/html; charset=utf-8")
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@bp.get("/ui/<path:asset>")
def asset(asset: str) -> Response:
    content_type = ASSETS.get(asset)
    if content_type is None:
        raise NotFound()  # the same 404 body as an unknown route
    return _file(asset, content_type)


def _file(name: str, content_type: str) -> Response:
    """A file of the page, revalidated on every load (``no-cache`` with an ETag), so an
    upgraded worker never runs an old script against its new API."""
    body = (STATIC / name).read_bytes()
    response = current_app.response_class(body, content_type=content_type)
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.set_etag(hashlib.sha256(body).hexdigest()[:32])
    response.make_conditional(request)  # 304 without a body when the ETag matches
    return response
