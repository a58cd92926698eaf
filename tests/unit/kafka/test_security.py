"""Telling refused credentials from an unreachable broker, and messages that name the listener and mechanism."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from fraudstream_kafka.security import describe_listener, refusal_message, refused
from fraudstream_kafka.settings import KafkaSettings

SCRAM = KafkaSettings(
    "b:9093",
    {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "detector",
     "sasl.password": "s3cret", "ssl.ca.location": "/ca.crt"},
)  # fmt: skip
MTLS = KafkaSettings(
    "b:9094",
    {"security.protocol": "SSL", "ssl.ca.location": "/ca.crt", "ssl.certificate.location": "/c.crt",
     "ssl.key.location": "/c.key"},
)  # fmt: skip


@pytest.mark.parametrize(
    ("settings", "described"),
    [
        (KafkaSettings("b:9092"), "the PLAINTEXT listener at b:9092"),
        (SCRAM, "the SASL_SSL listener at b:9093 (SASL mechanism SCRAM-SHA-512, user 'detector', "
                "TLS without client certificate, CA /ca.crt)"),
        (MTLS, "the SSL listener at b:9094 (mutual TLS, client certificate /c.crt, CA /ca.crt)"),
        (KafkaSettings("b:1", {"security.protocol": "sasl_plaintext", "sasl.mechanisms": "PLAIN"}),
         "the SASL_PLAINTEXT listener at b:1 (SASL mechanism PLAIN)"),
        (KafkaSettings("b:1", {"security.protocol": "SASL_SSL"}),
         "the SASL_SSL listener at b:1 (SASL mechanism GSSAPI, TLS without client certificate)"),
    ],
)  # fmt: skip
def test_the_listener_is_described_without_secrets(settings: KafkaSettings, described: str) -> None:
    assert describe_listener(settings) == described
    assert "s3cret" not in describe_listener(settings)


@pytest.mark.parametrize(
    ("error", "is_refusal"),
    [
        (KafkaError(KafkaError._AUTHENTICATION, "SASL authentication error: invalid credentials"), True),
        (KafkaError(KafkaError.SASL_AUTHENTICATION_FAILED, "bad"), True),
        (KafkaError(KafkaError._SSL, "SSL handshake failed: certificate verify failed"), True),
        (KafkaError(KafkaError._TRANSPORT, "Receive failed: ssl/tls alert bad certificate: SSL alert number 42"), True),
        (KafkaError(KafkaError._TRANSPORT, "Connect to ipv4#127.0.0.1:9 failed: Connection refused"), False),
        (KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down"), False),
        (KafkaError(KafkaError._TIMED_OUT, "timed out"), False),
        (KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED, "not authorized"), False),
    ],
)
def test_only_a_refused_handshake_or_authentication_counts_as_refused(error: KafkaError, is_refusal: bool) -> None:
    assert refused(error) is is_refusal


@pytest.mark.parametrize(
    ("settings", "error", "says"),
    [
        (SCRAM, KafkaError(KafkaError._AUTHENTICATION, "invalid credentials with SASL mechanism SCRAM-SHA-512"),
         ["the broker refused the credentials on the SASL_SSL listener at b:9093", "SCRAM-SHA-512",
          "KAFKA_CLIENT_SASL_PASSWORD"]),
        (MTLS, KafkaError(KafkaError._TRANSPORT, "ssl/tls alert certificate unknown"),
         ["the broker refused the client certificate on the SSL listener at b:9094", "mutual TLS",
          "KAFKA_CLIENT_SSL_CERTIFICATE_LOCATION"]),
        (MTLS, KafkaError(KafkaError._SSL, "certificate verify failed"),
         ["the TLS handshake failed on the SSL listener at b:9094", "KAFKA_CLIENT_SSL_CA_LOCATION"]),
    ],
)  # fmt: skip
def test_the_refusal_message_names_who_where_how_and_what_to_check(
    settings: KafkaSettings, error: KafkaError, says: list[str]
) -> None:
    message = refusal_message(settings, error, "the detector")
    assert message.startswith("the detector cannot connect to Kafka: ")
    for part in [*says, error.str()]:
        assert part in message
    assert "s3cret" not in message
