"""TLS for https listeners: an SSLContext from a PEM or PKCS12 keystore and truststore (the
stores load as plugins' do, through ``connect_lite.api.tls``)."""

from __future__ import annotations

import ssl

from connect_lite.api.errors import ConfigError
from connect_lite.api.tls import load_keystore, load_truststore
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
    load_keystore(context, tls)
    context.verify_mode = VERIFY_MODES[tls.client_auth]
    if tls.truststore_location:
        load_truststore(context, tls)
    elif context.verify_mode != ssl.CERT_NONE:
        raise ConfigError(
            f"{tls.key('ssl.client.auth')}={tls.client_auth} needs "
            f"{tls.key('ssl.truststore.location')}"
        )
    return context


__all__ = ["server_context"]
