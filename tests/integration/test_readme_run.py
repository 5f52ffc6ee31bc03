"""The README's first command on this checkout: worker, embedded broker and demo pipeline; the
docs' commands that work on the demo, run as written against it (the tour, the offsets, the
active topics, the plugin versions, the OpenAPI document, the state file); the demo run again
(the restart WARN) and run afresh; and the same first command with the optional lake pipeline,
read back as the docs show, then removed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from connect_lite.testing import HttpClient, wait_for
from tests.integration.testkit import REPO, lines
from tests.unit.docs.doc_blocks import block, run_shell

pytestmark = pytest.mark.integration

DATA = REPO / "data"
SOURCE = DATA / "demo" / "input.txt"
TARGET = DATA / "demo" / "output.txt"
REST = HttpClient("http://127.0.0.1:8083")


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@contextmanager
def parked_data(tmp_path: Path) -> Iterator[None]:
    """A fresh checkout's state: a developer's ``data/`` is parked and put back afterwards."""
    parked = tmp_path / "data-before-test"
    if DATA.exists():
        shutil.move(str(DATA), str(parked))
    try:
        yield
    finally:
        shutil.rmtree(DATA, ignore_errors=True)
        if parked.exists():
            shutil.move(str(parked), str(DATA))


@contextmanager
def run_demo(
    tmp_path: Path, *args: str, log_name: str = "run.log"
) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """``scripts/run.sh [args]`` on the checkout's ``data/`` as it is; killed if still running
    at the end. Yields the process and its log."""
    assert _port_free(8083), "scripts/run.sh needs port 8083 (standalone.properties); free it"
    log = tmp_path / log_name
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(REPO / "scripts" / "run.sh"), *args],
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield proc, log
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@contextmanager
def demo(tmp_path: Path, *args: str) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """``scripts/run.sh [args]`` from a fresh checkout's state (``parked_data``). Yields the
    process and its log."""
    with parked_data(tmp_path), run_demo(tmp_path, *args) as (proc, log):
        yield proc, log


def alive(proc: subprocess.Popen[bytes], log: Path) -> None:
    if proc.poll() is not None:
        raise AssertionError(f"run.sh exited {proc.returncode}: {log.read_text()[-3000:]}")


def stop(proc: subprocess.Popen[bytes], log: Path) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(60) == 0, log.read_text()[-3000:]


def run(test_id: str) -> str:
    """Run a docs block in the checkout, as its page says; its output."""
    done = run_shell(block(test_id).text, REPO)
    assert done.returncode == 0, (test_id, done.stderr)
    assert "error_code" not in done.stdout, (test_id, done.stdout)
    return done.stdout


def states() -> dict[str, tuple[str, list[str]]]:
    status = REST.get("/connectors?expand=status").body
    return {
        name: (s["status"]["connector"]["state"], [t["state"] for t in s["status"]["tasks"]])
        for name, s in status.items()
    }


def all_running() -> bool:
    return all(c == "RUNNING" and t and set(t) == {"RUNNING"} for c, t in states().values())


def output_is(expected: list[str]) -> Any:
    def check() -> bool:
        return lines(TARGET) == expected

    check.__doc__ = f"{len(expected)} lines in {TARGET.name}"
    return check


def test_the_two_commands_are_the_scripts_these_tests_and_ci_run() -> None:
    commands = [line.split("#")[0].strip() for line in block("two-commands").text.splitlines()]
    assert commands == ["scripts/run.sh", "scripts/test.sh"]
    assert block("demo-run").text.strip() == "scripts/run.sh"


RESTART_TRAP = "The embedded broker keeps topics in memory and no longer has the topics"


def the_copy_is_whole(proc: subprocess.Popen[bytes], log: Path) -> Any:
    def copied() -> bool:
        alive(proc, log)
        return TARGET.exists() and TARGET.read_text() == SOURCE.read_text()

    copied.__doc__ = "the demo output file, a copy of the input"
    return copied


def test_the_demo_run_again_says_what_is_gone_and_fresh_starts_it_over(tmp_path: Path) -> None:
    """The restart trap: the embedded broker keeps topics in memory, the state file keeps the
    connectors and offsets. Run again, the demo names both connectors in one WARN at start;
    ``scripts/run.sh --fresh`` (Getting started's command) copies the whole file again."""
    with parked_data(tmp_path):
        with run_demo(tmp_path, log_name="first.log") as (proc, log):
            wait_for(the_copy_is_whole(proc, log), 180, what="the demo output file")
            stop(proc, log)
        assert RESTART_TRAP not in log.read_text()

        with run_demo(tmp_path, log_name="again.log") as (proc, log):

            def warned() -> str | None:
                alive(proc, log)
                found = [line for line in log.read_text().splitlines() if RESTART_TRAP in line]
                return found[0] if found else None

            line = wait_for(warned, 120, what="the WARN of a restart on the embedded broker")
            wait_for(all_running, 60, what="both connectors RUNNING again")
            stop(proc, log)
        assert "source connectors local-file-source (connect-lite-demo) resume" in line
        assert "sink connectors local-file-sink (connect-lite-demo) wait" in line
        assert "Only an external Kafka keeps topic data across a restart" in line
        assert f"remove the state file {DATA / 'connect-lite.db'}," in line
        assert lines(TARGET) == lines(SOURCE)  # nothing written twice, nothing new

        fresh = block("demo-fresh").text.split()
        assert fresh[0] == "scripts/run.sh"
        with run_demo(tmp_path, *fresh[1:], log_name="fresh.log") as (proc, log):
            wait_for(lambda: "afresh" in log.read_text(), 120, what="--fresh's line")
            # The output file is removed and the source reads from the start: a whole copy again,
            # not the file twice.
            wait_for(the_copy_is_whole(proc, log), 180, what="the whole file copied again")
            stop(proc, log)
        text = log.read_text()
        assert "Starting the demo afresh: removed data/connect-lite.db" in text
        assert "data/demo/output.txt" in text
        assert RESTART_TRAP not in text


def test_run_command_copies_the_demo_file_and_the_docs_commands_work_on_it(
    tmp_path: Path,
) -> None:
    with demo(tmp_path) as (proc, log):

        def copied() -> bool:
            alive(proc, log)
            # The demo source creates its topic with one partition: an exact, ordered copy.
            return TARGET.exists() and TARGET.read_text() == SOURCE.read_text()

        wait_for(copied, 180, what="the demo output file")
        assert len(lines(SOURCE)) == 1000
        assert states() == {
            "local-file-source": ("RUNNING", ["RUNNING"]),
            "local-file-sink": ("RUNNING", ["RUNNING"]),
        }
        tour()
        openapi(tmp_path)
        offsets()
        active_topics()
        plugin_versions()
        state_file()
        stop(proc, log)


def tour() -> None:
    """The README's tour and Getting started's."""
    listed = run("readme-tour").splitlines()[0]
    assert set(json.loads(listed)) == {"local-file-source", "local-file-sink"}
    wait_for(output_is(lines(SOURCE)), 60, what="the appended line in the output")
    assert set(json.loads(run("tour"))) == {"local-file-source", "local-file-sink"}
    run("tour-append")
    wait_for(output_is(lines(SOURCE)), 60, what="the appended line in the output")
    assert run("tour-tail") == "one more line\n"
    assert run("tour-pause") == ""
    wait_for(all_running, 60, what="both connectors RUNNING after the resume")


def openapi(tmp_path: Path) -> None:
    """The REST API page's command, in a directory of its own."""
    done = run_shell(block("openapi-json").text, tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "connect-lite.json").read_text())
    assert document["openapi"] == "3.1.0"


def offsets() -> None:
    """The offsets page: the sink moved back to offset 990, the source reset, a STOPPED
    connector created and deleted with its offsets."""
    source = lines(SOURCE)
    sink_offsets, altered = run("offsets-sink").splitlines()
    assert json.loads(sink_offsets) == {
        "offsets": [
            {
                "partition": {"kafka_topic": "connect-lite-demo", "kafka_partition": 0},
                "offset": {"kafka_offset": len(source)},
            }
        ]
    }
    assert "altered" in json.loads(altered)["message"]
    # The sink appends what it consumes again: from offset 990 on, twice.
    wait_for(output_is(source + source[990:]), 120, what="the lines after 990 again")
    assert states()["local-file-sink"] == ("RUNNING", ["RUNNING"])

    source_offsets, reset = run("offsets-source").splitlines()
    assert json.loads(source_offsets)["offsets"][0]["partition"] == {
        "filename": "data/demo/input.txt"
    }
    assert "reset" in json.loads(reset)["message"]
    # The warning: the whole file again, appended by the sink.
    wait_for(output_is(source + source[990:] + source), 120, what="the input file twice")

    created = run("offsets-parked").splitlines()[0]
    assert json.loads(created)["name"] == "parked"
    assert "parked" not in REST.get("/connectors").body


def active_topics() -> None:
    """The active topics page: the answer its comment shows, then a reset."""
    shown = block("active-topics").text.splitlines()[1]
    assert shown.startswith("# ")
    assert json.loads(run("active-topics")) == json.loads(shown.removeprefix("# "))
    assert REST.get("/connectors/local-file-source/topics").body == {
        "local-file-source": {"topics": []}
    }


def plugin_versions() -> None:
    """The plugin versions page: two counters on 1.0.0, one upgraded, then rolled back."""

    def versions(name: str) -> Any:
        status = REST.get(f"/connectors/{name}/status").body
        tasks = status["tasks"]
        running = status["connector"]["state"] == "RUNNING" and [t["state"] for t in tasks] == [
            "RUNNING"
        ]
        return running and (status["connector"]["version"], tasks[0]["version"])

    run("versions-start")
    for name in ("counter-a", "counter-b"):
        wait_for(lambda n=name: versions(n) == ("1.0.0", "1.0.0"), 60, what=f"{name} on 1.0.0")
    run("versions-upgrade")
    wait_for(lambda: versions("counter-a") == ("2.0.0", "2.0.0"), 60, what="counter-a on 2.0.0")
    status_a, status_b = (json.loads(line) for line in run("versions-status").splitlines())
    assert status_a["connector"]["version"] == status_a["tasks"][0]["version"] == "2.0.0"
    assert status_b["connector"]["version"] == status_b["tasks"][0]["version"] == "1.0.0"
    run("versions-rollback")
    wait_for(lambda: versions("counter-a") == ("1.0.0", "1.0.0"), 60, what="counter-a rolled back")


def state_file() -> None:
    """The state file's inspection commands, on the demo's own file while the worker runs
    (tests/unit/docs/test_readme_state_file.py checks their output in detail)."""
    tables = run("state-file-inspect")
    assert "connectors" in tables and "migrations" in tables


def readme_spark_read() -> str:
    """The command of the lake sink's section that reads the demo's lake back with Spark."""
    command = block("lake-read").text.strip()
    assert command.startswith(".venv/bin/python -c '") and command.endswith("'")
    return command.removeprefix(".venv/bin/python -c '").removesuffix("'")


def test_the_optional_lake_pipeline_writes_parquet_that_spark_reads(tmp_path: Path) -> None:
    command = block("lake-demo").text.split()
    assert command[0] == "scripts/run.sh"
    with demo(tmp_path, *command[1:]) as (proc, log):
        topic_dir = DATA / "demo" / "lake" / "topics" / "connect-lite-demo" / "partition=0"

        def files() -> list[Path]:
            alive(proc, log)
            return sorted(topic_dir.glob("*.parquet")) if topic_dir.exists() else []

        # flush.size=500 and 1,000 demo lines: two complete files, by the offsets they hold
        found = wait_for(lambda: len(files()) == 2 and files(), 180, what="two Parquet files")
        assert [p.name for p in found] == [
            "connect-lite-demo+0+0000000000+0000000499.parquet",
            "connect-lite-demo+0+0000000500+0000000999.parquet",
        ]
        read = subprocess.run(
            [str(REPO / ".venv" / "bin" / "python"), "-c", readme_spark_read()],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert read.returncode == 0, read.stderr[-3000:]
        first = sorted(SOURCE.read_text().splitlines())[:3]
        assert all(line in read.stdout for line in first), read.stdout
        assert "|partition|" in read.stdout.replace(" ", "")  # the directories' column
        # Getting started's way to remove a connector that a demo added.
        assert run("demo-remove-connector") == ""
        assert set(REST.get("/connectors").body) == {"local-file-source", "local-file-sink"}
        stop(proc, log)


def test_the_jdbc_demo_copies_postgres_into_sqlite_and_stops_its_database(tmp_path: Path) -> None:
    import glob
    import sqlite3

    command = block("jdbc-demo").text.strip()
    assert command == "scripts/setup.sh && .venv/bin/python scripts/demo/jdbc.py"
    shop = DATA / "demo" / "shop.db"
    before = set(glob.glob("/tmp/connect-lite-pg-*"))
    assert _port_free(8083), "the JDBC demo needs port 8083 (standalone.properties); free it"
    with parked_data(tmp_path):
        log = tmp_path / "jdbc-demo.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(["bash", "-c", command], cwd=REPO, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        try:

            def orders() -> int:
                alive(proc, log)
                if not shop.exists():
                    return 0
                with sqlite3.connect(shop) as conn:
                    try:
                        return int(conn.execute('SELECT count(*) FROM "shop-orders"').fetchone()[0])
                    except sqlite3.OperationalError:
                        return 0

            def first_two() -> list[tuple[int, str, int]]:
                alive(proc, log)
                if not shop.exists():
                    return []
                with sqlite3.connect(shop) as conn:
                    try:
                        query = 'SELECT id, item, qty FROM "shop-orders" WHERE id <= 2 ORDER BY id'
                        return conn.execute(query).fetchall()
                    except sqlite3.OperationalError:
                        return []

            # the two first orders, then those the demo adds every 2 s (keyed by id, they
            # spread over the topic's partitions, each written in its own transaction: the
            # first two need not be the first rows in the table)
            wait_for(lambda: orders() >= 4, 240, what="orders copied into data/demo/shop.db")
            wait_for(lambda: first_two() == [(1, "apple", 3), (2, "pear", 1)], 120,
                     what="the first two orders")  # fmt: skip
            assert all_running()
            stop(proc, log)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    assert set(glob.glob("/tmp/connect-lite-pg-*")) <= before  # its database is gone
