"""The operator's configuration, read once from the environment at startup.

| variable | default | meaning |
|---|---|---|
| `KAFKA_BOOTSTRAP`, `KAFKA_CLIENT_*` | `127.0.0.1:9092` | brokers and client properties (fraudstream_kafka.settings) |
| `RULES_TOPIC` | `rules` | the compacted topic the rules are published to |
| `WATCH_NAMESPACES` | empty = all | comma-separated namespaces whose FraudRules the operator owns |
| `OPERATOR_METRICS_PORT` | `9109` | Prometheus metrics port; `0` turns the server off |
| `OPERATOR_METRICS_ADDR` | `0.0.0.0` | address the metrics server binds |
| `OPERATOR_LIVENESS_ENDPOINT` | `http://0.0.0.0:8080/healthz` | kopf's liveness endpoint; empty turns it off |
| `OPERATOR_PUBLISH_TIMEOUT_S` | `30` | how long one publish may wait for its delivery report |
| `OPERATOR_RETRY_BASE_S`, `OPERATOR_RETRY_MAX_S` | `2`, `60` | exponential backoff between retries |
| `OPERATOR_LEADER_ELECTION` | `true` | `python -m fraudstream_operator` reconciles only while it holds the Lease |
| `OPERATOR_LEASE_NAME` | `fraudstream-operator` | the coordination.k8s.io/v1 Lease the replicas compete for |
| `OPERATOR_LEASE_NAMESPACE` | the pod's namespace, else `default` | where that Lease lives |
| `OPERATOR_IDENTITY` | `<hostname>_<pid>` | this replica in the Lease's `holderIdentity`; unique per live process |
| `OPERATOR_LEASE_DURATION_S` | `15` | whole seconds a standby waits after the Lease last changed before taking over |
| `OPERATOR_LEASE_RENEW_DEADLINE_S` | `10` | a leader that could not renew for this long exits |
| `OPERATOR_LEASE_RETRY_PERIOD_S` | `2` | how often a leader renews and a standby tries; retry < deadline < duration |
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import TopicSpec, contract_topics

# Where Kubernetes mounts the pod's namespace next to its service-account token.
POD_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")

_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def _namespaces(raw: str) -> tuple[str, ...]:
    return tuple(sorted({part.strip() for part in raw.split(",") if part.strip()}))


def _flag(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value not in _TRUE | _FALSE:
        raise ValueError(f"{name}={raw!r}: expected one of {sorted(_TRUE | _FALSE)}")
    return value in _TRUE


def _own_namespace(env: Mapping[str, str], pod_namespace_file: Path) -> str:
    """OPERATOR_LEASE_NAMESPACE, else the namespace of the pod this runs in, else `default`."""
    if env.get("OPERATOR_LEASE_NAMESPACE"):
        return env["OPERATOR_LEASE_NAMESPACE"]
    try:
        return pod_namespace_file.read_text().strip() or "default"
    except OSError:
        return "default"


@dataclass(frozen=True)
class ElectionSettings:
    """Leader election on one coordination.k8s.io/v1 Lease: only its holder reconciles and publishes.

    Invariant (checked): 0 < retry_period_s < renew_deadline_s < lease_duration_s, so that a leader gives up
    (renew_deadline_s after its last renewal) before a standby may take over (lease_duration_s after it last saw
    the Lease change), and renews several times within each deadline.
    """

    enabled: bool = True
    lease_name: str = "fraudstream-operator"
    lease_namespace: str = "default"
    identity: str = "fraudstream-operator"
    lease_duration_s: int = 15
    renew_deadline_s: float = 10.0
    retry_period_s: float = 2.0

    def __post_init__(self) -> None:
        if not 0 < self.retry_period_s < self.renew_deadline_s < self.lease_duration_s:
            raise ValueError(
                "leader election needs 0 < retry period < renew deadline < lease duration, got "
                f"{self.retry_period_s} / {self.renew_deadline_s} / {self.lease_duration_s} s"
            )
        if not (self.lease_name and self.lease_namespace and self.identity):
            raise ValueError("leader election needs a lease name, a lease namespace and an identity")

    @staticmethod
    def from_env(env: Mapping[str, str], pod_namespace_file: Path = POD_NAMESPACE_FILE) -> ElectionSettings:
        return ElectionSettings(
            enabled=_flag("OPERATOR_LEADER_ELECTION", env.get("OPERATOR_LEADER_ELECTION", "true")),
            lease_name=env.get("OPERATOR_LEASE_NAME", "fraudstream-operator"),
            lease_namespace=_own_namespace(env, pod_namespace_file),
            identity=env.get("OPERATOR_IDENTITY") or f"{socket.gethostname()}_{os.getpid()}",
            lease_duration_s=int(env.get("OPERATOR_LEASE_DURATION_S", "15")),
            renew_deadline_s=float(env.get("OPERATOR_LEASE_RENEW_DEADLINE_S", "10")),
            retry_period_s=float(env.get("OPERATOR_LEASE_RETRY_PERIOD_S", "2")),
        )


@dataclass(frozen=True)
class OperatorSettings:
    kafka: KafkaSettings = field(default_factory=KafkaSettings)
    rules_topic: str = "rules"
    namespaces: tuple[str, ...] = ()
    metrics_port: int = 9109
    metrics_addr: str = "0.0.0.0"
    liveness_endpoint: str = "http://0.0.0.0:8080/healthz"
    publish_timeout_s: float = 30.0
    retry_base_s: float = 2.0
    retry_max_s: float = 60.0
    election: ElectionSettings = field(default_factory=ElectionSettings)

    @staticmethod
    def from_env(env: Mapping[str, str] = os.environ) -> OperatorSettings:
        """The settings the environment gives; ValueError names a variable whose value is not usable."""
        return OperatorSettings(
            kafka=KafkaSettings.from_env(env),
            rules_topic=Topics.from_env(env).rules,
            namespaces=_namespaces(env.get("WATCH_NAMESPACES", "")),
            metrics_port=int(env.get("OPERATOR_METRICS_PORT", "9109")),
            metrics_addr=env.get("OPERATOR_METRICS_ADDR", "0.0.0.0"),
            liveness_endpoint=env.get("OPERATOR_LIVENESS_ENDPOINT", "http://0.0.0.0:8080/healthz"),
            publish_timeout_s=float(env.get("OPERATOR_PUBLISH_TIMEOUT_S", "30")),
            retry_base_s=float(env.get("OPERATOR_RETRY_BASE_S", "2")),
            retry_max_s=float(env.get("OPERATOR_RETRY_MAX_S", "60")),
            election=ElectionSettings.from_env(env),
        )

    @property
    def clusterwide(self) -> bool:
        return not self.namespaces

    def owns(self, namespace: str) -> bool:
        """Whether FraudRules (and so rule keys) of `namespace` are this operator's to manage."""
        return self.clusterwide or namespace in self.namespaces

    def rules_topic_spec(self) -> TopicSpec:
        """The contract's compacted single-partition spec, under the configured name."""
        return next(spec for spec in contract_topics(Topics(rules=self.rules_topic)) if spec.name == self.rules_topic)

    def retry_delay_s(self, retry: int) -> float:
        """Backoff before retry number `retry + 1`: base * 2^retry, capped at retry_max_s."""
        return min(self.retry_max_s, self.retry_base_s * 2.0 ** min(retry, 30))
