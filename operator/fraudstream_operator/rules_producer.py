"""Writing rule messages and tombstones to the rules topic, one at a time, each confirmed by its delivery report.

The producer is idempotent with acks=all, so a retried send cannot reorder or duplicate a record within the
producer's session; a send that timed out may still have landed, and a retry then writes the same value again,
which is harmless on a compacted topic.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from fraudstream_kafka.settings import RELIABLE_PRODUCER, ConfigValue, KafkaSettings

from .exceptions import DeliveryUnknownError, KafkaUnavailableError, PublishRejectedError

# Error codes that mean "not acknowledged": the brokers could not be reached in time, or the producer gave up on a
# record it may have sent (fatal, purged in flight or from its queue, as a fatal error purges it); as opposed to "a
# broker said no".
_UNAVAILABLE = {
    KafkaError._FATAL,
    KafkaError._PURGE_INFLIGHT,
    KafkaError._PURGE_QUEUE,
    KafkaError._MSG_TIMED_OUT,
    KafkaError._TIMED_OUT,
    KafkaError._TRANSPORT,
    KafkaError._ALL_BROKERS_DOWN,
    KafkaError._RESOLVE,
    KafkaError.REQUEST_TIMED_OUT,
    KafkaError.NOT_ENOUGH_REPLICAS,
    KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    KafkaError.LEADER_NOT_AVAILABLE,
    KafkaError.NOT_LEADER_FOR_PARTITION,
}


# What produce() itself refuses for the record's own sake, whatever the brokers' state; anything else it raises
# (a fatal producer, an unknown topic, a client in trouble) is retried as unavailability.
_REFUSED_BY_THE_CLIENT = {KafkaError.MSG_SIZE_TOO_LARGE}


def _unavailable(err: KafkaError) -> bool:
    return err.code() in _UNAVAILABLE or err.retriable()


def _fatal(err: KafkaError) -> bool:
    """A producer that reported this is unusable. confluent_kafka builds the KafkaErrors of delivery reports and of
    produce() with fatal() False, so the code says it."""
    return err.fatal() or err.code() == KafkaError._FATAL


def delivery_error(err: KafkaError, topic: str) -> DeliveryUnknownError | PublishRejectedError:
    """The operator error for a failed delivery report: unacknowledged (retry until the brokers answer; the record
    may have been appended all the same) or rejected."""
    if _unavailable(err):
        return DeliveryUnknownError(f"Kafka did not acknowledge the record on topic {topic}: {err.str()}")
    return PublishRejectedError(f"Kafka refused the record on topic {topic}: {err.str()}")


def queue_error(exc: BufferError | KafkaException, topic: str) -> KafkaUnavailableError | PublishRejectedError:
    """The operator error for a record the client would not queue, so never sent: rejected when the client refuses
    the record itself (larger than its message.max.bytes), else unavailable (a full queue, a fatal producer, a
    client in trouble)."""
    err = _kafka_error(exc)
    if err is not None and err.code() in _REFUSED_BY_THE_CLIENT:
        return PublishRejectedError(f"Kafka's client refused the record for topic {topic}: {err.str()}")
    return KafkaUnavailableError(f"could not queue the record for topic {topic}: {exc}")


def _kafka_error(exc: BaseException) -> KafkaError | None:
    err = exc.args[0] if isinstance(exc, KafkaException) and exc.args else None
    return err if isinstance(err, KafkaError) else None


@dataclass(frozen=True)
class Delivery:
    """The broker's acknowledgement of one record."""

    topic: str
    partition: int
    offset: int
    latency_s: float


class RulesProducer:
    """Sends keyed records to one topic and blocks until each is acknowledged or has failed.

    Thread-safe: kopf runs sync handlers in a thread pool, and they share this publisher.
    """

    def __init__(self, settings: KafkaSettings, topic: str, timeout_s: float) -> None:
        self.topic = topic
        self.timeout_s = timeout_s
        self._settings = settings
        self._lock = threading.Lock()
        self._producer = self._new_producer()

    def _new_producer(self) -> Producer:
        extra: dict[str, ConfigValue] = {
            **RELIABLE_PRODUCER,
            "linger.ms": 0,
            "message.timeout.ms": max(1000, int(self.timeout_s * 1000)),
            "client.id": "fraudstream-operator",
        }
        return Producer(self._settings.client_config(**extra))

    def send(self, key: str, value: bytes | None) -> Delivery:
        """Produces (key, value), value None being a tombstone; returns once the broker acknowledged it.

        Raises DeliveryUnknownError when the record was sent and no broker acknowledged it in time,
        KafkaUnavailableError when it could not be sent, PublishRejectedError when a broker or the client refused it.
        """
        done = threading.Event()
        outcome: list[tuple[KafkaError | None, Message]] = []

        def on_delivery(err: KafkaError | None, msg: Message) -> None:
            outcome.append((err, msg))
            done.set()

        started = time.monotonic()
        with self._lock:
            producer = self._producer
        try:
            producer.produce(self.topic, key=key.encode(), value=value, on_delivery=on_delivery)
        except (BufferError, KafkaException) as exc:
            err = _kafka_error(exc)
            if err is not None:
                self._replace_if_fatal(producer, err)
            raise queue_error(exc, self.topic) from exc
        # librdkafka reports a timeout itself after message.timeout.ms; the extra margin only guards against a hang.
        deadline = started + self.timeout_s + 10
        while not done.is_set() and time.monotonic() < deadline:
            producer.poll(0.05)
        if not outcome:
            raise DeliveryUnknownError(f"no delivery report from topic {self.topic} within {self.timeout_s:.0f}s")
        err, msg = outcome[0]
        if err is not None:
            self._replace_if_fatal(producer, err)
            raise delivery_error(err, self.topic)
        return Delivery(
            topic=str(msg.topic()),
            partition=int(msg.partition() or 0),
            offset=int(msg.offset() or 0),
            latency_s=time.monotonic() - started,
        )

    def _replace_if_fatal(self, producer: Producer, err: KafkaError) -> None:
        """A fatal error (e.g. the idempotence state could not be recovered) leaves the producer unusable."""
        if not _fatal(err):
            return
        with self._lock:
            if self._producer is producer:
                self._producer = self._new_producer()

    def close(self) -> None:
        with self._lock:
            self._producer.flush(self.timeout_s)
            self._producer.close()
