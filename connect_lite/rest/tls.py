"""TLS for https listeners: an SSLContext from a PEM or PKCS12 keystore and truststore."""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Callable
from pathlib import Path

from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    PrivateFormat,
    pkcs12,
)

from connect_lite.api.errors import ConfigError
from connect_lite.config.rest_security import TlsSettings

VERIFY_MODES = {
    "none": ssl.CERT_NONE,
    "requested": ssl.CERT_OPTIONAL,
    "required": ssl.CERT_REQUIRED,
}


def server_context(tls: TlsSettings) -> ssl.SSLContext:
    """A server-side context (TLS 1.2+); ConfigError naming the key when a store is bad."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    _load_keystore(context, tls)
    context.verify_mode = VERIFY_MODES[tls.client_auth]
    if tls.truststore_location:
        _load_truststore(context, tls)
    elif context.verify_mode != ssl.CERT_NONE:
        raise ConfigError(
            f"{tls.key('ssl.client.auth')}={tls.client_auth} needs "
            f"{tls.key('ssl.truststore.location')}"
        )
    return context


def _load_keystore(context: ssl.SSLContext, tls: TlsSettings) -> None:
    key = tls.key("ssl.keystore.location")
    data = _read(tls.keystore_location, key)
    try:
        if tls.keystore_type == "PEM":
            # One file holding the private key and its certificate chain.
            password = tls.key_password or tls.keystore_password
            context.load_cert_chain(tls.keystore_location, password=password or _no_password(tls))
        else:
            _load_pkcs12_chain(context, data, tls)
    except (ssl.SSLError, ValueError, TypeError) as exc:
        raise ConfigError(
            f"{key}: cannot load the {tls.keystore_type} keystore {tls.keystore_location}: "
            f"{_reason(exc)} (check {tls.key('ssl.keystore.password')} / "
            f"{tls.key('ssl.key.password')})"
        ) from None


def _load_pkcs12_chain(context: ssl.SSLContext, data: bytes, tls: TlsSettings) -> None:
    """ssl loads keys only from files: write the chain to a private file, load, delete it."""
    store = pkcs12.load_pkcs12(data, _bytes(tls.keystore_password))
    if store.key is None or store.cert is None:
        raise ValueError("the keystore holds no private key with a certificate")
    secret = os.urandom(16).hex()
    pem = store.key.private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(secret.encode())
    )
    for cert in [store.cert, *store.additional_certs]:
        pem += cert.certificate.public_bytes(Encoding.PEM)
    with tempfile.TemporaryDirectory(prefix="connect-lite-tls-") as private_dir:
        path = Path(private_dir) / "chain.pem"
        path.touch(mode=0o600)
        path.write_bytes(pem)
        context.load_cert_chain(str(path), password=secret)


def _load_truststore(context: ssl.SSLContext, tls: TlsSettings) -> None:
    key = tls.key("ssl.truststore.location")
    location = str(tls.truststore_location)
    data = _read(location, key)
    try:
        if tls.truststore_type == "PEM":
            context.load_verify_locations(cadata=data.decode("ascii"))
            return
        store = pkcs12.load_pkcs12(data, _bytes(tls.truststore_password))
        certs = [c.certificate for c in store.additional_certs]
        if store.cert is not None:
            certs.append(store.cert.certificate)
        if not certs:
            raise ValueError("the truststore holds no certificate")
        pem = b"".join(cert.public_bytes(Encoding.PEM) for cert in certs)
        context.load_verify_locations(cadata=pem.decode("ascii"))
    except (ssl.SSLError, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{key}: cannot load the {tls.truststore_type} truststore {location}: {_reason(exc)}"
        ) from None


def _no_password(tls: TlsSettings) -> Callable[[], str]:
    """For an encrypted key with no password set: fail naming the key (OpenSSL would prompt)."""

    def refuse() -> str:
        raise ConfigError(
            f"{tls.key('ssl.keystore.location')}: the private key is encrypted; set "
            f"{tls.key('ssl.key.password')}"
        )

    return refuse


def _read(path: str, key: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{key}: cannot read {path}: {exc.strerror or exc}") from None


def _bytes(password: str | None) -> bytes | None:
    return password.encode() if password else None


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


__all__ = ["server_context"]
