"""Publishing sends a record only when it changes the key's latest record on the topic."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from fraudstream_operator.exceptions import KafkaUnavailableError, PublishRejectedError
from fraudstream_operator.publishing import publish, tombstone
from fraudstream_operator.rules_producer import Delivery, delivery_error
from fraudstream_operator.topic_state import TopicRecord, TopicState


class FakeSender:
    """Appends to an in-memory partition; fails every send while `down`."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes | None]] = []
        self.down = False

    def send(self, key: str, value: bytes | None) -> Delivery:
        if self.down:
            raise KafkaUnavailableError("no broker")
        self.sent.append((key, value))
        return Delivery(topic="rules", partition=0, offset=100 + len(self.sent), latency_s=0.01)


def test_a_new_rule_is_sent_and_remembered() -> None:
    sender, topic = FakeSender(), TopicState()

    record, sent = publish(sender, topic, "a/x", b"v1")

    assert (record, sent) == (TopicRecord(b"v1", 0, 101), True)
    assert topic.get("a/x") == record


def test_the_latest_value_again_is_not_sent() -> None:
    sender, topic = FakeSender(), TopicState({"a/x": TopicRecord(b"v1", 0, 7)})

    record, sent = publish(sender, topic, "a/x", b"v1")

    assert (record, sent, sender.sent) == (TopicRecord(b"v1", 0, 7), False, [])


def test_a_changed_value_is_sent() -> None:
    sender, topic = FakeSender(), TopicState({"a/x": TopicRecord(b"v1", 0, 7)})

    record, sent = publish(sender, topic, "a/x", b"v2")

    assert (record.offset, sent, sender.sent) == (101, True, [("a/x", b"v2")])


@pytest.mark.parametrize(
    ("records", "sends"),
    [
        ({}, []),
        ({"a/x": TopicRecord(None, 0, 9)}, []),
        ({"a/x": TopicRecord(b"v1", 0, 7)}, [("a/x", None)]),
    ],
    ids=["absent", "already-tombstoned", "live"],
)
def test_a_tombstone_is_sent_only_for_a_live_key(
    records: dict[str, TopicRecord], sends: list[tuple[str, bytes | None]]
) -> None:
    sender, topic = FakeSender(), TopicState(records)

    assert tombstone(sender, topic, "a/x") is bool(sends)
    assert sender.sent == sends
    assert topic.latest_values().get("a/x") is None


def test_a_failed_send_leaves_the_known_state_as_it_was() -> None:
    sender, topic = FakeSender(), TopicState({"a/x": TopicRecord(b"v1", 0, 7)})
    sender.down = True

    with pytest.raises(KafkaUnavailableError):
        publish(sender, topic, "a/x", b"v2")

    assert topic.get("a/x") == TopicRecord(b"v1", 0, 7)


@pytest.mark.parametrize(
    ("code", "error_type"),
    [
        (KafkaError._MSG_TIMED_OUT, KafkaUnavailableError),
        (KafkaError._ALL_BROKERS_DOWN, KafkaUnavailableError),
        (KafkaError._TRANSPORT, KafkaUnavailableError),
        (KafkaError.NOT_ENOUGH_REPLICAS, KafkaUnavailableError),
        (KafkaError.MSG_SIZE_TOO_LARGE, PublishRejectedError),
        (KafkaError.TOPIC_AUTHORIZATION_FAILED, PublishRejectedError),
        (KafkaError.UNKNOWN_TOPIC_OR_PART, PublishRejectedError),
    ],
)
def test_delivery_errors_are_classified(code: int, error_type: type[Exception]) -> None:
    error = delivery_error(KafkaError(code), "rules")

    assert type(error) is error_type
    assert "topic rules" in str(error)
