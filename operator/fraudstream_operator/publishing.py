"""Making the rules topic's latest record for a key equal what the cluster says, without sends that change nothing."""

from __future__ import annotations

from typing import Protocol

from .exceptions import DeliveryUnknownError, OperatorError
from .metrics import PUBLISH_LATENCY, PUBLISHES
from .rules_producer import Delivery
from .topic_state import TopicRecord, TopicState


class Sender(Protocol):
    """What publishing needs from a producer (RulesProducer in the operator)."""

    def send(self, key: str, value: bytes | None) -> Delivery: ...


def _send(publisher: Sender, topic: TopicState, key: str, value: bytes | None, kind: str) -> TopicRecord:
    try:
        delivery = publisher.send(key, value)
    except OperatorError as error:
        PUBLISHES.labels(kind, "failed").inc()
        if isinstance(error, DeliveryUnknownError):
            topic.unknown(key)
        raise
    PUBLISHES.labels(kind, "delivered").inc()
    PUBLISH_LATENCY.labels(kind).observe(delivery.latency_s)
    record = TopicRecord(value=value, partition=delivery.partition, offset=delivery.offset)
    topic.record(key, record)
    return record


def publish(publisher: Sender, topic: TopicState, key: str, value: bytes) -> tuple[TopicRecord, bool]:
    """Sends (key, value) unless it is known to be the key's latest record already.

    Returns the key's latest record afterwards and whether it was sent now; raises OperatorError if a send failed.
    """
    latest, known = topic.lookup(key)
    if latest is not None and latest.value == value and known:
        PUBLISHES.labels("rule", "unchanged").inc()
        return latest, False
    return _send(publisher, topic, key, value, "rule"), True


def tombstone(publisher: Sender, topic: TopicState, key: str) -> bool:
    """Sends a tombstone for `key` unless the key is known to be absent or tombstoned already; True if one was sent.
    A key whose rule message was sent but never acknowledged is tombstoned: that message may be on the topic."""
    latest, known = topic.lookup(key)
    if (latest is None or latest.value is None) and known:
        PUBLISHES.labels("tombstone", "unchanged").inc()
        return False
    _send(publisher, topic, key, None, "tombstone")
    return True
