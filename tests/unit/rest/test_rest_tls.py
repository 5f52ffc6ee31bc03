"""https listeners: real TLS handshakes with PEM and PKCS12 keystores, mTLS, and bad stores."""

from __future__ import annotations

import json
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from connect_lite.api.errors import ConfigError
from connect_lite.config.rest_security import TlsSettings, tls_settings
from connect_lite.logs.loggers import Loggers
from connect_lite.rest import RestServer, create_app
from connect_lite.rest.server import SOCKET_TIMEOUT_S
from connect_lite.rest.tls import server_context
from tests.tls_certs import PASSWORD, Pki, make_pki

from .fake_herder import FakeHerder


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def settings(pki: Pki, store: str = "PEM", client_auth: str = "none") -> TlsSettings:
    keystore = pki.server_pem if store == "PEM" else pki.server_p12
    truststore = pki.ca_pem if store == "PEM" else pki.ca_p12
    return TlsSettings(
        keystore_type=store,
        keystore_location=str(keystore),
        keystore_password=PASSWORD,
        key_password=None,
        truststore_type=store,
        truststore_location=str(truststore),
        truststore_password=PASSWORD,
        client_auth=client_auth,
        key_prefix="listeners.https.",
    )


def serve(tls: TlsSettings, loggers: Loggers) -> Iterator[RestServer]:
    server = RestServer(
        create_app(FakeHerder(), loggers),
        ["https://127.0.0.1:0", "http://127.0.0.1:0"],
        server_context(tls),
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def client_context(pki: Pki, cert: Path | None = None, key: Path | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    if cert is not None:
        context.load_cert_chain(str(cert), str(key))
    return context


def get(url: str, context: ssl.SSLContext | None = None) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=10, context=context) as response:
        body: dict[str, object] = json.loads(response.read())
        return body


@pytest.mark.parametrize("store", ["PEM", "PKCS12"])
def test_https_and_http_listeners_side_by_side(pki: Pki, loggers: Loggers, store: str) -> None:
    for server in serve(settings(pki, store), loggers):
        https_url, http_url = server.urls
        assert https_url.startswith("https://127.0.0.1:")
        assert http_url.startswith("http://127.0.0.1:")
        assert get(https_url + "/", client_context(pki))["version"]
        assert get(http_url + "/")["version"]
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            get(https_url + "/", ssl.create_default_context())  # the test CA is not trusted
        plain = https_url.replace("https://", "http://")
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            get(plain + "/")


def test_mtls_required_accepts_signed_clients_only(pki: Pki, loggers: Loggers) -> None:
    for server in serve(settings(pki, "PEM", "required"), loggers):
        url = server.urls[0] + "/connectors"
        assert get(url, client_context(pki, pki.client_cert, pki.client_key)) == []  # type: ignore[comparison-overlap]
        for context in (client_context(pki), client_context(pki, pki.rogue_cert, pki.rogue_key)):
            with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
                get(url, context)


def test_mtls_requested_lets_clients_without_a_certificate_in(pki: Pki, loggers: Loggers) -> None:
    for server in serve(settings(pki, "PKCS12", "requested"), loggers):
        url = server.urls[0] + "/connectors"
        assert get(url, client_context(pki)) == []  # type: ignore[comparison-overlap]
        assert get(url, client_context(pki, pki.client_cert, pki.client_key)) == []  # type: ignore[comparison-overlap]
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
            get(url, client_context(pki, pki.rogue_cert, pki.rogue_key))


def test_bad_stores_are_config_errors_naming_the_key(pki: Pki, tmp_path: Path) -> None:
    good = settings(pki, "PKCS12", "required")
    cases = [
        (
            replace(good, keystore_location=str(tmp_path / "none.p12")),
            "keystore.location: cannot read",
        ),
        (replace(good, keystore_password="wrong"), "cannot load the PKCS12 keystore"),
        (replace(good, keystore_type="PEM"), "cannot load the PEM keystore"),
        (
            replace(good, truststore_location=str(pki.client_key)),
            "cannot load the PKCS12 truststore",
        ),
        (replace(good, truststore_location=None), "client.auth=required needs"),
    ]
    for tls, message in cases:
        with pytest.raises(ConfigError, match=f"^listeners.https.ssl.*{message}"):
            server_context(tls)


def test_listener_keys_are_all_or_nothing_as_in_kafka(pki: Pki) -> None:
    unprefixed = {"ssl.keystore.location": str(pki.server_p12), "ssl.keystore.password": "x"}
    assert tls_settings(unprefixed).keystore_location == str(pki.server_p12)
    assert tls_settings(unprefixed).key_prefix == ""
    both = {**unprefixed, "listeners.https.ssl.keystore.location": "/other.pem"}
    chosen = tls_settings(both)
    assert (chosen.keystore_location, chosen.keystore_password) == ("/other.pem", None)
    with pytest.raises(ConfigError, match=r"^listeners.https.ssl.keystore.location is required"):
        tls_settings({"listeners.https.ssl.client.auth": "required"})
    with pytest.raises(ConfigError, match=r"ssl.keystore.type"):
        tls_settings({"ssl.keystore.location": "/k", "ssl.keystore.type": "JKS"})


def test_silent_clients_do_not_hold_back_the_https_listener(pki: Pki, loggers: Loggers) -> None:
    """The handshake happens in the request thread: clients that connect and send nothing
    cannot stall the one accepting thread, so others are served before the socket timeout."""
    for server in serve(settings(pki), loggers):
        host, port = server.addresses[0]
        silent = [socket.create_connection((host, port)) for _ in range(3)]
        try:
            url = server.urls[0] + "/health"
            with urllib.request.urlopen(
                url, timeout=SOCKET_TIMEOUT_S / 2, context=client_context(pki)
            ) as response:
                assert response.status == 200
        finally:
            for sock in silent:
                sock.close()
