"""Worker child processes that cannot outlive the test: own process group, parent watchdog."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from connect_lite.kafka.broker import _die_with_parent_hook
from connect_lite.protocol.environment import package_home, python_path

# Runs in the child before the worker: a thread reads the pipe from the parent and, when it
# closes (the parent exited, however it died), kills the child's whole process group, which
# holds the worker, Spark's JVM and Spark's Python workers. PR_SET_PDEATHSIG (set in the
# preexec hook) covers the same case only while the forking thread lives. The thread reads the
# file descriptor, not sys.stdin: blocked in sys.stdin's reader, it holds that reader's lock,
# and the interpreter's shutdown aborts the worker (SIGABRT) when it cannot take it.
_BOOT = """
import os, signal, sys, threading
def _watch():
    while os.read(0, 1):
        pass
    os.killpg(0, signal.SIGKILL)
threading.Thread(target=_watch, name="parent-watchdog", daemon=True).start()
from connect_lite.cli import main
sys.exit(main())
"""


def _python_path() -> str:
    """PYTHONPATH for the child: where connect_lite is imported from, then this process's path.

    The entries of this process's ``sys.path`` that a fresh interpreter would not have (the
    current directory, what pytest or the test added, ``PYTHONPATH``) follow, in order, so the
    worker and its Spark Python workers import a test's plugin modules as the test does.
    """
    default = _default_sys_path()
    added = [os.path.abspath(p) for p in sys.path if os.path.abspath(p) not in default]
    return python_path(package_home(), *added, os.environ.get("PYTHONPATH"))


@functools.cache
def _default_sys_path() -> frozenset[str]:
    """The ``sys.path`` of a fresh interpreter like this one, without PYTHONPATH (asked once)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    shown = subprocess.run(
        [sys.executable, "-c", "import json, sys; print(json.dumps(sys.path[1:]))"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return frozenset(os.path.abspath(p) for p in json.loads(shown))


def spawn_worker(
    properties: Path,
    workdir: Path,
    log_path: Path,
    connector_files: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``connect_lite.cli.main`` (as ``connect-lite properties [connector_files]``) in a
    new session, logging to ``log_path``; ``env`` replaces this process's environment."""
    hook = _die_with_parent_hook()
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = _python_path()
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(properties), *connector_files],
            cwd=workdir,
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=hook,
            close_fds=True,
        )


def descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (children, grandchildren, ...), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def stop_tree(proc: subprocess.Popen[bytes], graceful_timeout: float) -> int | None:
    """SIGTERM the worker, SIGKILL it after ``graceful_timeout``, then kill what it left behind.

    Leftovers (Spark's JVM, Python workers) are found by process group and by parentage
    recorded before the stop; the call returns once none of them is alive.
    """
    # Only a live worker's pid is its own: once reaped, the pid may belong to anyone.
    running = proc.poll() is None
    tree = descendants(proc.pid) if running and sys.platform.startswith("linux") else set()
    if running:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(graceful_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pid in tree:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in tree) and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc.returncode


__all__ = ["descendants", "spawn_worker", "stop_tree"]
