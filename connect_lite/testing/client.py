"""Clients for the worker's REST API: ConnectClient (typed, raises ConnectRestError) and
HttpClient (any request; every answer returned, none raised)."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import Message
from typing import Any

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class HttpResponse:
    """One answer of the worker, whatever its status."""

    status: int
    body: Any
    """The decoded JSON body; the text if it is not JSON; None if empty."""
    headers: Message
    """The response headers (case-insensitive: ``headers["content-type"]``)."""
    raw: bytes
    """The body as sent."""


class HttpClient:
    """Plain HTTP to the worker over urllib: any method, path, body and header.

    For tests of the REST API itself (status codes, headers, error bodies, bad input): every
    answer is returned as an :class:`HttpResponse`, a 4xx or 5xx one too. Only a failure to
    talk to the worker at all (refused, reset, timed out) raises, as ``OSError``.
    """

    def __init__(
        self, url: str, timeout: float = 60.0, auth: tuple[str, str] | None = None
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.auth = auth
        """Basic-auth user and password sent with every request, if any."""

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        content_type: str = "application/json",
        headers: Mapping[str, str] | None = None,
    ) -> HttpResponse:
        """``body`` is sent as JSON, or ``raw`` as is, with ``content_type``."""
        data = raw if raw is not None else json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", content_type)
        if self.auth is not None:
            token = base64.b64encode(f"{self.auth[0]}:{self.auth[1]}".encode()).decode()
            req.add_header("Authorization", f"Basic {token}")
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return _response(resp.status, resp.read(), resp.headers)
        except urllib.error.HTTPError as err:
            return _response(err.code, err.read(), err.headers)

    def get(self, path: str) -> HttpResponse:
        return self.request("GET", path)

    def post(self, path: str, body: Any = None) -> HttpResponse:
        return self.request("POST", path, body)

    def put(self, path: str, body: Any = None) -> HttpResponse:
        return self.request("PUT", path, body)

    def patch(self, path: str, body: Any = None) -> HttpResponse:
        return self.request("PATCH", path, body)

    def delete(self, path: str) -> HttpResponse:
        return self.request("DELETE", path)


def _response(status: int, raw: bytes, headers: Message) -> HttpResponse:
    return HttpResponse(status, _decode(raw), headers, raw)


class ConnectRestError(Exception):
    """The worker answered with an error: ``{"error_code": N, "message": "..."}``."""

    def __init__(self, status: int, error_code: int, message: str, method: str, path: str):
        super().__init__(f"{method} {path} -> {error_code}: {message}")
        self.status = status
        self.error_code = error_code
        self.message = message
        self.method = method
        self.path = path


def _quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


class ConnectClient:
    """Kafka Connect's REST API over urllib: create, configure, control, read status and offsets.

    Every method returns the decoded JSON body (None for an empty body) and raises
    :class:`ConnectRestError` for a 4xx or 5xx answer. ``auth``: basic-auth user and password.
    ``http`` is the :class:`HttpClient` underneath, for requests that should not raise.
    """

    def __init__(
        self, url: str, timeout: float = 60.0, auth: tuple[str, str] | None = None
    ) -> None:
        self.http = HttpClient(url, timeout, auth)

    @property
    def url(self) -> str:
        return self.http.url

    @property
    def timeout(self) -> float:
        return self.http.timeout

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """One HTTP request; the decoded JSON body, or ConnectRestError."""
        answer = self.http.request(method, path, body, headers={"Accept": "application/json"})
        if answer.status >= 400:
            raise _error(answer.status, answer.raw, method, path)
        return answer.body

    # -- connectors ---------------------------------------------------------------------------
    def connectors(self) -> list[str]:
        return list(self.request("GET", "/connectors"))

    def create(
        self, name: str, config: dict[str, str], initial_state: str | None = None
    ) -> JsonObject:
        """POST /connectors; ``initial_state`` is RUNNING, PAUSED or STOPPED."""
        body: JsonObject = {"name": name, "config": config}
        if initial_state is not None:
            body["initial_state"] = initial_state
        return dict(self.request("POST", "/connectors", body))

    def info(self, name: str) -> JsonObject:
        return dict(self.request("GET", f"/connectors/{_quote(name)}"))

    def config(self, name: str) -> dict[str, str]:
        return dict(self.request("GET", f"/connectors/{_quote(name)}/config"))

    def configure(self, name: str, config: dict[str, str]) -> JsonObject:
        """PUT /connectors/{name}/config: create or replace."""
        return dict(self.request("PUT", f"/connectors/{_quote(name)}/config", config))

    def patch_config(self, name: str, changes: dict[str, str | None]) -> JsonObject:
        """PATCH /connectors/{name}/config: merge; a None value removes the key."""
        return dict(self.request("PATCH", f"/connectors/{_quote(name)}/config", changes))

    def status(self, name: str) -> JsonObject:
        return dict(self.request("GET", f"/connectors/{_quote(name)}/status"))

    def task_status(self, name: str, task: int) -> JsonObject:
        return dict(self.request("GET", f"/connectors/{_quote(name)}/tasks/{task}/status"))

    def tasks(self, name: str) -> list[JsonObject]:
        return list(self.request("GET", f"/connectors/{_quote(name)}/tasks"))

    def pause(self, name: str) -> None:
        self.request("PUT", f"/connectors/{_quote(name)}/pause")

    def resume(self, name: str) -> None:
        self.request("PUT", f"/connectors/{_quote(name)}/resume")

    def stop(self, name: str) -> None:
        self.request("PUT", f"/connectors/{_quote(name)}/stop")

    def restart(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> JsonObject | None:
        """POST /connectors/{name}/restart; the restart plan when tasks are included."""
        query = f"?includeTasks={str(include_tasks).lower()}&onlyFailed={str(only_failed).lower()}"
        result = self.request("POST", f"/connectors/{_quote(name)}/restart{query}")
        return dict(result) if result is not None else None

    def restart_task(self, name: str, task: int) -> None:
        self.request("POST", f"/connectors/{_quote(name)}/tasks/{task}/restart")

    def delete(self, name: str, include_offsets: bool = False) -> None:
        suffix = "?includeOffsets=true" if include_offsets else ""
        self.request("DELETE", f"/connectors/{_quote(name)}{suffix}")

    # -- offsets and topics -------------------------------------------------------------------
    def offsets(self, name: str) -> list[JsonObject]:
        """The ``offsets`` list of GET /connectors/{name}/offsets (partition/offset pairs)."""
        return list(self.request("GET", f"/connectors/{_quote(name)}/offsets")["offsets"])

    def alter_offsets(self, name: str, offsets: list[JsonObject]) -> str:
        """PATCH the offsets of a STOPPED connector; the worker's message."""
        body = self.request("PATCH", f"/connectors/{_quote(name)}/offsets", {"offsets": offsets})
        return str(body["message"])

    def reset_offsets(self, name: str) -> str:
        """DELETE the offsets of a STOPPED connector; the worker's message."""
        return str(self.request("DELETE", f"/connectors/{_quote(name)}/offsets")["message"])

    def topics(self, name: str) -> list[str]:
        """The topics the connector has used (KIP-558)."""
        return list(self.request("GET", f"/connectors/{_quote(name)}/topics")[name]["topics"])

    # -- plugins ------------------------------------------------------------------------------
    def plugins(self, connectors_only: bool = True) -> list[JsonObject]:
        flag = str(connectors_only).lower()
        return list(self.request("GET", f"/connector-plugins?connectorsOnly={flag}"))

    def validate(self, plugin: str, config: dict[str, str]) -> JsonObject:
        """PUT /connector-plugins/{plugin}/config/validate: ConfigInfos with ``error_count``."""
        path = f"/connector-plugins/{_quote(plugin)}/config/validate"
        return dict(self.request("PUT", path, config))

    def health(self) -> JsonObject:
        return dict(self.request("GET", "/health"))


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _error(status: int, raw: bytes, method: str, path: str) -> ConnectRestError:
    body = _decode(raw)
    if isinstance(body, dict) and "message" in body:
        code = int(body.get("error_code", status))
        return ConnectRestError(status, code, str(body["message"]), method, path)
    return ConnectRestError(status, status, str(body), method, path)


__all__ = ["ConnectClient", "ConnectRestError", "HttpClient", "HttpResponse", "JsonObject"]
