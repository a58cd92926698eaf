"""Helpers for tests on the session's secured broker: per-test topics created by the admin with every component's
ACLs on them (as the local stack does), and single records produced as a given principal."""

from __future__ import annotations

from confluent_kafka import KafkaError, Message, Producer

from fraudstream_kafka.acls import all_acls, create_acls
from fraudstream_kafka.settings import ConfigValue, KafkaSettings, Topics
from fraudstream_kafka.topics import ensure_contract_topics
from fraudstream_localstack.kafka import KafkaBroker
from fraudstream_localstack.kafka_security import COMPONENT_USERS

MODES_IDS = ("sasl_ssl", "mtls")


def secure_topics(broker: KafkaBroker, topics: Topics) -> None:
    """The contract's topics, created by the admin, and each component's grants on them (no more)."""
    ensure_contract_topics(broker.admin_settings, topics)
    principals = {component: f"User:{user}" for component, user in COMPONENT_USERS.items()}
    create_acls(broker.admin_settings, all_acls(principals, topics))


def produce_one(settings: KafkaSettings, topic: str, key: bytes, value: bytes | None) -> KafkaError | None:
    """Produces one record (value None: a tombstone) with acks=all and waits for its delivery report: None when the
    broker acknowledged it, else the error. Not idempotent, so that a refusal is the topic's own, not the producer
    id's."""
    config: dict[str, ConfigValue] = {"acks": "all", "enable.idempotence": False, "message.timeout.ms": 20_000}
    producer = Producer({**settings.client_config(**config), "log_level": 0})
    reports: list[KafkaError | None] = []

    def report(err: KafkaError | None, _msg: Message) -> None:
        reports.append(err)

    producer.produce(topic, key=key, value=value, on_delivery=report)
    remaining = producer.flush(30)
    assert remaining == 0 and len(reports) == 1, f"no delivery report for {topic} within 30 s"
    return reports[0]
