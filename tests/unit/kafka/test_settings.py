from __future__ import annotations

import pytest

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import contract_topics


@pytest.mark.parametrize(
    ("env", "bootstrap", "props"),
    [
        ({}, "127.0.0.1:9092", {}),
        ({"KAFKA_BOOTSTRAP": "b:9093"}, "b:9093", {}),
        (
            {"KAFKA_CLIENT_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_CLIENT_SASL_MECHANISM": "SCRAM-SHA-512"},
            "127.0.0.1:9092",
            {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512"},
        ),
        ({"KAFKA_CLIENTX": "ignored", "OTHER": "x"}, "127.0.0.1:9092", {}),
    ],
)
def test_settings_from_env_pass_security_properties_through(
    env: dict[str, str], bootstrap: str, props: dict[str, str]
) -> None:
    settings = KafkaSettings.from_env(env)
    assert settings.bootstrap == bootstrap
    assert dict(settings.client_properties) == props
    assert settings.client_config(**{"acks": "all"}) == {"bootstrap.servers": bootstrap, **props, "acks": "all"}
    assert settings.spark_options()["kafka.bootstrap.servers"] == bootstrap


def test_topic_names_default_to_the_contract_and_are_overridable() -> None:
    assert Topics.from_env({}) == Topics("transactions", "rules", "alerts", "transactions.dlq")
    custom = Topics.from_env({"RULES_TOPIC": "r2", "DLQ_TOPIC": "d2"})
    assert (custom.rules, custom.dlq, custom.transactions) == ("r2", "d2", "transactions")
    assert Topics.from_env(custom.as_env()) == custom


def test_only_the_rules_topic_is_compacted_and_single_partition() -> None:
    specs = {s.name: s for s in contract_topics(Topics(), transaction_partitions=3)}
    assert dict(specs["rules"].config)["cleanup.policy"] == "compact"
    assert specs["rules"].partitions == 1
    assert specs["transactions"].partitions == 3
    assert all("cleanup.policy" not in dict(s.config) for n, s in specs.items() if n != "rules")


@pytest.mark.parametrize(
    ("librdkafka", "java"),
    [
        ({}, {}),
        ({"security.protocol": "SSL", "ssl.ca.location": "/ca.pem"},
         {"security.protocol": "SSL", "ssl.truststore.location": "/ca.pem", "ssl.truststore.type": "PEM"}),
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "u",
          "sasl.password": 'p"w'},
         {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
          "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" '
          'password="p\\"w";'}),
        ({"sasl.mechanisms": "PLAIN", "sasl.username": "u", "sasl.password": "p"},
         {"sasl.mechanism": "PLAIN",
          "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" '
          'password="p";'}),
        ({"client.id": "x"}, {"client.id": "x"}),
    ],
)  # fmt: skip
def test_spark_options_speak_the_java_clients_language(librdkafka: dict[str, str], java: dict[str, str]) -> None:
    options = KafkaSettings("b:1", librdkafka).spark_options()
    assert options == {"kafka.bootstrap.servers": "b:1", **{f"kafka.{k}": v for k, v in java.items()}}
