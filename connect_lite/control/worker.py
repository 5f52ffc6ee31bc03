"""Worker: creates connector instances and task threads, and stops them."""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from connect_lite.api.config import Type, prefixed
from connect_lite.api.connector import SinkConnector, SourceConnector
from connect_lite.api.errors import ConfigError, ConnectError
from connect_lite.config.batching import DEFAULT_BATCHING, Batching
from connect_lite.config.client_configs import check_client_value
from connect_lite.config.connector_config import ConnectorConfig, SinkSubscription
from connect_lite.config.error_handling import ErrorHandling
from connect_lite.config.local_paths import LocalPaths
from connect_lite.config.override_policy import (
    OVERRIDE_PREFIXES,
    OverridePolicy,
    client_passwords,
)
from connect_lite.config.resolution import ConfigResolver, log_unknown_providers
from connect_lite.config.topic_creation import TopicCreation, uses_topic_creation
from connect_lite.control import components
from connect_lite.control.connector import WorkerConnector
from connect_lite.control.status import StatusReporter
from connect_lite.kafka.clients import admin_config, consumer_config, producer_config
from connect_lite.logs.context import logging_context
from connect_lite.plugins.isolation import class_ref, public_class_name
from connect_lite.plugins.registry import Plugins
from connect_lite.plugins.types import PluginDesc, PluginType
from connect_lite.protocol.host import LastBatch, TaskHost, TaskView
from connect_lite.protocol.job_spec import JobSpec, TransformSpec
from connect_lite.protocol.plan import Component, TaskPlan
from connect_lite.protocol.reports import trace_of
from connect_lite.protocol.states import State, TargetState

log = logging.getLogger(__name__)

CONNECTOR_TYPES = [PluginType.SOURCE, PluginType.SINK]


@dataclass(frozen=True)
class RunningPlugin:
    """One plugin instance this worker runs, as the KIP-891 info metrics show it.

    ``role`` is connector, task, key_converter, value_converter, header_converter, transform
    or predicate; ``task`` is None for the connector; ``alias`` names a transform/predicate;
    ``connector_type`` is set for the connector role."""

    connector: str
    task: int | None
    role: str
    alias: str
    class_name: str
    version: str | None
    connector_type: str = ""


class Worker:
    """Runs connectors and tasks of this process. Not thread-safe: the herder serialises calls."""

    def __init__(
        self,
        worker_props: Mapping[str, str],
        plugins: Plugins,
        tasks: TaskHost,
        status: StatusReporter,
        *,
        flush_interval_ms: int,
        flush_timeout_ms: int,
        batching: Batching = DEFAULT_BATCHING,
        topic_creation_enable: bool = True,
        transforms_columns: bool = True,
        override_policy: OverridePolicy | None = None,
        resolver: ConfigResolver | None = None,
        local_paths: LocalPaths | None = None,
    ) -> None:
        self.local_paths = local_paths
        """connector.allowed.paths: checked again, on resolved values, at every connector and
        task start (validation checked the config when it was written)."""
        self.resolver = resolver or ConfigResolver()
        """Resolves provider references when a connector or task starts, and only then."""
        self.override_policy = override_policy or OverridePolicy("All")
        """Checks connector client overrides again when clients are built (the deny-list)."""
        self.topic_creation_enable = topic_creation_enable
        self.transforms_columns = transforms_columns
        self.props = dict(worker_props)
        self.plugins = plugins
        self.tasks = tasks
        """Runs the task threads: in this process, or in the data-plane process."""
        self.status = status
        self.flush_interval_ms = flush_interval_ms
        self.flush_timeout_ms = flush_timeout_ms
        self.batching = batching
        self._connectors: dict[str, WorkerConnector] = {}

    # -- plugins ---------------------------------------------------------------------------
    def connector_desc(self, config: Mapping[str, str]) -> PluginDesc:
        class_name = config.get("connector.class")
        if not class_name:
            raise ConfigError("Connector config contains no connector type")
        return self.plugins.find(
            class_name, CONNECTOR_TYPES, config.get("connector.plugin.version")
        )

    def connector_type(self, config: Mapping[str, str]) -> str:
        try:
            return self.plugins.connector_type(self.connector_desc(config).cls)
        except ConnectError:
            return "unknown"

    # -- connectors ------------------------------------------------------------------------
    def start_connector(
        self,
        name: str,
        config: Mapping[str, str],
        target: TargetState,
        on_reconfigure: Callable[[str], None],
        on_expiry: Callable[[str, int], None] | None = None,
    ) -> WorkerConnector:
        """Instantiate the connector and bring it to ``target``; on failure: FAILED, raise.

        The config is resolved (provider references) and parsed here, once: the runner keeps
        it for the connector's tasks. When a provider gives its values a time to live and
        ``config.action.reload`` is ``restart``, ``on_expiry(name, ttl_ms)`` is called."""
        if name in self._connectors:
            raise ConnectError(f"Connector {name} already running")
        with logging_context(name):
            return self._start_connector(name, config, target, on_reconfigure, on_expiry)

    def _start_connector(
        self,
        name: str,
        config: Mapping[str, str],
        target: TargetState,
        on_reconfigure: Callable[[str], None],
        on_expiry: Callable[[str, int], None] | None,
    ) -> WorkerConnector:
        self.status.connector(name, State.UNASSIGNED)
        try:
            resolved = self.resolver.resolve(config)
            log_unknown_providers(resolved)  # once per start, not at each task's resolution
            desc = self.connector_desc(resolved.values)
            typed = ConnectorConfig(resolved.values, self.plugins.connector_type(desc.cls))
            instance = self.plugins.new_instance(desc)
            self._hide_passwords(instance, resolved.values)
            self._check_local_paths(instance, resolved.values)
        except Exception as error:
            self.status.connector(name, State.FAILED, trace_of(error))
            raise
        runner = WorkerConnector(
            name, instance, typed, self.status, on_reconfigure, desc.location, resolved
        )
        self._connectors[name] = runner
        runner.transition_to(target)
        log.info("Connector is %s", target.value)
        reload = typed.raw.get("config.action.reload", "restart").strip().lower()
        if resolved.ttl_ms is not None and reload == "restart" and on_expiry is not None:
            on_expiry(name, resolved.ttl_ms)
        return runner

    def _check_local_paths(self, instance: Any, *configs: Mapping[str, str]) -> None:
        """ConfigError when a key the connector declares as a local path names a file outside
        connector.allowed.paths (links resolved now, as they are at this start)."""
        if self.local_paths is None:
            return
        config_def = instance.config()
        for config in configs:
            problems = self.local_paths.check(config_def, config)
            if problems:
                raise ConfigError(
                    "\n".join(problems.values()), {k: [v] for k, v in problems.items()}
                )

    def _hide_component_passwords(
        self, chosen: components.Chosen, config: Mapping[str, str]
    ) -> None:
        """The PASSWORD keys of a task's converters, transforms and predicates: [hidden]."""
        values: list[str | None] = []
        for role, alias, desc in chosen:
            prefix = {"transform": f"transforms.{alias}.", "predicate": f"predicates.{alias}."}.get(
                role, role.replace("_", ".") + "."
            )
            try:
                keys = self.plugins.new_instance(desc).config().keys
            except Exception:
                continue
            for key_name, key in keys.items():
                if key.type is Type.PASSWORD:
                    values += [config.get(prefix + key_name), self.props.get(prefix + key_name)]
        self.resolver.redactor.add_passwords(values)

    def _hide_passwords(self, instance: Any, config: Mapping[str, str]) -> None:
        """Values of the plugin's PASSWORD keys and of secret client keys: [hidden] in logs."""
        try:
            keys = instance.config().keys
        except Exception:
            keys = {}
        own = [config.get(name) for name, key in keys.items() if key.type is Type.PASSWORD]
        self.resolver.redactor.add_passwords([*own, *client_passwords(config)])

    def stop_connector(self, name: str) -> None:
        runner = self._connectors.pop(name, None)
        if runner is not None:
            runner.shutdown()

    def transition_connector(self, name: str, target: TargetState) -> None:
        runner = self._connectors.get(name)
        if runner is not None:
            runner.transition_to(target)

    def connector_task_configs(self, name: str) -> list[dict[str, str]]:
        """Ask the running connector for task configs, enforcing ``tasks.max``."""
        with logging_context(name):
            return self._connector_task_configs(name)

    def _connector_task_configs(self, name: str) -> list[dict[str, str]]:
        runner = self._connectors[name]
        config = runner.config
        max_tasks = config.tasks_max
        configs = runner.task_configs(max_tasks)
        if len(configs) > max_tasks:
            if config.tasks_max_enforce:
                raise ConnectError(
                    f"The connector {name} has generated {len(configs)} tasks, which is greater "
                    f"than {max_tasks}, the maximum number of tasks it is configured to create. "
                    "This behaviour should be considered a bug and is disallowed. If necessary, "
                    "it can be permitted by reconfiguring the connector with "
                    "'tasks.max.enforce' set to false; however, this option will be removed in "
                    "a future release of Kafka Connect."
                )
            log.warning("Generated %d tasks, more than tasks.max", len(configs))
        task_class = public_class_name(runner.task_class())
        topics = config.task_topic_settings() if config.connector_type == "sink" else {}
        # Stored as references again: a value the connector copied from a resolved secret
        # goes back to the ${...} it came from, and is resolved anew when the task starts.
        return [
            runner.put_back({**task_config, "task.class": task_class, **topics})
            for task_config in configs
        ]

    # -- tasks -----------------------------------------------------------------------------
    def start_task(
        self, name: str, task: int, task_config: Mapping[str, str], target: TargetState
    ) -> None:
        """Plan one task from its task config and its running connector's config, and hand
        it to the task host. A failure to plan or build it marks the task FAILED."""
        with logging_context(name, task):
            self.status.task(name, task, State.UNASSIGNED)
            chosen: components.Chosen = []
            try:
                plan = self._plan_task(name, task, task_config, target, chosen)
            except Exception as error:
                log.exception("Failed to start task")
                self.status.task(name, task, State.FAILED, trace_of(error))
                return
            self._hide_component_passwords(chosen, self._connectors[name].config.raw)
        self.tasks.start(plan)

    def _plan_task(
        self,
        name: str,
        task: int,
        task_config: Mapping[str, str],
        target: TargetState,
        chosen: components.Chosen,
    ) -> TaskPlan:
        runner = self._connectors.get(name)
        if runner is None:
            raise ConnectError(f"Connector {name} is not running")
        connector_config = runner.fresh_config(self.resolver)
        task_config = self.resolver.resolve(task_config).values
        self._check_local_paths(runner.instance, connector_config.raw, task_config)
        handling = ErrorHandling.from_config(connector_config)
        spec = self._job_spec(name, task, connector_config, runner.location, chosen)
        spec = dataclasses.replace(
            spec,
            retry_timeout_ms=handling.retry_timeout_ms,
            retry_delay_max_ms=handling.retry_delay_max_ms,
        )
        overrides = {
            client: self.override_policy.client_overrides(connector_config.raw, client)
            for client in OVERRIDE_PREFIXES
        }
        plan = TaskPlan(
            connector=name,
            task=task,
            kind=connector_config.connector_type,
            target=target,
            task_class=class_ref(runner.task_class()),
            task_config={k: v for k, v in task_config.items() if k != "task.class"},
            spec=spec,
            job_group=f"connect-lite:{name}-{task}",
            flush_interval_ms=self.flush_interval_ms,
            flush_timeout_ms=self.flush_timeout_ms,
            batching=self.batching,
            error_handling=handling,
            components=tuple(Component(r, a, d.class_name, d.version) for r, a, d in chosen),
        )
        if isinstance(runner.instance, SourceConnector):
            return dataclasses.replace(
                plan,
                producer_config=producer_config(self.props, name, task, overrides["producer"]),
                admin_config=admin_config(self.props, overrides["admin"]),
                topic_creation=self._topic_creation(connector_config),
            )
        if isinstance(runner.instance, SinkConnector):
            if uses_topic_creation(connector_config.raw):
                log.warning("topic.creation.* is ignored on sink connectors")
            group_id = connector_config.consumer_group_id
            consumer_conf = consumer_config(self.props, name, task, group_id, overrides["consumer"])
            dlq_producer_conf = producer_config(
                self.props, name, task, overrides["producer"], "connector-dlq-producer"
            )
            # max.poll.records is Java's alone (translation drops it): read before translation
            java_consumer = {**prefixed(self.props, "consumer."), **overrides["consumer"]}
            return dataclasses.replace(
                plan,
                batching=sink_batching(self.batching, java_consumer),
                consumer_config=consumer_conf,
                subscription=SinkSubscription.of_task(task_config),
                producer_config=dlq_producer_conf,
                admin_config=admin_config(self.props, overrides["admin"]),
            )
        raise ConnectError(f"Connector {name} is neither a source nor a sink connector")

    def _topic_creation(self, config: ConnectorConfig) -> TopicCreation | None:
        """KIP-158: the rules when the connector sets topic.creation.* and the worker allows it."""
        if not uses_topic_creation(config.raw):
            return None
        if not self.topic_creation_enable:
            log.warning(
                "topic.creation.* is ignored: the worker has topic.creation.enable=false, so new "
                "topics are left to the broker"
            )
            return None
        return TopicCreation.from_config(config.raw)

    def _job_spec(
        self,
        name: str,
        task: int,
        config: ConnectorConfig,
        location: str | None,
        chosen: components.Chosen,
    ) -> JobSpec:
        """Converters and transforms of a task; companions prefer the connector's location."""

        def converter(which: str) -> Callable[[], Any]:
            return components.converter_factory(
                self.plugins, which, config.raw, self.props, location, chosen
            )

        converters = [converter(which) for which in ("key", "value", "header")]
        chain = components.transform_chain(self.plugins, config, location, chosen)
        return JobSpec(
            job_id=f"{name}-{task}-{uuid.uuid4().hex[:8]}",
            key_converter=converters[0],
            value_converter=converters[1],
            header_converter=converters[2],
            transforms=tuple(TransformSpec(t, p, n) for t, p, n in chain),
            columns=self.transforms_columns,
            plugin_locations=tuple(sorted({d.location for _, _, d in chosen if d.location})),
        )

    def engine_failure(self) -> str | None:
        """Why Spark cannot run tasks now: its cluster is unreachable (tasks wait for it), or
        the session could not start (tasks fail with it)."""
        return self.tasks.engine_failure()

    def running_plugins(self) -> list[RunningPlugin]:
        """Read-only view of the connectors, tasks and components running now."""
        out = []
        for name, connector in list(self._connectors.items()):
            cls = type(connector.instance)
            kind = self.plugins.connector_type(cls)
            out.append(
                RunningPlugin(
                    name, None, "connector", "", public_class_name(cls), connector.version, kind
                )
            )
        for view in self.tasks.views():
            if view.task_class:
                task = view.task
                out.append(
                    RunningPlugin(view.connector, task, "task", "", view.task_class, view.version)
                )
            for c in view.components:
                out.append(
                    RunningPlugin(
                        view.connector, view.task, c.role, c.alias, c.class_name, c.version
                    )
                )
        return out

    def running_tasks(self) -> list[TaskView]:
        """The tasks of this worker now, for the worker's metrics."""
        return self.tasks.views()

    def last_batches(self, name: str) -> dict[int, LastBatch]:
        """Where the last batch of each of the connector's tasks ran on Spark."""
        return self.tasks.last_batches(name)

    def has_connector(self, name: str) -> bool:
        """True while the worker holds the connector, whatever its target state."""
        return name in self._connectors

    def has_task(self, name: str, task: int) -> bool:
        return (name, task) in self.tasks.held()

    def fail_connector(self, name: str, error: BaseException) -> None:
        """Mark a held connector FAILED, e.g. when its task configs cannot be generated."""
        runner = self._connectors.get(name)
        if runner is not None:
            runner.fail(error)

    def forget_statuses(self, name: str) -> None:
        """Drop the connector's queued status writes: a retry must not bring a status back."""
        self.status.forget(name)

    def transition_tasks(self, name: str, target: TargetState) -> None:
        self.tasks.transition(name, target)

    def task_ids(self, name: str) -> list[int]:
        return [t for (c, t) in self.tasks.held() if c == name]

    def stop_tasks(self, name: str, ids: list[int] | None = None) -> None:
        """Stop tasks and wait for them, within task.shutdown.graceful.timeout.ms in total."""
        self.tasks.stop([(name, t) for t in (ids if ids is not None else self.task_ids(name))])

    def shutdown(self) -> None:
        """Stop every task and connector of this worker."""
        self.tasks.stop(self.tasks.held())
        for name in list(self._connectors):
            self.stop_connector(name)


def sink_batching(batching: Batching, consumer_props: Mapping[str, str]) -> Batching:
    """A sink's batches: at most ``max.poll.records`` records when the worker's
    ``consumer.`` keys or the connector's ``consumer.override.`` keys set it (as a Kafka
    sink task gets at most that many per put), else the worker's batch size.

    ``consumer_props`` are the Java client keys, before translation to librdkafka's. A bad
    value is refused when the config is written; one stored by an older version fails here.
    """
    given = consumer_props.get("max.poll.records")
    if given is None:
        return batching
    limit, problem = check_client_value("consumer", "max.poll.records", given)
    if problem is not None:
        raise ConnectError(problem)
    return dataclasses.replace(batching, max_records=limit)
