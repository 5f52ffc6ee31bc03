"""The embedded broker: start, stop, port reuse, clear start errors, and no orphans."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from connect_lite.kafka.admin import Admin
from connect_lite.kafka.broker import BrokerStartError, EmbeddedBroker
from connect_lite.testing import wait_for

pytestmark = pytest.mark.integration


def alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie (dead, not yet reaped) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_start_answers_metadata_and_stop_leaves_no_process(tmp_path: Path) -> None:
    log_file = tmp_path / "tansu.log"
    broker = EmbeddedBroker(log_path=str(log_file)).start()
    pid = broker.pid
    assert pid is not None and alive(pid)
    host, port = broker.bootstrap_servers.split(":")
    assert host == "127.0.0.1" and int(port) > 0
    assert Admin({"bootstrap.servers": broker.bootstrap_servers}).cluster_id(timeout=10)
    broker.stop()
    assert not alive(pid)
    assert not broker.is_running()
    broker.stop()  # idempotent
    assert "listening on" in log_file.read_text()


def test_port_is_released_and_reusable_after_stop() -> None:
    with EmbeddedBroker() as first:
        port = int(first.bootstrap_servers.rsplit(":", 1)[1])
        Admin({"bootstrap.servers": first.bootstrap_servers}).list_topics(timeout=10)
    with EmbeddedBroker(port=port) as second:
        assert second.bootstrap_servers == f"127.0.0.1:{port}"
        assert (
            Admin({"bootstrap.servers": second.bootstrap_servers}).list_topics(timeout=10) == set()
        )


def test_busy_port_gives_a_clear_error_with_the_log_tail() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        broker = EmbeddedBroker(port=port)
        with pytest.raises(BrokerStartError, match=f"127.0.0.1:{port}") as info:
            broker.start(timeout=10)
    assert "log tail" in str(info.value)
    assert not broker.is_running()


def test_broker_dies_when_its_parent_is_killed(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys
        from connect_lite.kafka.broker import EmbeddedBroker
        broker = EmbeddedBroker().start()
        print(broker.pid, flush=True)
        sys.stdin.read()
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[3],
        text=True,
    )
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline()
        assert line.strip().isdigit(), f"parent did not report a broker pid: {line!r}"
        broker_pid = int(line)
        assert alive(broker_pid)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        wait_for(lambda: not alive(broker_pid), 10, 0.05, "the broker to die with its parent")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)


def test_a_picked_port_taken_before_bind_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    import connect_lite.kafka.broker as broker_module

    real_free_port = broker_module.free_port
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        picks = iter([taken])
        monkeypatch.setattr(
            broker_module, "free_port", lambda host: next(picks, None) or real_free_port(host)
        )
        with EmbeddedBroker() as broker:
            assert broker.bootstrap_servers != f"127.0.0.1:{taken}"
            assert (
                Admin({"bootstrap.servers": broker.bootstrap_servers}).list_topics(timeout=10)
                == set()
            )
