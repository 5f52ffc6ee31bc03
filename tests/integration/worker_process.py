"""Runs a real connect-lite worker process (python app.py) and talks to it over HTTP."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parents[2]
TEST_PLUGINS = REPO / "tests" / "plugins"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def unique(prefix: str) -> str:
    """A name no other test uses: prefix plus 8 random hex digits."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def source_config(topic: str, **extra: str) -> dict[str, str]:
    """A testkit ScriptedSource writing value-N records to ``topic``."""
    return {"connector.class": "ScriptedSource", "topic": topic, "tasks.max": "1", **extra}


def sink_config(topic: str, out: Path, **extra: str) -> dict[str, str]:
    """A testkit RecordingSink writing what it gets to ``out`` as JSON lines."""
    return {
        "connector.class": "RecordingSink",
        "topics": topic,
        "output.file": str(out),
        "tasks.max": "1",
        **extra,
    }


def lines(path: Path) -> list[str]:
    """The lines of a file, or none if it does not exist yet."""
    return path.read_text().splitlines() if path.exists() else []


def wait_for(
    condition: Callable[[], Any], timeout: float = 60, interval: float = 0.2, what: str = ""
) -> Any:
    """Poll until condition() is truthy; fail with the last value seen."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = condition()
        except Exception as error:  # keep polling; report the last error on timeout
            last = error
        else:
            if last:
                return last
        time.sleep(interval)
    raise AssertionError(
        f"timed out after {timeout}s waiting for {what or condition}: last={last!r}"
    )


@dataclass
class Response:
    status: int
    body: Any
    headers: dict[str, str]
    raw: bytes


class Rest:
    """A tiny REST client over urllib: no extra dependency, real HTTP."""

    def __init__(self, base: str, auth: tuple[str, str] | None = None) -> None:
        self.base = base.rstrip("/")
        self.auth = auth
        """Basic-auth user and password sent with every request, if any."""

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        raw: bytes | None = None,
        content_type: str = "application/json",
    ) -> Response:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", content_type)
        if self.auth is not None:
            token = base64.b64encode(f"{self.auth[0]}:{self.auth[1]}".encode()).decode()
            req.add_header("Authorization", f"Basic {token}")
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return _response(resp.status, resp.read(), dict(resp.headers))
        except urllib.error.HTTPError as err:
            return _response(err.code, err.read(), dict(err.headers))

    def get(self, path: str) -> Response:
        return self.request("GET", path)

    def post(self, path: str, body: Any = None) -> Response:
        return self.request("POST", path, body)

    def put(self, path: str, body: Any = None) -> Response:
        return self.request("PUT", path, body)

    def patch(self, path: str, body: Any = None) -> Response:
        return self.request("PATCH", path, body)

    def delete(self, path: str) -> Response:
        return self.request("DELETE", path)


def _response(status: int, raw: bytes, headers: dict[str, str]) -> Response:
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = raw.decode(errors="replace")
    return Response(status, body, headers, raw)


@dataclass(frozen=True)
class Metrics:
    """One scrape of GET /metrics: every sample's name, labels and value."""

    samples: list[tuple[str, dict[str, str], float]]

    @classmethod
    def parse(cls, text: str) -> Metrics:
        return cls(
            [
                (s.name, dict(s.labels), float(s.value))
                for family in text_string_to_metric_families(text)
                for s in family.samples
            ]
        )

    def find(self, name: str, **labels: str) -> list[tuple[dict[str, str], float]]:
        """The samples of ``name`` whose labels include ``labels``."""
        return [
            (have, value)
            for sample, have, value in self.samples
            if sample == name and labels.items() <= have.items()
        ]

    def value(self, name: str, **labels: str) -> float:
        """The value of the one sample of ``name`` with these labels."""
        found = self.find(name, **labels)
        assert len(found) == 1, f"{name}{labels}: {found}"
        return found[0][1]


class WorkerProcess:
    """``python app.py worker.properties [files]`` in a subprocess, with its log in a file."""

    def __init__(
        self,
        workdir: Path,
        bootstrap_servers: str | None,
        extra: dict[str, str] | None = None,
        connector_files: list[str] | None = None,
        port: int | None = None,
        env: dict[str, str] | None = None,
        auth: tuple[str, str] | None = None,
    ) -> None:
        self.workdir = workdir
        self.env = dict(os.environ if env is None else env)
        """The worker's environment (default: the test's)."""
        self.port = port or free_port()
        self.props_path = workdir / "worker.properties"
        props = {
            "listeners": f"http://127.0.0.1:{self.port}",
            "state.storage.file": str(workdir / "state.db"),
            "connector.allowed.paths": tempfile.gettempdir(),
            "plugin.path": f"{REPO / 'plugins'},{TEST_PLUGINS}",
            "offset.flush.interval.ms": "500",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "spark.master": "local[2]",
            "consumer.session.timeout.ms": "6000",
        }
        if bootstrap_servers:
            props["bootstrap.servers"] = bootstrap_servers
        props.update(extra or {})
        self.props_path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self.connector_files = connector_files or []
        self.rest = Rest(f"http://127.0.0.1:{self.port}", auth)
        self.log_path = workdir / "worker.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, wait_healthy: bool = True) -> WorkerProcess:
        log = open(self.log_path, "ab")  # noqa: SIM115  # closed with the process
        self.proc = subprocess.Popen(
            [sys.executable, str(REPO / "app.py"), str(self.props_path), *self.connector_files],
            cwd=self.workdir,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**self.env, "PYTHONUNBUFFERED": "1"},
        )
        if wait_healthy:
            self.wait_healthy()
        return self

    def wait_healthy(self, timeout: float = 120) -> None:
        def healthy() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"worker exited with {self.proc.returncode}:\n{self.log()}")
            try:
                return self.rest.get("/health").status == 200
            except OSError:
                return False

        try:
            wait_for(healthy, timeout, what="worker /health")
        except AssertionError:
            raise AssertionError(f"worker not healthy; log:\n{self.log()[-5000:]}") from None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def terminate(self, timeout: float = 60) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.terminate()
            except subprocess.TimeoutExpired:
                self.kill()

    # -- conveniences ----------------------------------------------------------------------
    def metrics(self) -> Metrics:
        response = self.rest.get("/metrics")
        assert response.status == 200, response.body
        assert response.headers["Content-Type"].startswith("text/plain; version=")
        return Metrics.parse(response.raw.decode())

    def status(self, name: str) -> Any:
        return self.rest.get(f"/connectors/{name}/status").body

    def create_running(self, prefix: str, config: dict[str, str]) -> str:
        """Create a connector named ``prefix`` plus random digits; its name once it runs."""
        name = unique(prefix)
        response = self.rest.post("/connectors", {"name": name, "config": config})
        assert response.status == 201, response.body
        self.wait_running(name)
        return name

    def wait_running(self, name: str, tasks: int = 1, timeout: float = 120) -> Any:
        def running() -> Any:
            r = self.rest.get(f"/connectors/{name}/status")
            body = r.body
            ok = (
                r.status == 200
                and body["connector"]["state"] == "RUNNING"
                and len(body["tasks"]) == tasks
                and all(t["state"] == "RUNNING" for t in body["tasks"])
            )
            return body if ok else None

        return wait_for(running, timeout, what=f"{name} RUNNING with {tasks} tasks")
