"""The network example of docs/security.md (Running it on a network), run as written: openssl,
the properties, the worker with its own embedded broker and state file, curl, kill.

``~`` is a temporary home, ``connect-lite`` the one of this environment, and the two ports are
free ones instead of 8443 and 8084. Between the block's curl and its ``kill %1`` the test
checks what the page says of the worker (401 without the password, the http listener with
it, the health probe with the probe's own user), and after it waits for the worker's exit.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from connect_lite.testing import free_port
from tests.unit.docs.doc_blocks import block, run_shell

pytestmark = pytest.mark.integration

CHECKS = """\
curl -s -o /dev/null -w '%{http_code}\\n' --cacert config/ca.pem https://127.0.0.1:8443/connectors
curl -s -u admin:change-me http://127.0.0.1:8084/connectors
"""


def test_the_network_example_serves_https_with_basic_auth(tmp_path: Path) -> None:
    https_port, http_port = free_port(), free_port()

    def ours(text: str) -> str:
        return text.replace(":8443", f":{https_port}").replace(":8084", f":{http_port}")

    env = os.environ | {
        "HOME": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    setup = run_shell(block("network-setup").text, tmp_path, env)
    assert setup.returncode == 0, setup.stderr
    home = tmp_path / "connect-network"
    assert oct((home / "config" / "credentials.properties").stat().st_mode)[-3:] == "600"
    assert not (home / "config" / "key.pem").exists()
    (home / "network.properties").write_text(ours(block("network-properties").text))

    run = block("network-run").text
    assert run.strip().splitlines()[-1] == "kill %1"
    checks = CHECKS + block("network-probe").text  # the health probe, with its own user
    script = ours(run.replace("kill %1", checks + "kill %1")) + "wait %1\n"
    done = run_shell(script, tmp_path, env, timeout=180)

    log = (home / "worker.log").read_text()
    assert done.returncode == 0, (done.stdout, done.stderr, log[-3000:])  # wait %1: the exit code
    listed, without_password, local, probed = done.stdout.splitlines()
    assert json.loads(listed) == []
    assert without_password == "401"
    assert json.loads(local) == []
    assert json.loads(probed)["status"] == "healthy"
    assert "change-me" not in log and "probe-password" not in log
    assert (home / "data" / "connect-lite.db").exists()  # its own state file
