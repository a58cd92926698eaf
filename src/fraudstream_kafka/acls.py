"""The Kafka ACLs each fraudstream component needs, and nothing more: one principal per component.

This is the single source of the least-privilege grants: the secured local broker creates exactly these, the
tests probe them, and docs/security.md lists them as `kafka-acls.sh` commands for a managed Kafka (a test keeps
the two equal). Topics are created by an administrator, never by a component, so no component is granted CREATE.

| component | topics | consumer groups (READ, prefixed) |
|---|---|---|
| operator | `rules`: WRITE (publish), READ (its start-up reconcile) | `fraudstream-operator` |
| detector | `transactions`, `rules`: READ; `alerts`, DLQ: WRITE; each: DescribeConfigs | `fraudstream-detector` |
| generator | `transactions`: WRITE | none |

The detector's DescribeConfigs serves its start-up size check; its group prefix is its `--group-id-prefix`.

READ and WRITE imply DESCRIBE. An idempotent producer needs WRITE on a topic only (no cluster-wide
IDEMPOTENT_WRITE since Kafka 3.0).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from .settings import KafkaSettings, Topics

OPERATOR_GROUP_PREFIX: Final = "fraudstream-operator"
DETECTOR_GROUP_PREFIX: Final = "fraudstream-detector"


class Component(StrEnum):
    """A fraudstream component that talks to Kafka as a principal of its own."""

    OPERATOR = "operator"
    DETECTOR = "detector"
    GENERATOR = "generator"


class Resource(StrEnum):
    """Kafka resource types, as `kafka-acls.sh` names them."""

    TOPIC = "topic"
    GROUP = "group"


class Operation(StrEnum):
    """Kafka ACL operations, as `kafka-acls.sh` names them."""

    READ = "Read"
    WRITE = "Write"
    DESCRIBE_CONFIGS = "DescribeConfigs"


_OPERATIONS: Final = {
    Operation.READ: AclOperation.READ,
    Operation.WRITE: AclOperation.WRITE,
    Operation.DESCRIBE_CONFIGS: AclOperation.DESCRIBE_CONFIGS,
}


@dataclass(frozen=True)
class Acl:
    """One ALLOW grant of `operation` on a resource to `principal` (e.g. `User:detector`) from any host.

    `prefixed` grants on every resource whose name starts with `name` (Kafka's PREFIXED pattern), else on the
    resource named exactly `name` (LITERAL).
    """

    principal: str
    resource: Resource
    name: str
    operation: Operation
    prefixed: bool = False

    def binding(self) -> AclBinding:
        """The same grant as confluent_kafka's AclBinding."""
        return AclBinding(
            ResourceType.TOPIC if self.resource is Resource.TOPIC else ResourceType.GROUP,
            self.name,
            ResourcePatternType.PREFIXED if self.prefixed else ResourcePatternType.LITERAL,
            self.principal,
            "*",
            _OPERATIONS[self.operation],
            AclPermissionType.ALLOW,
        )

    def command(self, bootstrap: str = "$KAFKA_BOOTSTRAP", command_config: str = "$KAFKA_COMMAND_CONFIG") -> str:
        """The `kafka-acls.sh` command that creates this grant (shell-quoted; variables left for the shell)."""
        parts = ["kafka-acls.sh", "--bootstrap-server", bootstrap, "--command-config", command_config, "--add"]
        parts += ["--allow-principal", self.principal, "--operation", self.operation.value]
        parts += [f"--{self.resource.value}", self.name]
        if self.prefixed:
            parts += ["--resource-pattern-type", "prefixed"]
        return " ".join(p if p.startswith("$") else shlex.quote(p) for p in parts)


def component_acls(
    component: Component,
    principal: str,
    topics: Topics,
    detector_group_prefix: str = DETECTOR_GROUP_PREFIX,
) -> list[Acl]:
    """The grants `component`, authenticated as `principal`, needs on `topics`; no more."""
    topic, group = Resource.TOPIC, Resource.GROUP
    read, write, describe_configs = Operation.READ, Operation.WRITE, Operation.DESCRIBE_CONFIGS
    if component is Component.OPERATOR:
        return [
            Acl(principal, topic, topics.rules, write),
            Acl(principal, topic, topics.rules, read),
            Acl(principal, group, OPERATOR_GROUP_PREFIX, read, prefixed=True),
        ]
    if component is Component.DETECTOR:
        return [
            Acl(principal, topic, topics.transactions, read),
            Acl(principal, topic, topics.rules, read),
            Acl(principal, topic, topics.alerts, write),
            Acl(principal, topic, topics.dlq, write),
            *(
                Acl(principal, topic, name, describe_configs)
                for name in (topics.transactions, topics.rules, topics.alerts, topics.dlq)
            ),
            Acl(principal, group, detector_group_prefix, read, prefixed=True),
        ]
    return [Acl(principal, topic, topics.transactions, write)]


def all_acls(principals: dict[Component, str], topics: Topics) -> list[Acl]:
    """Every component's grants, for the principals given (component -> `User:<name>`)."""
    return [acl for component, principal in principals.items() for acl in component_acls(component, principal, topics)]


def create_acls(admin: KafkaSettings, acls: Iterable[Acl], timeout_s: float = 30) -> None:
    """Creates the grants as `admin` (a principal allowed to ALTER the cluster); creating an existing grant is a
    no-op. Raises KafkaException when the broker refuses or does not answer in time."""
    bindings = [acl.binding() for acl in acls]
    if not bindings:
        return
    client = AdminClient(admin.client_config())  # kept referenced: the futures fail once the client is destroyed
    for future in client.create_acls(bindings, request_timeout=timeout_s).values():
        future.result(timeout=timeout_s)
