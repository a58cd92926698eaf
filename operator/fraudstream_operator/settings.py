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
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import TopicSpec, contract_topics


def _namespaces(raw: str) -> tuple[str, ...]:
    return tuple(sorted({part.strip() for part in raw.split(",") if part.strip()}))


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

    @staticmethod
    def from_env(env: Mapping[str, str] = os.environ) -> OperatorSettings:
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
