"""Telling wrong credentials apart from an unreachable broker, and saying which listener and mechanism refused.

A component calls `check_credentials` at start: a broker that refuses the TLS handshake or the SASL
authentication is a configuration error to report once, clearly, and exit on (`CredentialsRefusedError`), while
a broker that does not answer is waited for as before.
"""

from __future__ import annotations

import time
from typing import Any, Final

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from .exceptions import CredentialsRefusedError
from .settings import KafkaSettings

# librdkafka's codes for a refused authentication (reported through error_cb, never retried usefully).
SASL_REFUSED: Final = frozenset({KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED})
# A broker that refuses a client certificate sends a TLS alert, which TLS 1.3 delivers after the client's side of
# the handshake is done: librdkafka reports it as a transport error naming the alert.
_TLS_ALERT = "ssl/tls alert"


def refused(error: KafkaError) -> bool:
    """Whether `error` says a broker refused this client's credentials (as opposed to not answering)."""
    code = error.code()
    tls_alert = code == KafkaError._TRANSPORT and _TLS_ALERT in error.str()
    return code in SASL_REFUSED or code == KafkaError._SSL or tls_alert


def describe_listener(settings: KafkaSettings) -> str:
    """Where and how a client connects, without secrets, e.g. `the SASL_SSL listener at b:9093 (SASL mechanism
    SCRAM-SHA-512, user 'detector')` or `the SSL listener at b:9094 (mutual TLS, client certificate /c.crt)`."""
    props = settings.client_properties
    protocol = props.get("security.protocol", "PLAINTEXT").upper()
    where = f"the {protocol} listener at {settings.bootstrap}"
    how: list[str] = []
    if protocol.startswith("SASL"):
        mechanism = props.get("sasl.mechanism") or props.get("sasl.mechanisms") or "GSSAPI"
        how.append(f"SASL mechanism {mechanism}")
        if "sasl.username" in props:
            how.append(f"user {props['sasl.username']!r}")
    if protocol.endswith("SSL"):
        certificate = props.get("ssl.certificate.location") or props.get("ssl.keystore.location")
        how.append(f"mutual TLS, client certificate {certificate}" if certificate else "TLS without client certificate")
        if "ssl.ca.location" in props:
            how.append(f"CA {props['ssl.ca.location']}")
    return f"{where} ({', '.join(how)})" if how else where


def refusal_message(settings: KafkaSettings, error: KafkaError, who: str) -> str:
    """One sentence for the log: what refused `who`, where, with which mechanism, and librdkafka's reason."""
    if error.code() == KafkaError._SSL:
        what = "the TLS handshake failed"
        hint = "check that the CA (KAFKA_CLIENT_SSL_CA_LOCATION) is the one that signed the brokers' certificates"
    elif error.code() == KafkaError._TRANSPORT:
        what = "the broker refused the client certificate"
        hint = (
            "check the client certificate and key (KAFKA_CLIENT_SSL_CERTIFICATE_LOCATION, "
            "KAFKA_CLIENT_SSL_KEY_LOCATION): the brokers must trust the CA that signed it"
        )
    else:
        what = "the broker refused the credentials"
        hint = "check the user name and password (KAFKA_CLIENT_SASL_USERNAME, KAFKA_CLIENT_SASL_PASSWORD)"
    return f"{who} cannot connect to Kafka: {what} on {describe_listener(settings)}: {error.str()}; {hint}"


def check_credentials(settings: KafkaSettings, timeout_s: float = 10.0, who: str = "this client") -> bool:
    """True once a broker answered a metadata request (TLS and SASL, where configured, succeeded); False if no broker
    answered within `timeout_s` (unreachable: the caller decides whether to wait).

    Raises CredentialsRefusedError, with `refusal_message`, as soon as a broker refused the handshake or the
    authentication. librdkafka's own log is silenced for this probe; the error says it all.
    """
    refusals: list[KafkaError] = []

    def on_error(error: KafkaError) -> None:
        if refused(error):
            refusals.append(error)

    config: dict[str, Any] = {**settings.client_config(), "error_cb": on_error, "log_level": 0}
    admin = AdminClient(config)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if admin.list_topics(timeout=min(1.0, max(0.1, deadline - time.monotonic()))).brokers:
                return True
        except KafkaException:
            pass
        admin.poll(0)  # delivers error_cb
        if refusals:
            raise CredentialsRefusedError(refusal_message(settings, refusals[0], who))
        if time.monotonic() >= deadline:
            return False
