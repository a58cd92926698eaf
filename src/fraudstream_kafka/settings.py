"""Topic names and client configuration, read from the environment with working local defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

CLIENT_PREFIX = "KAFKA_CLIENT_"
ConfigValue = str | int | float | bool


@dataclass(frozen=True)
class Topics:
    """The four topics of CONTRACT section 2; each name overridable by its environment variable."""

    transactions: str = "transactions"
    rules: str = "rules"
    alerts: str = "alerts"
    dlq: str = "transactions.dlq"

    @staticmethod
    def from_env(env: Mapping[str, str] = os.environ) -> Topics:
        return Topics(
            transactions=env.get("TRANSACTIONS_TOPIC", "transactions"),
            rules=env.get("RULES_TOPIC", "rules"),
            alerts=env.get("ALERTS_TOPIC", "alerts"),
            dlq=env.get("DLQ_TOPIC", "transactions.dlq"),
        )

    def as_env(self) -> dict[str, str]:
        return {
            "TRANSACTIONS_TOPIC": self.transactions,
            "RULES_TOPIC": self.rules,
            "ALERTS_TOPIC": self.alerts,
            "DLQ_TOPIC": self.dlq,
        }


@dataclass(frozen=True)
class KafkaSettings:
    """Where the brokers are and how to talk to them (security properties passed through verbatim)."""

    bootstrap: str = "127.0.0.1:9092"
    client_properties: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def from_env(env: Mapping[str, str] = os.environ) -> KafkaSettings:
        props = {
            key[len(CLIENT_PREFIX) :].lower().replace("_", "."): value
            for key, value in env.items()
            if key.startswith(CLIENT_PREFIX)
        }
        return KafkaSettings(bootstrap=env.get("KAFKA_BOOTSTRAP", "127.0.0.1:9092"), client_properties=props)

    def client_config(self, **extra: ConfigValue) -> dict[str, ConfigValue]:
        """librdkafka configuration: bootstrap, the pass-through properties, then `extra`."""
        return {"bootstrap.servers": self.bootstrap, **self.client_properties, **extra}

    def spark_options(self) -> dict[str, str]:
        """The same settings as Spark Kafka source/sink options (`kafka.`-prefixed)."""
        return {
            "kafka.bootstrap.servers": self.bootstrap,
            **{f"kafka.{k}": v for k, v in self.client_properties.items()},
        }
