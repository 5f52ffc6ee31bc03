"""The README's "Running it on a network" example, run as written: openssl, the properties, curl.

Only the broker address and the two ports are replaced (the test broker, free ports).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.worker_process import REPO, free_port, wait_for

pytestmark = pytest.mark.integration

README = (REPO / "README.md").read_text()


def example() -> tuple[str, str, str]:
    """The setup commands, the properties and the run commands of the README's example."""
    section = re.search(
        r"<!-- network-example:begin.*?-->\n(.*?)<!-- network-example:end -->", README, re.S
    )
    assert section is not None
    blocks = re.findall(r"```[a-z]*\n(.*?)```", section.group(1), re.S)
    assert len(blocks) == 3
    setup, properties, run = blocks
    return setup, properties, run


def test_the_network_example_serves_https_with_basic_auth(
    bootstrap_servers: str, tmp_path: Path
) -> None:
    setup, properties, run = example()
    subprocess.run(["bash", "-ec", setup], cwd=tmp_path, check=True, capture_output=True)
    assert oct((tmp_path / "config" / "credentials.properties").stat().st_mode)[-3:] == "600"
    https_port, http_port = free_port(), free_port()
    properties = re.sub(
        r"bootstrap.servers=.*", f"bootstrap.servers={bootstrap_servers}", properties
    )
    properties = properties.replace(":8443", f":{https_port}").replace(":8083", f":{http_port}")
    (tmp_path / "network.properties").write_text(properties)
    start, curl = run.strip().splitlines()
    assert start == "python app.py network.properties &"
    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen(
        [sys.executable, str(REPO / "app.py"), "network.properties"],
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        curl = curl.replace(":8443", f":{https_port}")

        def listed() -> object:
            out = subprocess.run(curl, shell=True, cwd=tmp_path, capture_output=True, text=True)
            return out.returncode == 0 and json.loads(out.stdout) == []

        wait_for(listed, 120, what="curl of the README example answering []")
        without = subprocess.run(
            f"curl -s -o /dev/null -w '%{{http_code}}' --cacert config/ca.pem "
            f"https://127.0.0.1:{https_port}/connectors",
            shell=True,
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert without.stdout == "401"
        local = subprocess.run(
            f"curl -s -u admin:change-me http://127.0.0.1:{http_port}/connectors",
            shell=True,
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert json.loads(local.stdout) == []
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            code = worker.wait(60)
        finally:
            if worker.poll() is None:
                worker.kill()  # leave no worker behind, whatever failed
            log.close()
    assert code == 0, (tmp_path / "worker.log").read_text()[-3000:]
    assert "change-me" not in (tmp_path / "worker.log").read_text()
