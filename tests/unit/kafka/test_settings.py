from __future__ import annotations

from pathlib import Path

import pytest

from fraudstream_kafka.settings import KafkaSettings, Topics, java_client_properties
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


def test_a_client_certificate_becomes_a_pem_keystore_holding_the_files_contents(tmp_path: Path) -> None:
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    key.write_text("-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n")
    librdkafka = {"security.protocol": "SSL", "ssl.ca.location": "/ca.pem", "ssl.certificate.location": str(cert),
                  "ssl.key.location": str(key), "ssl.key.password": "kp"}  # fmt: skip

    java = java_client_properties(librdkafka)

    assert java == {
        "security.protocol": "SSL",
        "ssl.truststore.location": "/ca.pem",
        "ssl.truststore.type": "PEM",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.certificate.chain": cert.read_text(),
        "ssl.keystore.key": key.read_text(),
        "ssl.key.password": "kp",
    }
    assert KafkaSettings("b:1", librdkafka).spark_options()["kafka.ssl.keystore.key"] == key.read_text()


@pytest.mark.parametrize("given", ["ssl.certificate.location", "ssl.key.location"])
def test_half_a_client_certificate_is_refused_naming_both_variables(given: str) -> None:
    with pytest.raises(ValueError, match="KAFKA_CLIENT_SSL_CERTIFICATE_LOCATION, KAFKA_CLIENT_SSL_KEY_LOCATION"):
        java_client_properties({"security.protocol": "SSL", given: "/x.pem"})


def test_a_missing_certificate_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "absent.crt"
    with pytest.raises(OSError, match=r"absent\.crt"):
        java_client_properties({"ssl.certificate.location": str(missing), "ssl.key.location": str(missing)})


def test_a_pkcs12_keystore_passes_through_unchanged() -> None:
    props = {"security.protocol": "SSL", "ssl.keystore.location": "/ks.p12", "ssl.keystore.password": "x"}
    assert java_client_properties(props) == props


@pytest.mark.parametrize(
    "props",
    [{}, {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "ssl.ca.location": "/c/ca.crt"}],
)
def test_settings_round_trip_through_the_environment(props: dict[str, str]) -> None:
    settings = KafkaSettings("b:9", props)
    env = settings.as_env()
    assert env["KAFKA_BOOTSTRAP"] == "b:9"
    assert KafkaSettings.from_env(env) == settings
