"""Schemathesis against a real worker (embedded broker, Spark, SQLite): every operation of
``GET /openapi.json`` with generated valid and invalid inputs, then stateful sequences that follow
the document's links (create, read, update, pause, stop, delete).

The checks are all of schemathesis's: no 5xx the document does not declare, every status code,
content type, header and body as declared, invalid inputs refused and valid ones accepted. The
worker must still be healthy afterwards. CI runs a bounded number of examples with a fixed seed;
``scripts/fuzz-nightly.sh`` runs many more with a fresh seed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_lite.testing import EmbeddedConnect
from tests.integration.testkit import worker_options

pytestmark = pytest.mark.integration

EXAMPLES = os.environ.get("CONNECT_LITE_FUZZ_EXAMPLES", "25")
"""Generated cases per operation and phase (CI: a few; nightly: hundreds)."""
SEED = os.environ.get("CONNECT_LITE_FUZZ_SEED", "20261124")
"""A fixed seed makes CI's run the same every time; ``random`` lets schemathesis pick one."""
TIME_LIMIT_S = float(os.environ.get("CONNECT_LITE_FUZZ_TIME_LIMIT_S", "900"))
"""The run is cut off (and fails) after this long."""
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
CONFIG = Path(__file__).with_name("schemathesis.toml")
"""The few checks Kafka's behaviour rules out, each with its reason."""


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    """A worker of its own with the embedded broker: the fuzzer creates and deletes at will."""
    workdir = tmp_path_factory.mktemp("fuzzed")
    options = worker_options(
        workdir=workdir, start_broker=False, worker_properties={"embedded.broker.enable": "true"}
    )
    with EmbeddedConnect(**options) as worker:
        yield worker


@pytest.mark.timeout(TIME_LIMIT_S + 60)
def test_schemathesis_finds_no_undeclared_error_and_no_mismatch(
    fuzzed: EmbeddedConnect, tmp_path: Path
) -> None:
    operations = _operations(fuzzed.http.get("/openapi.json").body)
    junit = tmp_path / "junit.xml"
    command = [
        str(SCHEMATHESIS),
        "--no-color",
        "--config-file",
        str(CONFIG),
        "run",
        fuzzed.rest_url + "/openapi.json",
        "--max-examples",
        EXAMPLES,
        "--workers",
        "1",
        "--request-timeout",
        "60",
        "--generation-database",
        "none",
        "--report",
        "junit",
        "--report-junit-path",
        str(junit),
        "--output-truncate",
        "false",
    ]
    if SEED != "random":
        command += ["--seed", SEED]
    run = subprocess.run(
        command, capture_output=True, text=True, timeout=TIME_LIMIT_S, check=False, cwd=tmp_path
    )
    output = run.stdout + run.stderr
    print(output)  # shown with -s, and on failure
    assert run.returncode == 0, output[-60000:]

    tested = {case.get("name") for case in ET.parse(junit).iter("testcase")}
    # Schemathesis leaves out the operation that served it the document, which it has used.
    missing = {op for op in operations if op not in tested} - {"GET /openapi.json"}
    assert "Stateful tests" in tested, output[-5000:]  # the sequences through the links ran
    assert not missing, f"operations schemathesis did not run: {sorted(missing)}\n{output[-5000:]}"
    health = fuzzed.http.get("/health")
    assert health.status == 200, health.body
    assert fuzzed.worker_exit_code is None, fuzzed.log_text()[-3000:]


def _operations(document: dict[str, object]) -> list[str]:
    """``METHOD /path`` of every operation the document describes."""
    paths = document["paths"]
    assert isinstance(paths, dict) and paths
    return [
        f"{method.upper()} {path}"
        for path, item in paths.items()
        for method in item
        if method in ("get", "put", "post", "patch", "delete")
    ]
