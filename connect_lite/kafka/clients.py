"""librdkafka configs for connector clients: Kafka Connect's merge order plus Java-key translation.

Every builder merges three layers, later layers winning, as Kafka Connect's ``Worker`` does:
framework defaults, then the worker's ``producer.*``/``consumer.*``/``admin.*`` keys (prefix
stripped), then the connector's ``*.override.*`` keys (prefix stripped by the caller, policy
checked elsewhere). Each layer is translated from Java client keys to librdkafka keys first, so a
Java-style override still beats a librdkafka-style worker key for the same setting.

Keys librdkafka does not know at all are not filtered here; ``native.new_client`` drops them
when the client is built, so an unknown key never stops the worker.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Mapping

from connect_lite.api.config import prefixed
from connect_lite.config.override_policy import DENIED_KEYS
from connect_lite.kafka.native import config_refusal

log = logging.getLogger(__name__)

INT_MAX = 2_147_483_647

# Producer ordering and throughput. Kafka Connect's producer uses acks=all,
# max.in.flight.requests.per.connection=1 and no idempotence, which keeps records of a partition
# in order even across retries. Measured on the embedded Tansu broker (2 cores, 100-byte records,
# confluent-kafka 2.16): max.in.flight=1 produces ~0.90 M records/s, the same as max.in.flight=5
# (~0.92 M/s) because the Python produce() loop is the bottleneck, while enable.idempotence=true
# drops to ~0.37-0.50 M/s. So Kafka's safe defaults cost nothing here and are kept.
PRODUCER_DEFAULTS: dict[str, str] = {
    "acks": "all",
    "enable.idempotence": "false",
    "max.in.flight.requests.per.connection": "1",
    "delivery.timeout.ms": str(INT_MAX),
    # Java's partitioner: a keyed record lands on the partition a Java client would pick.
    "partitioner": "murmur2_random",
    # A source batch is up to 200,000 records; librdkafka's default local queue holds 100,000,
    # so produce() kept blocking halfway through each batch. Memory stays bounded by
    # queue.buffering.max.kbytes (1 GiB by default).
    "queue.buffering.max.messages": "1000000",
    # How long a record may wait in the client for others to share its request (librdkafka's
    # default, stated: it bounds a lone record's latency).
    "linger.ms": "5",
}

# Consumer fetch tuning. librdkafka's defaults (1 MiB per partition, 100k queued messages) give
# ~0.2 M records/s on Tansu; with these values a 1 M record topic reads at ~1.6-1.8 M/s. Larger
# values (50 MiB per partition) measured no faster, and queued memory stays bounded by
# queued.max.messages.kbytes (64 MiB by default).
# A sink often subscribes before its topic exists (the source has not produced yet), and
# librdkafka only looks again at the next metadata refresh: 5 minutes by default. Refreshing
# every second lets a sink find a new topic, or a new topics.regex match, within about one.
# A fetch with nothing to return waits fetch.wait.max.ms on the broker; librdkafka's 500 ms
# gave a lone record 120-200 ms on Tansu, 50 ms gives it ~10 ms (scripts/bench_latency.py).
CONSUMER_DEFAULTS: dict[str, str] = {
    "topic.metadata.refresh.interval.ms": "1000",
    "fetch.wait.max.ms": "50",
    "enable.auto.commit": "false",
    "auto.offset.reset": "earliest",
    "fetch.max.bytes": str(50 * 1024 * 1024),
    "max.partition.fetch.bytes": str(10 * 1024 * 1024),
    "queued.min.messages": "500000",
}

_CLIENT_PREFIXES = ("producer.", "consumer.", "admin.")

# Java client keys with a different name in librdkafka.
_RENAMED = {
    "max.request.size": "message.max.bytes",
    "send.buffer.bytes": "socket.send.buffer.bytes",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
}

# Java client keys with no librdkafka equivalent (serialization is always bytes here, and
# produce() never blocks). Dropped without trying them on librdkafka.
_DROPPED = frozenset(
    {
        "key.serializer",
        "value.serializer",
        "key.deserializer",
        "value.deserializer",
        "max.block.ms",
        "max.poll.records",
        "interceptor.classes",
        "metric.reporters",
        "exclude.internal.topics",
        "default.api.timeout.ms",
    }
)

_ASSIGNORS = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}

_LIBRDKAFKA_ASSIGNORS = frozenset({"range", "roundrobin", "cooperative-sticky"})

_JAAS_CREDENTIAL = re.compile(r'\b(username|password)\s*=\s*"((?:[^"\\]|\\.)*)"')


def _buffer_memory(value: str) -> dict[str, str]:
    try:
        kbytes = max(1, math.ceil(int(value) / 1024))
    except ValueError:  # refused when written (a LONG); here only in a client never built
        return {}
    return {"queue.buffering.max.kbytes": str(kbytes)}


def _assignment_strategy(value: str) -> dict[str, str]:
    names = [_ASSIGNORS.get(part.strip(), part.strip()) for part in value.split(",")]
    return {"partition.assignment.strategy": ",".join(n for n in names if n)}


def _auto_offset_reset(value: str) -> dict[str, str]:
    return {"auto.offset.reset": "error" if value.strip().lower() == "none" else value}


def _endpoint_identification(value: str) -> dict[str, str]:
    return {"ssl.endpoint.identification.algorithm": value.strip() or "none"}


def _jaas_config(value: str) -> dict[str, str]:
    """PLAIN and SCRAM login modules carry a username and password librdkafka can use."""
    if "PlainLoginModule" not in value and "ScramLoginModule" not in value:
        return {}
    found = {k: v.replace('\\"', '"') for k, v in _JAAS_CREDENTIAL.findall(value)}
    return {f"sasl.{k}": v for k, v in found.items()}


_CONVERTED: dict[str, Callable[[str], dict[str, str]]] = {
    "buffer.memory": _buffer_memory,
    "partition.assignment.strategy": _assignment_strategy,
    "auto.offset.reset": _auto_offset_reset,
    "ssl.endpoint.identification.algorithm": _endpoint_identification,
    "sasl.jaas.config": _jaas_config,
}


def translate(props: Mapping[str, str]) -> dict[str, str]:
    """Java client keys → librdkafka keys; keys without an equivalent are dropped."""
    out: dict[str, str] = {}
    dropped: list[str] = []
    for key, value in props.items():
        value = str(value)
        if key in _DROPPED:
            dropped.append(key)
        elif key in _RENAMED:
            out[_RENAMED[key]] = value
        elif key in _CONVERTED:
            converted = _CONVERTED[key](value)
            out.update(converted)
            if not converted:
                dropped.append(key)
        else:
            out[key] = value
    if dropped:
        log.debug("client keys without a librdkafka equivalent, dropped: %s", sorted(dropped))
    return out


def librdkafka_refusal(key: str, value: str) -> str | None:
    """Why librdkafka would refuse the Java client key ``key`` set to ``value`` (translated
    as a client's config is), or None: a ``NativeCheck`` for ``config.client_configs``.

    No client is built (``native.config_refusal``). An assignor librdkafka lacks, which it
    would refuse only when the consumer is built, is refused here too. Keys that load code
    (``DENIED_KEYS``: librdkafka loads ``plugin.library.paths`` as soon as it is set) are
    never tried: they are not a connector's to set, and the worker's own are trusted."""
    if key.strip().lower() in DENIED_KEYS:
        return None
    translated = translate({key: value})
    strategy = translated.get("partition.assignment.strategy")
    if strategy is not None:
        unknown = [n for n in strategy.split(",") if n.strip() not in _LIBRDKAFKA_ASSIGNORS]
        if unknown:
            return f"Unsupported partition.assignment.strategy: {unknown[0].strip()}"
    return config_refusal(translated) if translated else None


def _merge(*layers: Mapping[str, str]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for layer in layers:
        merged.update(translate(layer))
    return merged


def _bootstrap(worker_props: Mapping[str, str]) -> dict[str, str]:
    servers = worker_props.get("bootstrap.servers")
    return {"bootstrap.servers": servers} if servers else {}


def producer_config(
    worker_props: Mapping[str, str],
    connector: str,
    task: int,
    overrides: Mapping[str, str] | None = None,
    client_id_prefix: str = "connector-producer",
) -> dict[str, str]:
    """A source task's producer (``client_id_prefix="connector-dlq-producer"`` for a DLQ)."""
    defaults = {
        **_bootstrap(worker_props),
        **PRODUCER_DEFAULTS,
        "client.id": f"{client_id_prefix}-{connector}-{task}",
    }
    return _merge(defaults, prefixed(worker_props, "producer."), overrides or {})


def consumer_config(
    worker_props: Mapping[str, str],
    connector: str,
    task: int,
    group_id: str,
    overrides: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A sink task's consumer in group ``group_id`` (the connector config's, see
    ConnectorConfig.consumer_group_id)."""
    defaults = {
        **_bootstrap(worker_props),
        "group.id": group_id,
        "client.id": f"connector-consumer-{connector}-{task}",
        **CONSUMER_DEFAULTS,
    }
    return _merge(defaults, prefixed(worker_props, "consumer."), overrides or {})


def admin_config(
    worker_props: Mapping[str, str], overrides: Mapping[str, str] | None = None
) -> dict[str, str]:
    """An admin client: every unprefixed worker key, then ``admin.*``, then overrides."""
    unprefixed = {k: v for k, v in worker_props.items() if not k.startswith(_CLIENT_PREFIXES)}
    return _merge(unprefixed, prefixed(worker_props, "admin."), overrides or {})


__all__ = [
    "CONSUMER_DEFAULTS",
    "PRODUCER_DEFAULTS",
    "admin_config",
    "consumer_config",
    "librdkafka_refusal",
    "producer_config",
    "translate",
]
