"""Creating fraudstream's topics with the configuration the contract requires (idempotent), and checking the
configuration of topics that already exist (CONTRACT section 2).

Contract: `alerts` and `transactions.dlq` get a `max.message.bytes` of the `transactions` topic's plus
`OUTPUT_HEADROOM_BYTES`, so that anything accepted on `transactions` can be alerted on or dead-lettered (a DLQ
record is the original value plus bounded headers; an alert is the transaction plus ~1 KiB, or more when a grouping
value is large). Against existing topics, `output_headroom_problems` says what to change.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType
from confluent_kafka.cimpl import NewTopic

from .exceptions import NotAuthorizedError
from .security import describe_listener
from .settings import KafkaSettings, Topics

OUTPUT_HEADROOM_BYTES: Final = 64 * 1024
DEFAULT_MAX_MESSAGE_BYTES: Final = 1_048_588  # Kafka's default (broker message.max.bytes)


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int
    config: tuple[tuple[str, str], ...] = ()


def contract_topics(
    topics: Topics, transaction_partitions: int = 2, transactions_max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
) -> list[TopicSpec]:
    """The topics of CONTRACT section 2; `rules` is compacted and single-partition, so one reader sees one order."""
    output = (("max.message.bytes", str(transactions_max_message_bytes + OUTPUT_HEADROOM_BYTES)),)
    return [
        TopicSpec(topics.transactions, transaction_partitions),
        TopicSpec(
            topics.rules,
            1,
            (("cleanup.policy", "compact"), ("min.cleanable.dirty.ratio", "0.01"), ("segment.ms", "60000")),
        ),
        TopicSpec(topics.alerts, transaction_partitions, output),
        TopicSpec(topics.dlq, 1, output),
    ]


_NOT_AUTHORIZED = (KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.CLUSTER_AUTHORIZATION_FAILED)


def ensure_topics(settings: KafkaSettings, specs: list[TopicSpec], replication: int = 1, timeout_s: float = 30) -> None:
    """Creates each topic that does not exist yet; an existing topic is left as it is.

    A client without CREATE (on a secured Kafka, topics are an administrator's to create) is fine as long as the
    topics exist: a refused create of a topic the client can see counts as "exists". Raises KafkaException (a
    broker could not be reached in time), NotAuthorizedError (a topic is missing and this principal may not create
    it, or cannot even see it: the message names the topics and what to do) or RuntimeError (a broker refused).
    """
    admin = AdminClient(settings.client_config())
    new = [NewTopic(s.name, s.partitions, replication, config=dict(s.config)) for s in specs]
    refused: list[str] = []
    for name, future in admin.create_topics(new, request_timeout=timeout_s).items():
        try:
            future.result(timeout=timeout_s)
        except KafkaException as exc:
            code = exc.args[0].code()
            if code == KafkaError.TOPIC_ALREADY_EXISTS:
                continue
            if code in _NOT_AUTHORIZED:
                refused.append(name)
                continue
            if exc.args[0].retriable() or code in (KafkaError._TRANSPORT, KafkaError._TIMED_OUT):
                raise
            raise RuntimeError(f"could not create topic {name}: {exc}") from exc
    if refused:
        visible = admin.list_topics(timeout=timeout_s).topics
        missing = sorted(name for name in refused if name not in visible)
        if missing:
            raise NotAuthorizedError(
                f"topics {', '.join(missing)} do not exist, or are not visible to this principal, and it may not "
                f"create them ({describe_listener(settings)}): have an administrator create them and grant this "
                "principal its ACLs (docs/security.md), or grant it CREATE"
            )


def max_message_bytes(settings: KafkaSettings, names: list[str], timeout_s: float = 30) -> dict[str, int]:
    """Each topic's effective `max.message.bytes` (its own setting or the broker's default). A topic created a
    moment ago may not be known to the broker yet; it is asked again until `timeout_s` has passed. Raises
    NotAuthorizedError when the principal lacks DescribeConfigs on a topic."""
    admin = AdminClient(settings.client_config())
    deadline = time.monotonic() + timeout_s
    limits: dict[str, int] = {}
    while True:
        resources = [ConfigResource(ResourceType.TOPIC, name) for name in names if name not in limits]
        unknown = False
        for resource, future in admin.describe_configs(resources, request_timeout=timeout_s).items():
            try:
                limits[resource.name] = int(future.result(timeout=timeout_s)["max.message.bytes"].value)
            except KafkaException as exc:
                if exc.args[0].code() in _NOT_AUTHORIZED:
                    raise NotAuthorizedError(
                        f"this principal may not read the configuration of topic {resource.name} "
                        f"({describe_listener(settings)}): grant it DescribeConfigs on the topic (docs/security.md)"
                    ) from exc
                if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART or time.monotonic() > deadline:
                    raise
                unknown = True
        if not unknown:
            return limits
        time.sleep(0.2)


def ensure_contract_topics(
    settings: KafkaSettings, topics: Topics, transaction_partitions: int = 2, timeout_s: float = 30
) -> dict[str, int]:
    """Creates the contract's topics that do not exist, sizing `alerts` and the DLQ after `transactions` (created
    first), and returns every contract topic's `max.message.bytes`."""
    ensure_topics(settings, contract_topics(topics, transaction_partitions)[:1], timeout_s=timeout_s)
    transactions = max_message_bytes(settings, [topics.transactions], timeout_s)[topics.transactions]
    ensure_topics(settings, contract_topics(topics, transaction_partitions, transactions)[1:], timeout_s=timeout_s)
    return max_message_bytes(settings, [topics.transactions, topics.rules, topics.alerts, topics.dlq], timeout_s)


def output_headroom_problems(limits: Mapping[str, int], topics: Topics, bootstrap: str) -> list[str]:
    """What to change, one sentence each, where `alerts` or the DLQ take less than `transactions` plus the headroom."""
    needed = limits[topics.transactions] + OUTPUT_HEADROOM_BYTES
    return [
        f"topic {name} has max.message.bytes={limits[name]}, less than {topics.transactions}'s "
        f"{limits[topics.transactions]} + {OUTPUT_HEADROOM_BYTES}: a transaction that topic accepts may be neither "
        f"alerted on nor dead-lettered (it is then counted as unwritable). Raise it: kafka-configs.sh "
        f"--bootstrap-server {bootstrap} --alter --entity-type topics --entity-name {name} "
        f"--add-config max.message.bytes={needed}"
        for name in (topics.alerts, topics.dlq)
        if limits[name] < needed
    ]
