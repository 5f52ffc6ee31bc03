"""TLS stores for plugins and the worker: an :class:`ssl.SSLContext` from a PEM or PKCS12
keystore and truststore, as Kafka's ``ssl.keystore.*`` / ``ssl.truststore.*`` keys name them.

A connector that talks TLS (the HTTP sink's ``https.ssl.*``, MQTT's ``mqtt.ssl.*``) describes
its stores with :class:`TlsStores`, naming its own keys, and asks :func:`client_context` for a
context; the https listeners load theirs with the same functions. Java's JKS stores cannot be
read: the error says how to convert one to PKCS12."""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from connect_lite.api.errors import ConfigError

STORE_TYPES = ("PEM", "PKCS12")
"""The store types that load; ``None`` (or ``JKS``, Kafka's default) as a type reads the file
to tell PEM from PKCS12."""


class StoreSettings(Protocol):
    """What the loaders read: the stores, their passwords, and the keys that name them."""

    @property
    def keystore_type(self) -> str | None: ...

    @property
    def keystore_location(self) -> str | None: ...

    @property
    def keystore_password(self) -> str | None: ...

    @property
    def key_password(self) -> str | None: ...

    @property
    def truststore_type(self) -> str | None: ...

    @property
    def truststore_location(self) -> str | None: ...

    @property
    def truststore_password(self) -> str | None: ...

    def key(self, name: str) -> str:
        """The key a user sets for Kafka's ``name`` (``ssl.keystore.location``...)."""
        ...


@dataclass(frozen=True)
class TlsStores:
    """A plugin's stores. ``names`` maps Kafka's key names (``ssl.keystore.location``,
    ``ssl.keystore.password``, ``ssl.key.password``, ``ssl.truststore.location``,
    ``ssl.truststore.password``) to the plugin's own, for the errors; unmapped names get
    ``prefix``."""

    keystore_location: str | None = None
    keystore_password: str | None = field(default=None, repr=False)
    key_password: str | None = field(default=None, repr=False)
    truststore_location: str | None = None
    truststore_password: str | None = field(default=None, repr=False)
    keystore_type: str | None = None
    truststore_type: str | None = None
    prefix: str = ""
    names: Mapping[str, str] = field(default_factory=dict)

    def key(self, name: str) -> str:
        return self.names.get(name) or self.prefix + name


def client_context(
    stores: StoreSettings, *, check_hostname: bool = True, minimum_version: str | None = None
) -> ssl.SSLContext:
    """A client-side context (TLS 1.2 and newer unless ``minimum_version``, e.g. ``TLSv1.3``):
    the truststore's certificates, else the system's; the keystore's key and chain when a
    client certificate is asked for. ConfigError naming the key when a store is bad (its
    ``errors`` hold the message under the key)."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    context.minimum_version = _version(minimum_version, stores.key("ssl.protocol"))
    context.check_hostname = check_hostname
    if stores.truststore_location:
        load_truststore(context, stores)
    if stores.keystore_location:
        load_keystore(context, stores)
    return context


_VERSIONS = {
    "TLSV1.2": ssl.TLSVersion.TLSv1_2,
    "TLSV1.3": ssl.TLSVersion.TLSv1_3,
    "TLS": ssl.TLSVersion.TLSv1_2,
}


def _version(name: str | None, key: str) -> ssl.TLSVersion:
    if not name:
        return ssl.TLSVersion.TLSv1_2
    found = _VERSIONS.get(name.strip().upper())
    if found is None:
        raise _refused(key, f"Unsupported TLS protocol {name}: use TLSv1.2 or TLSv1.3")
    return found


def _refused(key: str, message: str) -> ConfigError:
    """The error of a key: its ``errors`` name the key, so that a plugin's validate reports it
    there without reading the message."""
    return ConfigError(message, {key: [message]})


def load_keystore(context: ssl.SSLContext, stores: StoreSettings) -> None:
    """The private key and its certificate chain (a PEM file holding both, or PKCS12)."""
    key = stores.key("ssl.keystore.location")
    location = str(stores.keystore_location)
    data = _read(location, key)
    kind = _kind(data, stores.keystore_type, key, location)
    try:
        if kind == "PEM":
            password = stores.key_password or stores.keystore_password
            context.load_cert_chain(location, password=password or _no_password(stores))
        else:
            _load_pkcs12_chain(context, data, stores)
    except (ssl.SSLError, ValueError, TypeError) as exc:
        raise _refused(key, f"{key}: cannot load the {kind} keystore {location}: "
                            f"{_reason(exc)} (check {stores.key('ssl.keystore.password')} / "
                            f"{stores.key('ssl.key.password')})") from None  # fmt: skip


def load_truststore(context: ssl.SSLContext, stores: StoreSettings) -> None:
    """The certificates to trust (PEM, or the certificates of a PKCS12 store)."""
    from cryptography.hazmat.primitives.serialization import Encoding, pkcs12

    key = stores.key("ssl.truststore.location")
    location = str(stores.truststore_location)
    data = _read(location, key)
    kind = _kind(data, stores.truststore_type, key, location)
    try:
        if kind == "PEM":
            context.load_verify_locations(cadata=data.decode("ascii"))
            return
        store = pkcs12.load_pkcs12(data, _bytes(stores.truststore_password))
        certs = [c.certificate for c in store.additional_certs]
        if store.cert is not None:
            certs.append(store.cert.certificate)
        if not certs:
            raise ValueError("the truststore holds no certificate")
        pem = b"".join(cert.public_bytes(Encoding.PEM) for cert in certs)
        context.load_verify_locations(cadata=pem.decode("ascii"))
    except (ssl.SSLError, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise _refused(
            key, f"{key}: cannot load the {kind} truststore {location}: {_reason(exc)}"
        ) from None


def _kind(data: bytes, declared: str | None, key: str, location: str) -> str:
    """The store's type: as declared, or read from the file when undeclared or JKS (Kafka's
    default, which Java's stores have)."""
    kind = (declared or "").strip().upper()
    if kind in STORE_TYPES:
        return kind
    if kind not in ("", "JKS"):
        raise _refused(key, f"{key}: unsupported store type {declared}: use PEM or PKCS12")
    if data.lstrip().startswith(b"-----BEGIN"):
        return "PEM"
    if data[:4] == b"\xfe\xed\xfe\xed":  # JKS's magic number
        raise _refused(
            key,
            f"{key}: {location} is a Java KeyStore (JKS), which connect-lite cannot read; "
            "convert it: keytool -importkeystore -srckeystore FILE.jks -destkeystore FILE.p12 "
            "-deststoretype PKCS12",
        )
    return "PKCS12"


def _load_pkcs12_chain(context: ssl.SSLContext, data: bytes, stores: StoreSettings) -> None:
    """ssl loads keys only from files: write the chain to a private file, load, delete it."""
    from cryptography.hazmat.primitives.serialization import (
        BestAvailableEncryption,
        Encoding,
        PrivateFormat,
        pkcs12,
    )

    store = pkcs12.load_pkcs12(data, _bytes(stores.keystore_password))
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


def _no_password(stores: StoreSettings) -> Callable[[], str]:
    """For an encrypted key with no password set: fail naming the key (OpenSSL would prompt)."""

    def refuse() -> str:
        key = stores.key("ssl.keystore.location")
        raise _refused(
            key, f"{key}: the private key is encrypted; set {stores.key('ssl.key.password')}"
        )

    return refuse


def _read(path: str, key: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise _refused(key, f"{key}: cannot read {path}: {exc.strerror or exc}") from None


def _bytes(password: str | None) -> bytes | None:
    return password.encode() if password else None


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


__all__ = [
    "STORE_TYPES",
    "StoreSettings",
    "TlsStores",
    "client_context",
    "load_keystore",
    "load_truststore",
]
