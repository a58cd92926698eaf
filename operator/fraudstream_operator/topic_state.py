"""What the rules topic holds: read once at startup, then kept current by every send the operator makes.

The operator is the topic's only writer, so after the startup read its own sends are enough to know the latest
value of every key. That lets it skip sends that would change nothing, which is what keeps restarts from
duplicating rules on the topic.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

from fraudstream_kafka.settings import ConfigValue, KafkaSettings

from .exceptions import KafkaUnavailableError


@dataclass(frozen=True)
class TopicRecord:
    """The latest record of one key: value None is a tombstone."""

    value: bytes | None
    partition: int
    offset: int


def owner_of(value: bytes | None) -> str | None:
    """The uid of the FraudRule whose rule message `value` is; None for a tombstone, or a value naming none."""
    if value is None:
        return None
    try:
        message = json.loads(value)
    except ValueError:
        return None
    uid = message.get("uid") if isinstance(message, dict) else None
    return uid if isinstance(uid, str) else None


class TopicState:
    """Latest record per key, shared by the handler threads; a key whose last send may or may not have landed is
    not known until a send for it succeeds."""

    def __init__(self, records: Mapping[str, TopicRecord] | None = None) -> None:
        self._records = dict(records or {})
        self._unknown: dict[str, set[str | None]] = {}  # per unknown key, the owners of the values sent unacknowledged
        self._lock = threading.Lock()

    def lookup(self, key: str) -> tuple[TopicRecord | None, bool]:
        """The key's latest record as last known (None: absent), and whether it is known now: False from a send that
        may or may not have landed (`unknown`) until one for the key succeeds."""
        with self._lock:
            return self._records.get(key), key not in self._unknown

    def possible_owners(self, key: str) -> set[str | None]:
        """The owner (`owner_of`) of every value the key's latest record may hold: the last known one and, while the
        key is unknown, each value sent unacknowledged since. A set of uids, not of values: retries while Kafka is
        down add nothing."""
        with self._lock:
            latest = self._records.get(key)
            unacknowledged = set(self._unknown.get(key, set()))
        return {owner_of(latest.value if latest is not None else None), *unacknowledged}

    def record(self, key: str, record: TopicRecord) -> None:
        with self._lock:
            self._records[key] = record
            self._unknown.pop(key, None)

    def unknown(self, key: str, value: bytes | None) -> None:
        """A send of `value` for `key` was not acknowledged but may have been appended: whatever the key's latest
        record was, it may now be this one."""
        owner = owner_of(value)
        with self._lock:
            self._unknown.setdefault(key, set()).add(owner)

    def latest_values(self) -> dict[str, bytes | None]:
        with self._lock:
            return {key: record.value for key, record in self._records.items()}


def _partitions(consumer: Consumer, topic: str, timeout_s: float) -> list[int]:
    metadata = consumer.list_topics(topic, timeout=timeout_s).topics.get(topic)
    if metadata is None or metadata.error is not None:
        detail = metadata.error if metadata is not None else "no metadata"
        raise KafkaUnavailableError(f"topic {topic} cannot be read: {detail}")
    return sorted(metadata.partitions)


def _fold(consumer: Consumer, ends: dict[int, int], deadline: float, topic: str) -> dict[str, TopicRecord]:
    """Polls until every partition's position reached its end offset; the last record per key wins."""
    latest: dict[str, TopicRecord] = {}
    positions = dict.fromkeys(ends, -1)
    while any(positions[p] < end for p, end in ends.items()):
        if time.monotonic() > deadline:
            raise KafkaUnavailableError(f"topic {topic} was not read to its end in time (positions {positions})")
        msg = consumer.poll(0.2)
        if msg is None:
            continue
        error = msg.error()
        partition = int(msg.partition() or 0)
        if error is not None and error.code() == KafkaError._PARTITION_EOF:
            positions[partition] = max(positions[partition], int(msg.offset() or 0))
        elif error is not None:
            raise KafkaUnavailableError(f"reading topic {topic} failed: {error.str()}")
        else:
            offset = int(msg.offset() or 0)
            positions[partition] = offset + 1
            key = (msg.key() or b"").decode(errors="replace")
            latest[key] = TopicRecord(value=msg.value(), partition=partition, offset=offset)
    return latest


def read_topic(settings: KafkaSettings, topic: str, timeout_s: float) -> TopicState:
    """Reads `topic` from the beginning to its current end offsets: the latest record of every key."""
    extra: dict[str, ConfigValue] = {
        "group.id": f"fraudstream-operator-read-{uuid.uuid4().hex}",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "auto.offset.reset": "earliest",
    }
    consumer = Consumer(settings.client_config(**extra))
    try:
        deadline = time.monotonic() + timeout_s
        ends: dict[int, int] = {}
        for partition in _partitions(consumer, topic, timeout_s):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout_s)
            if high > low:
                ends[partition] = high
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in ends])
        return TopicState(_fold(consumer, ends, deadline, topic))
    except KafkaException as exc:
        raise KafkaUnavailableError(f"reading topic {topic} failed: {exc}") from exc
    finally:
        consumer.close()
