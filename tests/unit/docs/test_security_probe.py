"""The security page's health probes: the Kubernetes probe sends the credentials that the
curl probe uses, and the example's credentials file has that user."""

from __future__ import annotations

import base64
import re

from tests.unit.docs.doc_blocks import block


def test_the_kubernetes_probe_sends_the_curl_probes_user() -> None:
    [user] = re.findall(r"-u (\S+) ", block("network-probe").text)
    [header] = re.findall(r"value: Basic (\S+)", block("network-probe-kubernetes").text)
    assert base64.b64decode(header).decode() == user
    name, password = user.split(":")
    assert f"{name}={password}\\n" in block("network-setup").text
    assert "path: /health" in block("network-probe-kubernetes").text
