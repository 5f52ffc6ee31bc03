"""KIP-875: reading, altering and resetting a connector's offsets (source store, sink group)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from connect_lite.api.connector import SinkConnector, SourceConnector
from connect_lite.api.errors import ConnectError
from connect_lite.api.records import Partition, TopicPartition, canonical_json
from connect_lite.config.connector_config import ConnectorConfig
from connect_lite.config.override_policy import OverridePolicy
from connect_lite.control import offset_requests as body_rules
from connect_lite.control.entities import ConnectorOffset, ConnectorOffsets, Message
from connect_lite.kafka.admin import Admin
from connect_lite.kafka.clients import admin_config
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginType
from connect_lite.storage.base import OffsetStore

log = logging.getLogger(__name__)

AdminFactory = Callable[[Mapping[str, str]], Admin]

_CONNECTOR_TYPES = (PluginType.SOURCE, PluginType.SINK)

# Error texts of the admin layer that mean "the group still has members".
_MEMBER_ERRORS = ("active members", "UNKNOWN_MEMBER_ID", "NON_EMPTY_GROUP", "GROUP_SUBSCRIBED")


def no_offset_delete_message(name: str, partitions: list[TopicPartition]) -> str:
    listed = ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(partitions))
    return (
        f"Failed to alter consumer group offsets for connector {name}: a null offset asks to "
        f"delete the committed offset of {listed}, which needs Kafka's OffsetDelete API; "
        "connect-lite's Kafka client does not provide it and the embedded broker (Tansu) does "
        "not implement it. Nothing was changed. Give these partitions a 'kafka_offset', or "
        f"reset all of the connector's offsets with DELETE /connectors/{name}/offsets."
    )


class ConnectorOffsetsAPI:
    """The offsets operations behind the herder; the herder checks existence and state first."""

    def __init__(
        self,
        plugins: Plugins,
        offsets: OffsetStore,
        worker_props: Mapping[str, str],
        admin_factory: AdminFactory = Admin,
        override_policy: OverridePolicy | None = None,
    ) -> None:
        self._override_policy = override_policy or OverridePolicy("All")
        self._plugins = plugins
        self._store = offsets
        self._props = worker_props
        self._admin_factory = admin_factory

    # -- GET -------------------------------------------------------------------------------
    def read(self, name: str, config: Mapping[str, str]) -> ConnectorOffsets:
        if isinstance(self._connector(name, config), SinkConnector):
            try:
                committed = self._admin(config).list_group_offsets(_group_id(config))
            except Exception as error:
                log.error("[%s] Cannot read consumer group offsets: %s", name, error)
                raise ConnectError(
                    f"Failed to retrieve consumer group offsets for sink connector {name}"
                ) from error
            return body_rules.sink_entries(committed)
        try:
            stored = self._store.all(name)
        except Exception as error:
            log.error("[%s] Cannot read source offsets: %s", name, error)
            raise ConnectError(f"Failed to retrieve offsets for source connector {name}") from error
        return ConnectorOffsets([ConnectorOffset(p, o) for p, o in stored])

    # -- PATCH / DELETE --------------------------------------------------------------------
    def alter(self, name: str, config: Mapping[str, str], body: ConnectorOffsets) -> Message:
        connector = self._connector(name, config)
        if isinstance(connector, SinkConnector):
            return self._alter_sink(name, config, connector, body_rules.sink_offsets(body))
        offsets = body_rules.source_offsets(body)
        handled = self._hook(name, connector, config, _partitions(offsets))
        self._write_source(name, offsets)
        return Message(body_rules.success_message(handled, reset=False))

    def reset(self, name: str, config: Mapping[str, str]) -> Message:
        connector = self._connector(name, config)
        if isinstance(connector, SinkConnector):
            return self._reset_sink(name, config, connector)
        offsets: body_rules.SourceOffsets = {
            canonical_json(p): (p, None) for p, _ in self._store.all(name)
        }
        handled = self._hook(name, connector, config, _partitions(offsets))
        self._write_source(name, offsets)
        return Message(body_rules.success_message(handled, reset=True))

    def _write_source(self, name: str, offsets: body_rules.SourceOffsets) -> None:
        if not offsets:
            return
        try:
            self._store.put_many(name, offsets)
        except Exception as error:
            log.error("[%s] Cannot write source offsets: %s", name, error)
            raise ConnectError(f"Failed to modify offsets for source connector {name}") from error

    def _alter_sink(
        self,
        name: str,
        config: Mapping[str, str],
        connector: SinkConnector,
        offsets: dict[TopicPartition, int | None],
    ) -> Message:
        deletes = [tp for tp, offset in offsets.items() if offset is None]
        if deletes:
            raise ConnectError(no_offset_delete_message(name, deletes))
        if any(offset is not None and offset < 0 for offset in offsets.values()):
            raise ConnectError(f"Failed to modify offsets for sink connector {name}")
        handled = self._hook(name, connector, config, offsets)
        admin = self._admin(config)
        committed = {tp: offset for tp, offset in offsets.items() if offset is not None}
        try:
            admin.alter_group_offsets(_group_id(config), committed)
        except ConnectError as error:
            raise _group_error(name, error, reset=False) from error
        return Message(body_rules.success_message(handled, reset=False))

    def _reset_sink(
        self, name: str, config: Mapping[str, str], connector: SinkConnector
    ) -> Message:
        group = _group_id(config)
        admin = self._admin(config)
        try:
            committed = admin.list_group_offsets(group)
        except Exception as error:
            raise ConnectError(
                f"Failed to list offsets prior to resetting offsets for sink connector {name}"
            ) from error
        handled = self._hook(name, connector, config, dict.fromkeys(committed))
        try:
            # Writing the committed offsets back fails while the group has members. Kafka's
            # DeleteGroups refuses a non-empty group by itself; Tansu deletes it anyway.
            admin.alter_group_offsets(group, committed)
            admin.delete_group(group)
        except ConnectError as error:
            raise _group_error(name, error, reset=True) from error
        return Message(body_rules.success_message(handled, reset=True))

    # -- helpers ---------------------------------------------------------------------------
    def _connector(self, name: str, config: Mapping[str, str]) -> SourceConnector | SinkConnector:
        """A fresh, unstarted instance of the connector class, as Kafka uses for the hook."""
        class_name = config.get("connector.class") or ""
        try:
            version = config.get("connector.plugin.version")
            desc = self._plugins.find(class_name, _CONNECTOR_TYPES, version)
            instance = self._plugins.new_instance(desc)
        except Exception as error:
            raise ConnectError(
                f"Failed to load the connector class of {name} ({class_name}): {error}"
            ) from error
        if not isinstance(instance, SourceConnector | SinkConnector):
            raise ConnectError(f"{class_name} is neither a source nor a sink connector")
        return instance

    def _hook(
        self, name: str, connector: SourceConnector | SinkConnector, config: Any, offsets: Any
    ) -> bool:
        """The connector's ``alter_offsets``: True when it handled external offsets too."""
        kind = "sink" if isinstance(connector, SinkConnector) else "source"
        try:
            return bool(connector.alter_offsets(dict(config), offsets))
        except NotImplementedError as error:
            raise ConnectError(
                f"Failed to modify offsets for connector {name} because it doesn't support "
                "external modification of offsets"
            ) from error
        except ConnectError:
            raise
        except Exception as error:
            log.error("[%s] alter_offsets failed: %s", name, error)
            raise ConnectError(
                f"Failed to modify offsets for {kind} connector {name}: {error}"
            ) from error

    def _admin(self, config: Mapping[str, str]) -> Admin:
        overrides = self._override_policy.client_overrides(config, "admin")
        return self._admin_factory(admin_config(self._props, overrides))


def _group_id(config: Mapping[str, str]) -> str:
    """The consumer group of a sink connector, from its stored config."""
    return ConnectorConfig(config, "sink").consumer_group_id


def _partitions(offsets: body_rules.SourceOffsets) -> dict[Partition, dict[str, Any] | None]:
    return {Partition(p): o for p, o in offsets.values()}


def _group_error(name: str, error: ConnectError, reset: bool) -> ConnectError:
    if any(marker in str(error) for marker in _MEMBER_ERRORS):
        return ConnectError(body_rules.zombie_message(name, reset))
    log.error("[%s] Consumer group offsets change failed: %s", name, error)
    if reset:
        return ConnectError(f"Failed to reset consumer group offsets for sink connector {name}")
    return ConnectError(f"Failed to alter consumer group offsets for connector {name}")
