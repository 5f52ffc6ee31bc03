"""A Spark standalone cluster on 127.0.0.1 from the pyspark wheel: a master and N workers.

For users who want to try connect-lite on a cluster (``scripts/spark-cluster.sh``) and for
the cluster tests (one per test session). It only starts JVMs with ``bin/spark-class`` from
the installed pyspark package (``$SPARK_HOME``), so it needs no pyspark import:

    python -m connect_lite.testing.spark_cluster start --workers 2 [--dir data/spark-cluster]
    python -m connect_lite.testing.spark_cluster stop [--dir data/spark-cluster]

Everything the cluster writes is under its directory: ``master.log``, ``worker-N.log``, the
workers' work directories ``work-N/`` (each executor runs in ``work-N/<app-id>/<executor>/``),
``pids`` and ``master-url``. Every process runs in its own process group, so stopping a
worker also ends its executors and their Python workers.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from connect_lite.kafka.broker import free_port

HOST = "127.0.0.1"
DEFAULT_DIR = Path("data/spark-cluster")
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 20.0
_MASTER = "org.apache.spark.deploy.master.Master"
_WORKER = "org.apache.spark.deploy.worker.Worker"


class SparkClusterError(RuntimeError):
    """The cluster did not start (its logs are named in the message) or is not running."""


def spark_home() -> Path:
    """The pyspark package directory: a complete Spark distribution (bin/, jars/)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise SparkClusterError("pyspark is not installed in this Python environment")
    return Path(spec.origin).resolve().parent


@dataclass
class SparkCluster:
    """A running standalone cluster: a master and its workers, each with its pid and log."""

    directory: Path
    port: int
    webui_port: int
    pids: dict[str, int] = field(default_factory=dict)
    """Process name (``master``, ``worker-1``, ...) -> pid of its JVM (its group leader)."""
    cores: int = 1
    memory: str = "1g"
    die_with_parent: bool = False
    """What each worker is started with (again, by ``start_worker``)."""

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.port}"

    @property
    def webui_url(self) -> str:
        return f"http://{HOST}:{self.webui_port}"

    def work_dir(self, worker: int) -> Path:
        """The work directory of worker ``worker`` (1-based): its executors run below it."""
        return self.directory / f"work-{worker}"

    @property
    def work_dirs(self) -> list[Path]:
        return [self.work_dir(int(n.split("-")[1])) for n in self.pids if n.startswith("worker-")]

    def state(self) -> dict[str, object]:
        """The master's JSON status page (``aliveworkers``, ``workers``, ``activeapps``...)."""
        with urllib.request.urlopen(f"{self.webui_url}/json/", timeout=5) as response:
            state: dict[str, object] = json.loads(response.read())
        return state

    def alive_workers(self) -> int:
        try:
            return int(str(self.state().get("aliveworkers", 0)))
        except (OSError, ValueError):
            return 0

    def kill_worker(self, worker: int) -> None:
        """``kill -9`` worker ``worker`` (1-based) and its executors (its process group), as
        a machine that dies would; returns once its JVM is gone."""
        pid = self.pids.pop(f"worker-{worker}")
        _signal_group(pid, signal.SIGKILL)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.save()

    def start_worker(self, worker: int, timeout: float = START_TIMEOUT_S) -> None:
        """Start worker ``worker`` (again) with its old work directory; returns once the
        master counts it alive."""
        preexec = _die_with_parent() if self.die_with_parent else None
        # Waited for by its web UI port, not by counting live workers: until the master has
        # noticed that a killed worker is gone, it still counts it.
        webui = free_port()
        self.pids[f"worker-{worker}"] = _launch_worker(self, worker, preexec, webui)
        _wait(lambda: self._alive_at(webui), timeout, self, "worker")
        self.save()

    def _alive_at(self, webui_port: int) -> bool:
        workers = self.state().get("workers")
        return any(
            str(w.get("webuiaddress", "")).endswith(f":{webui_port}") and w.get("state") == "ALIVE"
            for w in (workers if isinstance(workers, list) else [])
        )

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM every process group (workers first), then SIGKILL what is left."""
        names = sorted(self.pids, key=lambda n: n == "master")
        for name in names:
            _signal_group(self.pids[name], signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for name in names:
            while _alive(self.pids[name]) and time.monotonic() < deadline:
                time.sleep(0.1)
            _signal_group(self.pids[name], signal.SIGKILL)
        self.pids.clear()
        with contextlib.suppress(FileNotFoundError):
            (self.directory / "pids").unlink()

    def save(self) -> None:
        """Write ``pids`` (JSON) and ``master-url`` so that ``stop`` works from another process."""
        record = {"port": self.port, "webui_port": self.webui_port, "pids": self.pids}
        (self.directory / "pids").write_text(json.dumps(record))
        (self.directory / "master-url").write_text(self.master_url + "\n")

    @classmethod
    def load(cls, directory: Path) -> SparkCluster:
        try:
            record = json.loads((directory / "pids").read_text())
        except FileNotFoundError:
            raise SparkClusterError(f"No Spark cluster is recorded in {directory}") from None
        return cls(directory, int(record["port"]), int(record["webui_port"]), record["pids"])


def start(
    directory: Path = DEFAULT_DIR,
    workers: int = 2,
    *,
    port: int | None = None,
    webui_port: int | None = None,
    cores: int = 1,
    memory: str = "1g",
    die_with_parent: bool = False,
    timeout: float = START_TIMEOUT_S,
) -> SparkCluster:
    """Start a master and ``workers`` workers; returns once every worker has registered.

    Ports default to free ones. With ``die_with_parent`` (test fixtures) the JVMs are killed
    when this process dies, however it dies. On failure everything started is stopped and
    SparkClusterError names the log to read.
    """
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    cluster = SparkCluster(
        directory, port or free_port(), webui_port or free_port(), {}, cores, memory,
        die_with_parent,
    )  # fmt: skip
    preexec = _die_with_parent() if die_with_parent else None
    try:
        cluster.pids["master"] = _launch(
            directory / "master.log",
            [_MASTER, "--host", HOST, "--port", str(cluster.port), *_webui(cluster.webui_port)],
            preexec,
        )
        _wait(lambda: cluster.state() is not None, timeout, cluster, "master")
        for n in range(1, workers + 1):
            cluster.pids[f"worker-{n}"] = _launch_worker(cluster, n, preexec)
        _wait(lambda: cluster.alive_workers() >= workers, timeout, cluster, "worker")
    except BaseException:
        cluster.stop()
        raise
    cluster.save()
    return cluster


def _launch_worker(
    cluster: SparkCluster, n: int, preexec: Callable[[], None] | None, webui_port: int = 0
) -> int:
    work = cluster.work_dir(n)
    work.mkdir(exist_ok=True)
    return _launch(
        cluster.directory / f"worker-{n}.log",
        [
            _WORKER,
            "--cores",
            str(cluster.cores),
            "--memory",
            cluster.memory,
            "--host",
            HOST,
            *_webui(webui_port or free_port()),
            "--work-dir",
            str(work),
            cluster.master_url,
        ],
        preexec,
    )


def _webui(port: int) -> list[str]:
    return ["--webui-port", str(port)]


def _launch(log_path: Path, args: Sequence[str], preexec: Callable[[], None] | None) -> int:
    home = spark_home()
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": HOST,
        "SPARK_LOG_DIR": str(log_path.parent),
        "SPARK_NO_DAEMONIZE": "1",
    }
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [str(home / "bin" / "spark-class"), *args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own process group: executors die with it
            preexec_fn=preexec,
        )
    return process.pid


def _wait(ready: Callable[[], object], timeout: float, cluster: SparkCluster, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            if ready():
                return
        dead = [name for name, pid in cluster.pids.items() if not _alive(pid)]
        if dead:
            logs = ", ".join(str(cluster.directory / f"{name}.log") for name in dead)
            raise SparkClusterError(f"Spark {', '.join(dead)} exited at start; see {logs}")
        time.sleep(0.2)
    raise SparkClusterError(
        f"The Spark {what}s did not come up within {timeout:.0f} s; see the logs in "
        f"{cluster.directory}"
    )


def _die_with_parent() -> Callable[[], None] | None:
    from connect_lite.kafka.broker import _die_with_parent_hook

    return _die_with_parent_hook()


def _alive(pid: int) -> bool:
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)  # reaps our own child once it exited
        if waited == pid:
            return False
    except ChildProcessError:
        pass  # not our child (stop from another process)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="spark-cluster", description="A Spark standalone cluster on 127.0.0.1."
    )
    parser.add_argument("command", choices=["start", "stop"])
    parser.add_argument("--workers", type=int, default=2, help="Workers, 1 core each.")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="Logs, pids, work dirs.")
    parser.add_argument("--port", type=int, default=7077, help="The master's port.")
    parser.add_argument("--webui-port", type=int, default=8080, help="The master's web UI.")
    args = parser.parse_args(argv)
    if args.command == "stop":
        try:
            cluster = SparkCluster.load(args.dir.resolve())
        except SparkClusterError as error:
            print(error, file=sys.stderr)
            return 1
        cluster.stop()
        print(f"Stopped the Spark cluster at {cluster.master_url}")
        return 0
    with contextlib.suppress(SparkClusterError):
        recorded = SparkCluster.load(args.dir.resolve())
        if any(_alive(pid) for pid in recorded.pids.values()):
            print(f"A Spark cluster runs at {recorded.master_url}; stop it first", file=sys.stderr)
            return 1
    cluster = start(args.dir, args.workers, port=args.port, webui_port=args.webui_port)
    print(cluster.master_url)
    print(f"Web UI: {cluster.webui_url}; logs and work directories in {cluster.directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
