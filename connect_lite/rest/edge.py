"""Checks at the edge of the REST layer, before any route runs: Host, CORS, auth, body limits.

The order is: the Host check (403, against DNS rebinding on loopback listeners), then a CORS
preflight is answered, then a change from another site is refused (403, against cross-site
forms), then basic auth (401), then the body's size (413) and type (415). A refused body is
never read: the server answers and closes the connection (``rest/server.py``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import io
import ipaddress
from dataclasses import dataclass

from flask import Flask, Response, request
from werkzeug.exceptions import RequestEntityTooLarge, UnsupportedMediaType

from connect_lite.api.errors import ForbiddenError
from connect_lite.config.rest_security import RestSecurity, host_name
from connect_lite.rest.error_mapping import UnauthorizedError

LOOPBACK_ENVIRON = "connect_lite.loopback_listener"
"""WSGI environ flag set by the server on requests that came in on a loopback listener."""

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
REALM = 'Basic realm="connect-lite"'
UNAUTHORIZED = "User cannot access the resource."
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
CHANGING_METHODS = BODY_METHODS | {"DELETE"}
SAME_ORIGIN_SITES = frozenset({"same-origin", "none"})
"""``Sec-Fetch-Site`` values of a browser's request from the page's own origin, or typed in."""
CORS_HEADERS = "Content-Type, Authorization, Accept, Origin, X-Requested-With"
_NO_USER = hashlib.sha256(b"no such user").digest()


@dataclass(frozen=True)
class Edge:
    """The checks of one app, from the worker's REST security settings."""

    security: RestSecurity

    def install(self, app: Flask) -> None:
        app.config["MAX_CONTENT_LENGTH"] = self.security.max_request_bytes
        app.before_request(self.before)
        app.after_request(self.after)

    def before(self) -> Response | None:
        if request.environ.get(LOOPBACK_ENVIRON):
            self._check_host()
        if self._is_preflight():
            return self._preflight()
        self._check_cross_site()
        if self.security.credentials is not None:
            self._authenticate()
        self._check_body()
        return None

    def after(self, response: Response) -> Response:
        if response.status_code == 401:
            response.headers["WWW-Authenticate"] = REALM
        origin = self._allowed_origin()
        if origin is not None:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers.add("Vary", "Origin")
            if origin != "*":  # as Jetty's CrossOriginFilter: a browser UI may send credentials
                response.headers["Access-Control-Allow-Credentials"] = "true"
        return response

    def _check_host(self) -> None:
        host = host_name(request.host)
        if host in LOOPBACK_NAMES or host in self.security.allowed_hosts or _is_loopback(host):
            return
        raise ForbiddenError(
            f"Host '{host}' is not allowed on a loopback listener; add it to rest.allowed.hosts"
        )

    def _check_cross_site(self) -> None:
        """A browser's request from another site that would change something is refused (403),
        unless CORS allows its origin. A bodiless POST needs no preflight, so without this an
        HTML form on any site could restart connectors with the password the browser keeps.
        Clients that are not browsers send neither ``Sec-Fetch-Site`` nor ``Origin``."""
        if request.method not in CHANGING_METHODS:
            return
        site = request.headers.get("Sec-Fetch-Site")
        origin = request.headers.get("Origin")
        if site in SAME_ORIGIN_SITES:
            return
        if site is None and (origin is None or origin == request.host_url.rstrip("/")):
            return
        allowed = self._allowed_origin()
        if allowed is None or (allowed == "*" and self.security.credentials is not None):
            # With a password, "*" is no exemption: a browser lets no page on another site use
            # a credentialed answer under "*", so only a form riding on the saved password
            # would pass.
            raise ForbiddenError(
                f"A {request.method} from another site ({origin or 'unknown origin'}) is refused; "
                "allow its origin with access.control.allow.origin"
            )

    def _allowed_origin(self) -> str | None:
        origin = request.headers.get("Origin")
        allowed = self.security.cors_origins
        if not origin or not allowed:
            return None
        if "*" in allowed:
            return "*"
        return origin if origin in allowed else None

    def _is_preflight(self) -> bool:
        return (
            request.method == "OPTIONS"
            and bool(self.security.cors_origins)
            and "Origin" in request.headers
            and "Access-Control-Request-Method" in request.headers
        )

    def _preflight(self) -> Response:
        """Answer a CORS preflight: 204 with the allowed methods, or 403 for another origin."""
        if self._allowed_origin() is None:
            raise ForbiddenError("CORS preflight from an origin that is not allowed")
        response = Response(status=204)
        response.headers["Access-Control-Allow-Methods"] = ",".join(self.security.cors_methods)
        response.headers["Access-Control-Allow-Headers"] = CORS_HEADERS
        response.headers["Access-Control-Max-Age"] = "1800"
        return response

    def _authenticate(self) -> None:
        credentials = self.security.credentials or {}
        user, password = _basic_credentials(request.headers.get("Authorization", ""))
        expected = credentials.get(user) if user is not None else None
        # Digests of equal length, compared in constant time (against a dummy for an unknown
        # user), so neither the password nor its length shows in the time taken.
        given = hashlib.sha256((password or "").encode()).digest()
        wanted = hashlib.sha256(expected.encode()).digest() if expected is not None else _NO_USER
        if not hmac.compare_digest(given, wanted) or expected is None or password is None:
            raise UnauthorizedError(UNAUTHORIZED)

    def _check_body(self) -> None:
        length = request.content_length
        limit = self.security.max_request_bytes
        if length is not None and length > limit:
            raise RequestEntityTooLarge()
        chunked = "HTTP_TRANSFER_ENCODING" in request.environ  # any coding: a body follows
        if request.routing_exception is not None or request.method not in BODY_METHODS:
            return  # an unknown route or method is reported as such, whatever the body
        if (bool(length) or chunked) and request.mimetype != "application/json":
            raise UnsupportedMediaType()
        if chunked:
            _buffer_chunked_body(limit)


def _buffer_chunked_body(limit: int) -> None:
    """Read a chunked body here, up to ``limit``: 413 beyond it (the framework would cut it
    short silently), else it is handed on with its length known."""
    environ = request.environ
    data = environ["wsgi.input"].read(limit + 1)
    if len(data) > limit:
        raise RequestEntityTooLarge()
    environ["wsgi.input"] = io.BytesIO(data)
    environ["CONTENT_LENGTH"] = str(len(data))
    environ.pop("HTTP_TRANSFER_ENCODING", None)


def _basic_credentials(header: str) -> tuple[str | None, str | None]:
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "basic" or not token:
        return None, None
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None, None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else (None, None)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


__all__ = ["LOOPBACK_ENVIRON", "Edge"]
