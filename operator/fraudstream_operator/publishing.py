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
            topic.unknown(key, value)
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


def retire_other_object(publisher: Sender, topic: TopicState, key: str, uid: str) -> bool:
    """Tombstones `key` if its latest record may be the rule of another object than `uid` and cannot be this
    object's own; True if it did.

    That is a FraudRule deleted without its delete handler (its finalizer removed by hand) and created again under
    the same name: when the new object's rule cannot be published, nothing of its own is live, and the deleted
    object's rule must not stay live in its place. Records whose uid cannot be read are left out of the decision.
    """
    owners = topic.possible_owners(key) - {None}
    if not owners or uid in owners:
        return False
    _send(publisher, topic, key, None, "tombstone")
    return True
