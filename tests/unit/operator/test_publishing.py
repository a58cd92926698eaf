"""Publishing sends a record only when it changes the key's latest record on the topic."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import KafkaError, KafkaException

from fraudstream_kafka.settings import KafkaSettings
from fraudstream_operator.exceptions import DeliveryUnknownError, KafkaUnavailableError, PublishRejectedError
from fraudstream_operator.publishing import publish, retire_other_object, tombstone
from fraudstream_operator.rules_producer import Delivery, RulesProducer, delivery_error, queue_error
from fraudstream_operator.topic_state import TopicRecord, TopicState


class FakeSender:
    """Appends to an in-memory partition; while `down`, fails every send before sending it; while `unacknowledged`,
    appends each and fails it as a broker whose acknowledgement never came (the record landed all the same)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes | None]] = []
        self.down = False
        self.unacknowledged = False

    def send(self, key: str, value: bytes | None) -> Delivery:
        if self.down:
            raise KafkaUnavailableError("no broker")
        self.sent.append((key, value))
        if self.unacknowledged:
            raise DeliveryUnknownError("no delivery report")
        return Delivery(topic="rules", partition=0, offset=100 + len(self.sent), latency_s=0.01)


def test_a_new_rule_is_sent_and_remembered() -> None:
    sender, topic = FakeSender(), TopicState()

    record, sent = publish(sender, topic, "a/x", b"v1")

    assert (record, sent) == (TopicRecord(b"v1", 0, 101), True)
    assert topic.lookup("a/x") == (record, True)


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

    assert topic.lookup("a/x") == (TopicRecord(b"v1", 0, 7), True)  # it was never sent: the topic still holds v1


def test_a_rule_whose_send_was_never_acknowledged_is_tombstoned_when_deleted() -> None:
    sender, topic = FakeSender(), TopicState()
    sender.unacknowledged = True
    with pytest.raises(DeliveryUnknownError):
        publish(sender, topic, "a/x", b"v1")  # appended, but the operator cannot know it
    sender.unacknowledged = False

    assert tombstone(sender, topic, "a/x") is True
    assert sender.sent == [("a/x", b"v1"), ("a/x", None)]
    assert topic.lookup("a/x")[1] and topic.latest_values() == {"a/x": None}
    assert tombstone(sender, topic, "a/x") is False  # known tombstoned now


def test_after_an_unacknowledged_send_the_known_value_is_sent_again() -> None:
    sender, topic = FakeSender(), TopicState({"a/x": TopicRecord(b"v1", 0, 7)})
    sender.unacknowledged = True
    with pytest.raises(DeliveryUnknownError):
        publish(sender, topic, "a/x", b"v2")  # v2 may now be the latest
    sender.unacknowledged = False

    record, sent = publish(sender, topic, "a/x", b"v1")

    assert (sent, sender.sent[-1], record.value) == (True, ("a/x", b"v1"), b"v1")
    assert publish(sender, topic, "a/x", b"v1")[1] is False


def test_a_tombstone_never_acknowledged_is_sent_again() -> None:
    sender, topic = FakeSender(), TopicState({"a/x": TopicRecord(b"v1", 0, 7)})
    sender.unacknowledged = True
    with pytest.raises(DeliveryUnknownError):
        tombstone(sender, topic, "a/x")
    sender.unacknowledged = False

    assert tombstone(sender, topic, "a/x") is True
    assert sender.sent == [("a/x", None), ("a/x", None)]


@pytest.mark.parametrize(
    ("code", "error_type"),
    [
        (KafkaError._MSG_TIMED_OUT, DeliveryUnknownError),
        (KafkaError._ALL_BROKERS_DOWN, DeliveryUnknownError),
        (KafkaError._TRANSPORT, DeliveryUnknownError),
        (KafkaError.NOT_ENOUGH_REPLICAS, DeliveryUnknownError),
        (KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND, DeliveryUnknownError),
        (KafkaError._FATAL, DeliveryUnknownError),
        (KafkaError._PURGE_INFLIGHT, DeliveryUnknownError),
        (KafkaError._PURGE_QUEUE, DeliveryUnknownError),
        (KafkaError.MSG_SIZE_TOO_LARGE, PublishRejectedError),
        (KafkaError.TOPIC_AUTHORIZATION_FAILED, PublishRejectedError),
        (KafkaError.UNKNOWN_TOPIC_OR_PART, PublishRejectedError),
    ],
)
def test_delivery_errors_are_classified(code: int, error_type: type[Exception]) -> None:
    error = delivery_error(KafkaError(code), "rules")

    assert type(error) is error_type
    assert "topic rules" in str(error)


@pytest.mark.parametrize(
    ("exc", "error_type"),
    [
        (KafkaException(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE)), PublishRejectedError),
        (KafkaException(KafkaError(KafkaError._TRANSPORT)), KafkaUnavailableError),
        (KafkaException(KafkaError(KafkaError._FATAL)), KafkaUnavailableError),
        (KafkaException(KafkaError(KafkaError._UNKNOWN_TOPIC)), KafkaUnavailableError),
        (BufferError("Local: Queue full"), KafkaUnavailableError),
    ],
    ids=["too-large", "transport", "fatal", "unknown-topic", "queue-full"],
)
def test_a_record_the_client_would_not_queue_was_never_sent(exc: Exception, error_type: type[Exception]) -> None:
    assert isinstance(exc, (BufferError, KafkaException))
    error = queue_error(exc, "rules")

    assert type(error) is error_type  # never DeliveryUnknownError: nothing can have landed
    assert "topic rules" in str(error)


@pytest.mark.parametrize(
    ("error", "replaced"),
    [(KafkaError(KafkaError._FATAL), True), (KafkaError(KafkaError._TRANSPORT), False)],
    ids=["fatal", "transport"],
)
def test_a_producer_that_reported_a_fatal_error_is_replaced(error: KafkaError, replaced: bool) -> None:
    # confluent_kafka's KafkaErrors say fatal() False even for _FATAL: the code decides.
    producer = RulesProducer(KafkaSettings(bootstrap="127.0.0.1:1"), "rules", timeout_s=0.1)
    try:
        first = producer._producer
        producer._replace_if_fatal(first, error)
        assert (producer._producer is not first) is replaced
    finally:
        producer.close()


def rule_value(uid: str) -> bytes:
    return json.dumps({"formatVersion": 1, "ruleId": "a/x", "generation": 1, "uid": uid, "spec": {}}).encode()


@pytest.mark.parametrize(
    ("latest", "retired"),
    [
        (TopicRecord(rule_value("old-uid"), 0, 7), True),
        (TopicRecord(rule_value("new-uid"), 0, 7), False),
        (TopicRecord(None, 0, 7), False),
        (None, False),
        (TopicRecord(b"not json", 0, 7), False),
        (TopicRecord(b'{"uid": 7}', 0, 7), False),
    ],
    ids=["another-objects-rule", "its-own-rule", "tombstoned", "absent", "unreadable", "no-string-uid"],
)
def test_only_another_objects_rule_is_retired(latest: TopicRecord | None, retired: bool) -> None:
    sender, topic = FakeSender(), TopicState({"a/x": latest} if latest is not None else {})

    assert retire_other_object(sender, topic, "a/x", "new-uid") is retired
    assert sender.sent == ([("a/x", None)] if retired else [])
    assert topic.lookup("a/x")[0] == (TopicRecord(None, 0, 101) if retired else latest)


def test_a_key_whose_unacknowledged_send_was_its_own_rule_is_not_retired() -> None:
    """That send may have been this object's own last valid generation, which an invalid edit keeps live."""
    sender, topic = FakeSender(), TopicState({"a/x": TopicRecord(rule_value("old-uid"), 0, 7)})
    topic.unknown("a/x", rule_value("new-uid"))

    assert retire_other_object(sender, topic, "a/x", "new-uid") is False
    assert sender.sent == []


def test_a_retirement_whose_tombstone_went_unacknowledged_is_retried() -> None:
    sender, topic = FakeSender(), TopicState({"a/x": TopicRecord(rule_value("old-uid"), 0, 7)})
    sender.unacknowledged = True
    with pytest.raises(DeliveryUnknownError):
        retire_other_object(sender, topic, "a/x", "new-uid")
    sender.unacknowledged = False

    assert retire_other_object(sender, topic, "a/x", "new-uid") is True
    assert sender.sent == [("a/x", None), ("a/x", None)]
    assert topic.possible_owners("a/x") == {None}


def test_a_failed_retirement_raises_so_that_it_is_retried() -> None:
    sender, topic = FakeSender(), TopicState({"a/x": TopicRecord(rule_value("old-uid"), 0, 7)})
    sender.down = True

    with pytest.raises(KafkaUnavailableError):
        retire_other_object(sender, topic, "a/x", "new-uid")
    assert topic.lookup("a/x") == (TopicRecord(rule_value("old-uid"), 0, 7), True)


def test_unacknowledged_retries_of_one_rule_keep_one_owner() -> None:
    """While Kafka is down kopf retries every backoff period; what the operator remembers must not grow with that."""
    sender, topic = FakeSender(), TopicState()
    sender.unacknowledged = True
    for _ in range(100):
        with pytest.raises(DeliveryUnknownError):
            publish(sender, topic, "a/x", rule_value("uid-1") + b" " * 10_000)

    assert topic.possible_owners("a/x") == {None, "uid-1"}
