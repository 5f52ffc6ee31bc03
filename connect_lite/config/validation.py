"""Connector config validation (/config/validate, create and update), plugin config listings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api.config import ConfigDef, ConfigKey, ConfigValue, control_codes, prefixed
from connect_lite.api.errors import BadRequestError, ConfigError, ConnectError, NotFoundError
from connect_lite.config.client_configs import NativeCheck, check_client_value
from connect_lite.config.enrich import (
    CONNECTOR_TYPES,
    CONVERTER_TYPES,
    PluginLookup,
    connector_version_key,
    enrich,
    is_version_not_found,
    version_requirement,
)
from connect_lite.config.framework import (
    CONVERTER_KINDS,
    check_connector_name,
    check_sink_config,
    connector_config_def,
    has_dlq,
    sink_config_def,
    source_config_def,
    uses_topic_creation,
)
from connect_lite.config.local_paths import ALLOWED_PATHS
from connect_lite.config.override_policy import OVERRIDE_PREFIXES, client_key_type
from connect_lite.config.resolution import (
    HIDDEN,
    ConfigResolver,
    Resolved,
    is_provider_key,
    references,
)
from connect_lite.config.topic_creation import topic_creation_def
from connect_lite.config.worker import WorkerConfig
from connect_lite.plugins.types import LISTED_TYPES, PluginDesc, PluginType
from connect_lite.plugins.versions import InvalidVersionSpecError

NULL_VALUE_MESSAGE = "Null value can not be supplied as the configuration value."
_VALIDATE_ENDPOINT = "/connector-plugins/{connectorType}/config/validate"

Props = Mapping[str, str | None]


@dataclass(frozen=True)
class ConfigInfos:
    """The /config/validate answer. ``configs`` holds ready ConfigInfo JSON objects."""

    name: str
    error_count: int
    groups: list[str]
    configs: list[dict[str, Any]]


def validate_connector_config(
    plugins: PluginLookup,
    worker: WorkerConfig,
    config: Props,
    resolver: ConfigResolver | None = None,
    client_check: NativeCheck | None = None,
) -> ConfigInfos:
    """Kafka's connector config validation; the ``/config/validate`` answer.

    Raises BadRequestError when there is no ``connector.class``, the class is unknown, or
    ``connector.plugin.version`` is not a valid version specification. Every other
    problem is reported inside the result.

    Provider references are resolved in memory only: the values are validated, while the
    answer shows each reference as written, and no resolved value in any message.

    Client overrides are checked by Kafka's client config types and validators, then by
    ``client_check`` (the client library's own rules; the herder passes librdkafka's).
    """
    written = {k: v for k, v in config.items() if not is_provider_key(k)}
    refuse_unsafe_keys(written)
    if resolver is None:
        return _validate(plugins, worker, written, client_check)
    resolved = resolver.resolve_leniently(written)
    try:
        infos = _validate(plugins, worker, {**written, **resolved.values}, client_check)
    except ConnectError as exc:  # e.g. an unknown connector.class, given by reference
        raise type(exc)(resolved.concealer.conceal(str(exc))) from None
    return _as_written(infos, written, resolved)


def _validate(
    plugins: PluginLookup, worker: WorkerConfig, props: Props, client_check: NativeCheck | None
) -> ConfigInfos:
    conn_class = props.get("connector.class")
    if conn_class is None:
        raise BadRequestError("Connector config contains no connector type")
    found = _find_connector(plugins, conn_class, props.get("connector.plugin.version"))
    if isinstance(found, ConfigError):
        return _version_not_found(plugins, conn_class, props, found)
    is_sink = found.type is PluginType.SINK
    framework_def = enrich(
        plugins, worker, sink_config_def() if is_sink else source_config_def(), props
    )
    if not is_sink and worker.topic_creation_enable and uses_topic_creation(props):
        framework_def = framework_def.merged(topic_creation_def(props))
    framework_values = framework_def.validate(props)
    if is_sink:
        check_sink_config(props, framework_values)
    connector = plugins.new_instance(found)
    connector_def: ConfigDef = connector.config()
    connector_values = connector_def.validate(_without_nulls(props))
    path_problems = worker.local_paths.check(connector_def, props)
    for key, problem in path_problems.items():
        if key in connector_values:
            connector_values[key].errors.append(problem)
    main = _result(
        conn_class,
        [framework_def, connector_def],
        [framework_values, connector_values],
        props,
        _connector_errors(connector, props),
    )
    sections = [
        *_override_sections(worker, props, is_sink, path_problems, client_check),
        *_converter_sections(plugins, props, framework_values),
    ]
    return _merge(conn_class, [main, *sections])


PLUGIN_NAMING_KEYS = frozenset(
    {
        "connector.class",
        "transforms",
        "predicates",
        "topic.creation.groups",
        *(f"{kind}.converter" for kind in CONVERTER_KINDS),
    }
)
"""Keys whose values name aliases, groups or classes: their values become config names in
the validate answer (``transforms.<alias>.type``), so they are taken as written, never
resolved."""
_PLUGIN_NAMING_SUFFIXES = (".plugin.version",)
_ALIAS_KEY_ENDS = (".type", ".predicate")


def names_plugins(key: str) -> bool:
    """Whether ``key`` names aliases, groups, classes or plugin versions."""
    if key in PLUGIN_NAMING_KEYS or key.endswith(_PLUGIN_NAMING_SUFFIXES):
        return True
    kind, _, rest = key.partition(".")
    return (
        kind in ("transforms", "predicates")
        and rest.count(".") == 1
        and (rest.endswith(_ALIAS_KEY_ENDS))
    )


def refuse_unsafe_keys(config: Props) -> None:
    """400 for what no connector config may hold, before anything is resolved or shown:
    a key with ISO control characters (it would forge lines in the log, as a connector name
    would), the worker-only ``connector.allowed.paths``, and a config provider reference in a
    key that names aliases, groups or classes (its resolved value would become the name of
    entries in the validate answer)."""
    for key in config:
        if control_codes(key):
            raise BadRequestError(f"Config key {key!r} may not contain ISO control characters")
    if ALLOWED_PATHS in config:
        raise BadRequestError(
            f"{ALLOWED_PATHS} is a worker setting: a connector config may not set it"
        )
    for key, value in config.items():
        if value is not None and names_plugins(key) and references(value):
            raise BadRequestError(
                f"Config {key} names aliases, groups or classes, so it may not hold a config "
                "provider reference (${...}); write its value out"
            )


def _as_written(infos: ConfigInfos, written: Props, resolved: Resolved) -> ConfigInfos:
    """The answer with references shown as written, resolution failures as errors of their
    keys, and this request's resolved values concealed in every message. (Only this
    request's: the worker's other secrets must not be testable by sending guesses.)"""

    def hide(text: Any) -> Any:
        return resolved.concealer.conceal(text) if isinstance(text, str) else text

    configs: list[dict[str, Any]] = []
    errors = infos.error_count
    unresolved = dict(resolved.errors)
    for entry in infos.configs:
        value = entry.get("value")
        if value is None:
            configs.append(entry)
            continue
        name = value["name"]
        shown = dict(value)
        messages = list(value["errors"])
        if name in written and written[name] != resolved.values.get(name, written[name]):
            if shown["value"] != HIDDEN:
                shown["value"] = written[name]
            # The key's own "Invalid value <v> for configuration", and Kafka's `<v>` quote of
            # it, show it as written, however short the value (free text keeps values under 4
            # characters).
            messages = [
                _as_written_value(m, resolved.values[name], written[name]) for m in messages
            ]
        else:
            shown["value"] = hide(shown["value"])
        shown["errors"] = [hide(e) for e in messages]
        shown["recommended_values"] = [hide(v) for v in value["recommended_values"]]
        if name in unresolved:
            shown["errors"].append(unresolved.pop(name))
            errors += 1
        configs.append({**entry, "value": shown})
    for name, message in unresolved.items():
        configs.insert(
            0, {"definition": None, "value": ConfigValue(name, written[name], [], [message]).info()}
        )
        errors += 1
    return ConfigInfos(infos.name, errors, infos.groups, configs)


def _as_written_value(message: str, value: str | None, written: str | None) -> str:
    for form in ("Invalid value {} for configuration ", "`{}`"):
        message = message.replace(form.format(value), form.format(written))
    return message


def ensure_valid_connector_config(
    plugins: PluginLookup,
    worker: WorkerConfig,
    config: Props,
    resolver: ConfigResolver | None = None,
    client_check: NativeCheck | None = None,
) -> ConfigInfos:
    """Validate for create/update: raise BadRequestError with Kafka's text if anything is wrong."""
    infos = validate_connector_config(plugins, worker, config, resolver, client_check)
    if infos.error_count > 0:
        raise BadRequestError(invalid_config_message(infos))
    return infos


def invalid_config_message(infos: ConfigInfos) -> str:
    """The 400 message of create/update for a config with errors."""
    messages = [
        message
        for info in infos.configs
        if info.get("value")
        for message in info["value"]["errors"]
    ]
    return (
        f"Connector configuration is invalid and contains the following {len(messages)} "
        "error(s):\n"
        + "".join(m + "\n" for m in messages)
        + f"You can also find the above list of errors at the endpoint `{_VALIDATE_ENDPOINT}`"
    )


def plugin_config_keys(
    plugins: PluginLookup, plugin_name: str, version: str | None = None
) -> list[dict[str, Any]]:
    """ConfigKeyInfo objects for GET /connector-plugins/{plugin}/config.

    The plugin's own keys first, then (for connectors) the framework's sink or source keys
    the plugin does not define itself.
    """
    try:
        desc = plugins.find(plugin_name, LISTED_TYPES, version_requirement(version))
    except NotFoundError:
        raise NotFoundError(f"Unknown plugin {plugin_name}.") from None
    except InvalidVersionSpecError as exc:
        raise BadRequestError(f"Invalid version specification: {version}") from exc
    except ConfigError as exc:
        raise BadRequestError(str(exc)) from exc
    own: ConfigDef = plugins.new_instance(desc).config()
    keys = [key.info() for key in own.keys.values()]
    if desc.type in CONNECTOR_TYPES:
        base = sink_config_def() if desc.type is PluginType.SINK else source_config_def()
        keys += [key.info() for name, key in base.keys.items() if name not in own.keys]
    return keys


def _without_nulls(props: Props) -> dict[str, str]:
    return {k: v for k, v in props.items() if v is not None}


def _find_connector(
    plugins: PluginLookup, conn_class: str, version: str | None
) -> PluginDesc | ConfigError:
    try:
        return plugins.find(conn_class, CONNECTOR_TYPES, version_requirement(version))
    except NotFoundError as exc:
        raise BadRequestError(str(exc)) from exc
    except ConfigError as exc:
        if is_version_not_found(exc) or isinstance(exc, InvalidVersionSpecError):
            return exc
        raise BadRequestError(str(exc)) from exc


def _version_not_found(
    plugins: PluginLookup, conn_class: str, props: Props, error: ConfigError
) -> ConfigInfos:
    """The short-circuit answer when connector.plugin.version is malformed, or no installed
    version matches it (that also marks connector.class, as Kafka does)."""
    try:
        latest = plugins.find(conn_class, CONNECTOR_TYPES)
        base = sink_config_def() if latest.type is PluginType.SINK else source_config_def()
    except (NotFoundError, ConfigError):
        base = connector_config_def()
    base = ConfigDef(base.keys.values())
    connector_version_key(base, plugins, props)
    values = base.validate(props)
    if not isinstance(error, InvalidVersionSpecError):
        values["connector.class"].errors.append(str(error))
    version_value = values["connector.plugin.version"]
    version_value.errors.append(str(error))
    version_value.recommended_values = plugins.versions(conn_class, CONNECTOR_TYPES)
    return _result(conn_class, [base], [values], props)


def _connector_errors(connector: Any, props: Props) -> dict[str, list[str]]:
    """Run the connector's own ``validate``; a ConfigError's ``errors`` become key errors.

    A ConfigError without per-key errors is reported on ``connector.class``.
    """
    try:
        connector.validate(_without_nulls(props))
    except ConfigError as exc:
        return {
            key: list(msgs) for key, msgs in (exc.errors or {"connector.class": [str(exc)]}).items()
        }
    return {}


def _result(
    name: str,
    defs: list[ConfigDef],
    value_maps: list[dict[str, ConfigValue]],
    props: Props,
    extra_errors: Mapping[str, list[str]] | None = None,
) -> ConfigInfos:
    """Kafka's generateResult: undefined values first, then one entry per defined key.

    A later definition or value of a key replaces an earlier one (the connector's own
    declaration wins over the framework's). Extra errors and null-value errors are
    attached to the key's final value, or to a new value without definition.
    """
    keys: dict[str, ConfigKey] = {}
    groups: list[str] = []
    for config_def in defs:
        keys.update(config_def.keys)
        groups += [g for g in config_def.groups() if g not in groups]
    final: dict[str, ConfigValue] = {}
    for values in value_maps:
        final.update(values)
    for key_name, messages in (extra_errors or {}).items():
        final.setdefault(key_name, ConfigValue(key_name, props.get(key_name))).errors.extend(
            messages
        )
    for key_name, value in props.items():
        if value is None:
            final.setdefault(key_name, ConfigValue(key_name)).errors.append(NULL_VALUE_MESSAGE)
    configs = [{"definition": None, "value": cv.info()} for n, cv in final.items() if n not in keys]
    for key_name, key in keys.items():
        cv = final.get(key_name)
        configs.append({"definition": key.info(), "value": cv.info(key.type) if cv else None})
    error_count = sum(len(cv.errors) for cv in final.values())
    return ConfigInfos(name, error_count, groups, configs)


def _prefixed(
    keys: Mapping[str, ConfigKey], values: Iterable[ConfigValue], prefix: str
) -> ConfigInfos:
    """Kafka's prefixedConfigInfos: 1 error per key having errors; names carry the prefix."""
    configs: list[dict[str, Any]] = []
    groups: list[str] = []
    errors = 0
    for cv in values:
        key = keys.get(cv.name)
        definition = None
        if key is not None:
            if key.group and key.group not in groups:
                groups.append(key.group)
            definition = {**key.info(), "name": prefix + key.name}
        shown = ConfigValue(
            prefix + cv.name, cv.value, cv.recommended_values, cv.errors, cv.visible
        )
        errors += 1 if cv.errors else 0
        shown_type = key.type if key else client_key_type(cv.name)
        configs.append({"definition": definition, "value": shown.info(shown_type)})
    return ConfigInfos("", errors, groups, configs)


def _override_sections(
    worker: WorkerConfig,
    props: Props,
    is_sink: bool,
    path_problems: Mapping[str, str],
    client_check: NativeCheck | None,
) -> list[ConfigInfos]:
    """Client override checks by the worker's policy, and of their values (the client's
    types and rules, see ``client_configs``), for the clients this connector will use; keys
    that may never be overridden, and key or trust files outside connector.allowed.paths
    (``path_problems``), are refused for every client."""
    if is_sink:
        clients = {"consumer"} | ({"producer", "admin"} if has_dlq(props) else set())
    else:
        uses_admin = worker.topic_creation_enable and uses_topic_creation(props)
        clients = {"producer"} | ({"admin"} if uses_admin else set())
    policy = worker.override_policy
    sections = []
    for client, prefix in OVERRIDE_PREFIXES.items():
        own = prefixed(props, prefix)
        values = policy.validate(own, used=client in clients)
        if client in clients:
            _check_values(client, values, client_check)
        shown = {cv.name: cv for cv in values}
        for key, value in own.items():
            problem = path_problems.get(prefix + key)
            if problem is not None:
                if key not in shown:
                    shown[key] = ConfigValue(key, value)
                    values.append(shown[key])
                shown[key].errors.append(problem)
        if values:
            sections.append(_prefixed({}, values, prefix))
    return sections


def _check_values(client: str, values: Iterable[ConfigValue], check: NativeCheck | None) -> None:
    """Add the problem of each allowed override value, by its client's rules."""
    for cv in values:
        if not cv.errors:
            _, problem = check_client_value(client, cv.name, cv.value, check)
            if problem is not None:
                cv.errors.append(problem)


def _converter_sections(
    plugins: PluginLookup, props: Props, framework_values: Mapping[str, ConfigValue]
) -> list[ConfigInfos]:
    """Validate each converter set in the connector config against its own ConfigDef."""
    sections = []
    for kind in CONVERTER_KINDS:
        class_key, version_key = f"{kind}.converter", f"{kind}.converter.plugin.version"
        class_name = props.get(class_key)
        if (
            not class_name
            or framework_values[class_key].errors
            or framework_values[version_key].errors
        ):
            continue
        version = version_requirement(framework_values[version_key].value)
        desc = plugins.find(class_name, CONVERTER_TYPES[kind], version)
        converter_def: ConfigDef = plugins.new_instance(desc).config()
        prefix = class_key + "."
        own = prefixed(props, prefix)
        own.setdefault("converter.type", kind)
        values = converter_def.validate(own)
        sections.append(_prefixed(converter_def.keys, values.values(), prefix))
    return sections


def _merge(name: str, parts: list[ConfigInfos]) -> ConfigInfos:
    groups: list[str] = []
    configs: list[dict[str, Any]] = []
    for part in parts:
        groups += [g for g in part.groups if g not in groups]
        configs += part.configs
    return ConfigInfos(name, sum(p.error_count for p in parts), groups, configs)


__all__ = [
    "NULL_VALUE_MESSAGE",
    "check_connector_name",
    "ensure_valid_connector_config",
    "invalid_config_message",
    "plugin_config_keys",
    "validate_connector_config",
]
