"""One task's MQTT connection (paho-mqtt 2, the ``mqtt`` extra): a thread of its own that
connects to the first reachable server of ``mqtt.server.uri``, keeps the connection, and
connects again (to the next server) when it drops, until the task stops.

Each connection is a new paho client under the same client id, so an acknowledgement is
only ever sent on the connection that received its message: a message of a dropped
connection is not acknowledged at all, and a persistent session has the broker deliver it
again. Acknowledgements are manual (``manual_ack``) and sent only when the task says so
(:meth:`Connection.ack`), in the order the messages came, as MQTT asks of a receiver.

At QoS 2, paho would answer a PUBLISH with PUBREC at once and keep the message in memory
until PUBREL: a worker killed in between would lose it, as the broker never sends it again
after PUBREC. Here the message is handed on at its PUBLISH and PUBREC waits for the task's
acknowledgement, then PUBREL is answered with PUBCOMP; a worker killed before the
acknowledgement gets the message again (a duplicate, never a loss)."""

from __future__ import annotations

import contextlib
import functools
import logging
import ssl
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from connect_lite.api import ConfigError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Server:
    """One entry of ``mqtt.server.uri``."""

    uri: str
    host: str
    port: int
    tls: bool

    @staticmethod
    def parse(uri: str) -> Server:
        parts = urlsplit(uri.strip())
        scheme = parts.scheme.lower()
        if scheme not in ("tcp", "ssl", "mqtt", "mqtts") or not parts.hostname:
            raise ValueError(
                f"Invalid MQTT server URI {uri!r}: expected tcp://host:port or ssl://host:port"
            )
        tls = scheme in ("ssl", "mqtts")
        try:
            port = parts.port or (8883 if tls else 1883)
        except ValueError:
            raise ValueError(f"Invalid port in MQTT server URI {uri!r}") from None
        return Server(uri.strip(), parts.hostname, port, tls)


def paho() -> Any:
    """paho-mqtt's client module; ConfigError naming the extra when it is not installed."""
    try:
        import paho.mqtt.client as client
    except ImportError as error:
        raise ConfigError(
            "The MQTT connectors need paho-mqtt: pip install 'connect-lite[mqtt]'"
        ) from error
    return client


@dataclass(frozen=True)
class Options:
    """How to connect: the keys every MQTT connector shares."""

    servers: tuple[Server, ...]
    client_id: str
    clean_session: bool
    connect_timeout_s: float
    keepalive_s: int
    username: str | None
    password: str | None
    tls_context: Callable[[], ssl.SSLContext] | None
    max_inflight: int = 1000


@functools.cache
def _client_class() -> Any:
    mqtt = paho()

    class Client(mqtt.Client):  # type: ignore[name-defined]
        """paho's client with QoS 2's PUBREC held until the task acknowledges (see the
        module's doc). It overrides three private methods of paho 2 (pinned <3)."""

        _publish_mid: int | None = None
        _in_publish = False

        def _handle_publish(self) -> Any:
            self._in_publish, self._publish_mid = True, None
            try:
                rc = super()._handle_publish()
            finally:
                self._in_publish = False
            mid = self._publish_mid
            if mid is not None:  # a QoS 2 PUBLISH: hand it on now
                with self._in_message_mutex:
                    message = self._in_messages.pop(mid, None)
                if message is not None:
                    self._handle_on_message(message)
            return rc

        def _send_pubrec(self, mid: int) -> Any:
            if self._in_publish:
                self._publish_mid = mid
                return mqtt.MQTT_ERR_SUCCESS
            return super()._send_pubrec(mid)

        def _handle_pubrel(self) -> Any:
            rc = super()._handle_pubrel()  # the message is no longer held: no callback
            if rc != mqtt.MQTT_ERR_SUCCESS:
                return rc
            (mid,) = struct.unpack("!H", self._in_packet["packet"][:2])
            return self._send_pubcomp(mid)

        def ack(self, mid: int, qos: int) -> Any:
            if qos == 2:
                return super()._send_pubrec(mid)
            return super().ack(mid, qos)

    return Client


class Connection:
    """Keeps one MQTT connection up on a thread of its own.

    ``on_connected(client, session_present, first)`` runs on that thread after each
    successful connect (``first``: the first of this Connection), ``on_message(client,
    message)`` for each message received. ``client`` is the connected paho client, or None.
    """

    RETRY_S = (0.5, 1.0, 2.0, 5.0)

    def __init__(
        self,
        options: Options,
        name: str,
        on_message: Callable[[Any, Any], None] | None = None,
        on_connected: Callable[[Any, bool, bool], None] | None = None,
        manual_ack: bool = False,
    ) -> None:
        self.options = options
        self.name = name
        self._on_message = on_message
        self._on_connected = on_connected
        self._manual_ack = manual_ack
        self._stopping = threading.Event()
        self._connected = threading.Condition()
        self.client: Any = None
        self.last_error: str | None = None
        self._connects = 0
        self._ran_ok = False
        self._thread = threading.Thread(target=self._run, name=f"mqtt-{name}", daemon=True)

    def start(self, wait_s: float | None = None) -> Connection:
        self._thread.start()
        if wait_s is not None:
            self.wait_connected(wait_s)
        return self

    def wait_connected(self, timeout_s: float) -> Any:
        """The connected client, waiting up to ``timeout_s``; None if still not connected."""
        deadline = time.monotonic() + timeout_s
        with self._connected:
            while self.client is None and not self._stopping.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._connected.wait(left)
            return self.client

    def stop(self) -> None:
        self._stopping.set()
        client = self.client
        if client is not None:
            with contextlib.suppress(Exception):  # already gone
                client.disconnect()
        self._thread.join(10)

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def _new_client(self, server: Server) -> Any:
        mqtt = paho()
        client = _client_class()(
            mqtt.CallbackAPIVersion.VERSION2,
            client_id=self.options.client_id,
            clean_session=self.options.clean_session,
            protocol=mqtt.MQTTv311,
            reconnect_on_failure=False,
            manual_ack=self._manual_ack,
        )
        client.connect_timeout = self.options.connect_timeout_s
        client.max_inflight_messages_set(self.options.max_inflight)
        client.max_queued_messages_set(0)  # unbounded: the task bounds what it publishes
        if self.options.username:
            client.username_pw_set(self.options.username, self.options.password)
        if server.tls:
            if self.options.tls_context is None:
                client.tls_set_context(ssl.create_default_context())
            else:
                client.tls_set_context(self.options.tls_context())
        client.on_connect = self._connect_answer
        client.on_message = self._message
        return client

    def _run(self) -> None:
        attempt = 0
        servers = self.options.servers
        while not self._stopping.is_set():
            server = servers[attempt % len(servers)]
            try:
                client = self._new_client(server)
                client.connect(server.host, server.port, keepalive=self.options.keepalive_s)
            except ConfigError as error:
                self.last_error = str(error)
                log.error("MQTT %s: %s", self.name, error)
                self._stopping.wait(self.RETRY_S[-1])
                continue
            except (OSError, ssl.SSLError, ValueError) as error:
                self.last_error = f"cannot connect to {server.uri}: {error}"
                log.warning("MQTT %s: %s", self.name, self.last_error)
                attempt += 1
                self._stopping.wait(self.RETRY_S[min(attempt, len(self.RETRY_S)) - 1])
                continue
            # paho's own thread runs the connection, so that acknowledgements and publishes
            # from other threads are only queued to it (paho writes from one thread).
            ended = threading.Event()
            self._ran_ok = False
            client.on_disconnect = functools.partial(self._disconnected, ended)
            client.loop_start()
            try:
                while not ended.is_set() and not self._stopping.is_set():
                    thread = client._thread  # paho's loop thread
                    if thread is None or not thread.is_alive():
                        break  # a callback failed: paho's loop ended
                    ended.wait(0.5)
            finally:
                with self._connected:
                    if self.client is client:
                        self.client = None
                if self._stopping.is_set():
                    with contextlib.suppress(Exception):  # already gone
                        client.disconnect()
                client.loop_stop()
            if not self._stopping.is_set():  # again at once after a good run, else slower
                attempt = 0 if self._ran_ok else attempt + 1
                self._stopping.wait(self.RETRY_S[min(attempt, len(self.RETRY_S) - 1)])

    def _connect_answer(
        self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any
    ) -> None:
        if reason.is_failure:
            self.last_error = f"the MQTT broker refused the connection: {reason}"
            log.warning("MQTT %s: %s", self.name, self.last_error)
            client.disconnect()
            return
        self.last_error = None
        self._ran_ok = True
        self._connects += 1
        if self._on_connected is not None:
            self._on_connected(client, bool(flags.session_present), self._connects == 1)
        with self._connected:
            self.client = client
            self._connected.notify_all()

    def _message(self, client: Any, userdata: Any, message: Any) -> None:
        if self._on_message is not None:
            self._on_message(client, message)

    def _disconnected(
        self, ended: threading.Event, client: Any, userdata: Any, flags: Any, reason: Any,
        props: Any,
    ) -> None:  # fmt: skip
        with self._connected:
            accepted = self.client is client
            if accepted:
                self.client = None
        ended.set()
        if accepted and not self._stopping.is_set():  # else the refusal says why
            self.last_error = f"disconnected: {reason}"
            log.info("MQTT %s: disconnected (%s)", self.name, reason)
