"""Topic names and client configuration, read from the environment with working local defaults."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

CLIENT_PREFIX = "KAFKA_CLIENT_"
ConfigValue = str | int | float | bool
# A producer whose every record is written once and acknowledged by every in-sync replica: what the operator's rules,
# the generator's transactions and the tests' inputs are sent with.
RELIABLE_PRODUCER: Mapping[str, ConfigValue] = {"enable.idempotence": True, "acks": "all"}


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


_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


def java_client_properties(librdkafka: Mapping[str, str]) -> dict[str, str]:
    """librdkafka client properties as the Java Kafka client (Spark's Kafka connector, the JVM evaluator's producer
    and consumer, Kafka's command-line tools) expects them; the one place where the two dialects meet.

    - SASL PLAIN/SCRAM credentials (`sasl.username`, `sasl.password`) become `sasl.jaas.config`;
      `sasl.mechanisms` becomes `sasl.mechanism`.
    - A PEM CA file (`ssl.ca.location`) becomes a PEM truststore.
    - A client certificate for mutual TLS (`ssl.certificate.location` with `ssl.key.location`, PEM files, the key
      PKCS#8 and, when `ssl.key.password` is given, encrypted with it) becomes a PEM keystore whose key and
      certificate chain are the files' contents (`ssl.keystore.key`, `ssl.keystore.certificate.chain`), so that
      the two files, as Kubernetes mounts a TLS Secret, need no combining. The files are read here: a missing file
      raises OSError naming it; one of the two without the other raises ValueError. Kafka treats both properties
      as passwords (never logged). A PKCS#12 keystore (`ssl.keystore.location`) means the same to both clients.
    Everything else passes through unchanged.
    """
    props = dict(librdkafka)
    mechanism = props.pop("sasl.mechanisms", None) or props.get("sasl.mechanism")
    if mechanism:
        props["sasl.mechanism"] = mechanism
    username, password = props.pop("sasl.username", None), props.pop("sasl.password", None)
    if username is not None and password is not None and mechanism in _LOGIN_MODULES:
        quote = json.dumps  # JAAS accepts double-quoted strings with backslash escapes
        props["sasl.jaas.config"] = (
            f"{_LOGIN_MODULES[mechanism]} required username={quote(username)} password={quote(password)};"
        )
    ca = props.pop("ssl.ca.location", None)
    if ca is not None:
        props["ssl.truststore.location"] = ca
        props["ssl.truststore.type"] = "PEM"
    certificate, key = props.pop("ssl.certificate.location", None), props.pop("ssl.key.location", None)
    if (certificate is None) != (key is None):
        raise ValueError(
            "a client certificate needs both ssl.certificate.location and ssl.key.location "
            "(KAFKA_CLIENT_SSL_CERTIFICATE_LOCATION, KAFKA_CLIENT_SSL_KEY_LOCATION)"
        )
    if certificate is not None and key is not None:
        props["ssl.keystore.type"] = "PEM"
        props["ssl.keystore.certificate.chain"] = Path(certificate).read_text()
        props["ssl.keystore.key"] = Path(key).read_text()
    return props


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

    def as_env(self) -> dict[str, str]:
        """The environment `from_env` reads these settings back from: KAFKA_BOOTSTRAP and KAFKA_CLIENT_*."""
        props = {CLIENT_PREFIX + key.upper().replace(".", "_"): value for key, value in self.client_properties.items()}
        return {"KAFKA_BOOTSTRAP": self.bootstrap, **props}

    def client_config(self, **extra: ConfigValue) -> dict[str, ConfigValue]:
        """librdkafka configuration: bootstrap, the pass-through properties, then `extra`."""
        return {"bootstrap.servers": self.bootstrap, **self.client_properties, **extra}

    def spark_options(self) -> dict[str, str]:
        """The same settings as Spark Kafka source/sink options (`kafka.`-prefixed), in the Java client's terms.

        librdkafka and the Java client name most properties alike; the exceptions are translated: SASL
        PLAIN/SCRAM credentials become `sasl.jaas.config`, and a PEM CA file becomes a PEM truststore.
        """
        java = java_client_properties(self.client_properties)
        return {"kafka.bootstrap.servers": self.bootstrap, **{f"kafka.{k}": v for k, v in java.items()}}
