"""TaskPlan: everything one task needs to run, decided by the control plane, picklable.

The worker plans a task where its connector runs (the plugin registry, config providers and
override policy are there): which classes at which versions, the resolved configs, the client
settings. The data plane builds the task from the plan alone (dataplane/local_tasks.py), in the
data-plane process (control/dataplane_process.py), with its own Spark and Kafka clients.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from connect_lite.config.batching import DEFAULT_BATCHING, Batching
from connect_lite.config.connector_config import SinkSubscription
from connect_lite.config.error_handling import NO_ERROR_HANDLING, ErrorHandling
from connect_lite.config.topic_creation import TopicCreation
from connect_lite.plugins.types import PluginRef
from connect_lite.protocol.job_spec import JobSpec
from connect_lite.protocol.states import TargetState


@dataclass(frozen=True)
class Component:
    """A converter, transform or predicate a task runs, as the KIP-891 metrics name it."""

    role: str
    alias: str
    class_name: str
    version: str | None


@dataclass(frozen=True)
class TaskPlan:
    """One task, ready to build. ``kind`` is ``source`` or ``sink`` (its connector's type);
    ``task_config`` is resolved and holds no ``task.class``; the client configs are merged
    (worker keys, then the connector's overrides). Resolved secrets travel in it in memory
    only: a plan is never stored."""

    connector: str
    task: int
    kind: str
    target: TargetState
    task_class: PluginRef
    task_config: dict[str, str]
    spec: JobSpec
    job_group: str
    flush_interval_ms: int
    batching: Batching = DEFAULT_BATCHING
    error_handling: ErrorHandling = NO_ERROR_HANDLING
    components: tuple[Component, ...] = ()
    producer_config: dict[str, str] = field(default_factory=dict)
    """The source task's producer, or the sink task's dead letter queue producer."""
    admin_config: dict[str, str] = field(default_factory=dict)
    """The source task's topic creator, or the sink task's dead letter queue admin."""
    flush_timeout_ms: int = 5000
    topic_creation: TopicCreation | None = None
    """KIP-158 rules of a source task (None: new topics are left to the broker)."""
    consumer_config: dict[str, str] = field(default_factory=dict)
    subscription: SinkSubscription | None = None
    generation: int = 0
    """Which start of the task this is (the data plane's host numbers them): what a task
    sends is taken only while its generation is the one held."""

    @property
    def key(self) -> tuple[str, int]:
        return self.connector, self.task


__all__ = ["Component", "TaskPlan"]
