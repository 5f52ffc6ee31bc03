"""Test certificates made on the spot: a CA, a server certificate for 127.0.0.1, a client one."""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

PASSWORD = "changeit"


@dataclass(frozen=True)
class Pki:
    """Files for https listeners and clients, all under one directory."""

    ca_pem: Path  # the CA certificate (a PEM truststore)
    ca_p12: Path  # the CA certificate in a PKCS12 truststore (password PASSWORD)
    server_pem: Path  # server private key, then its certificate and the CA's: one PEM keystore
    server_p12: Path  # the same in PKCS12 (password PASSWORD)
    client_cert: Path  # a client certificate signed by the CA, and its key
    client_key: Path
    rogue_cert: Path  # a self-signed client certificate the CA never signed, and its key
    rogue_key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _cert(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[str, ec.EllipticCurvePrivateKey] | None,
    ca: bool = False,
    server: bool = False,
) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    issuer_name, issuer_key = issuer if issuer else (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if server:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def make_pki(directory: Path) -> Pki:
    """Write a fresh CA, server and client certificates into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _cert("connect-lite test CA", ca_key, None, ca=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = _cert("127.0.0.1", server_key, ("connect-lite test CA", ca_key), server=True)
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = _cert("test-client", client_key, ("connect-lite test CA", ca_key))
    rogue_key = ec.generate_private_key(ec.SECP256R1())
    rogue = _cert("rogue-client", rogue_key, None)
    encryption = serialization.BestAvailableEncryption(PASSWORD.encode())
    files = {
        "ca.pem": _pem(ca),
        "ca.p12": pkcs12.serialize_java_truststore(
            [pkcs12.PKCS12Certificate(ca, b"ca")], encryption
        ),
        "server.pem": _key_pem(server_key) + _pem(server) + _pem(ca),
        "server.p12": pkcs12.serialize_key_and_certificates(
            b"server", server_key, server, [ca], encryption
        ),
        "client.pem": _pem(client),
        "client.key": _key_pem(client_key),
        "rogue.pem": _pem(rogue),
        "rogue.key": _key_pem(rogue_key),
    }
    for name, data in files.items():
        (directory / name).write_bytes(data)
    d = directory
    return Pki(
        d / "ca.pem",
        d / "ca.p12",
        d / "server.pem",
        d / "server.p12",
        d / "client.pem",
        d / "client.key",
        d / "rogue.pem",
        d / "rogue.key",
    )
