"""Creating fraudstream's topics with the configuration the contract requires (idempotent)."""

from __future__ import annotations

from dataclasses import dataclass

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from .settings import KafkaSettings, Topics


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int
    config: tuple[tuple[str, str], ...] = ()


def contract_topics(topics: Topics, transaction_partitions: int = 2) -> list[TopicSpec]:
    """The topics of CONTRACT section 2; `rules` is compacted and single-partition, so one reader sees one order."""
    return [
        TopicSpec(topics.transactions, transaction_partitions),
        TopicSpec(
            topics.rules,
            1,
            (("cleanup.policy", "compact"), ("min.cleanable.dirty.ratio", "0.01"), ("segment.ms", "60000")),
        ),
        TopicSpec(topics.alerts, transaction_partitions),
        TopicSpec(topics.dlq, 1),
    ]


def ensure_topics(settings: KafkaSettings, specs: list[TopicSpec], replication: int = 1, timeout_s: float = 30) -> None:
    """Creates each topic that does not exist yet; an existing topic is left as it is."""
    admin = AdminClient(settings.client_config())
    new = [NewTopic(s.name, s.partitions, replication, config=dict(s.config)) for s in specs]
    for name, future in admin.create_topics(new, request_timeout=timeout_s).items():
        try:
            future.result(timeout=timeout_s)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise RuntimeError(f"could not create topic {name}: {exc}") from exc
