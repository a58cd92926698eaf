"""Test helpers for reading and writing real Kafka topics with deadlines (no fixed sleeps)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable

from confluent_kafka import Consumer, Message, Producer

from fraudstream_kafka.settings import ConfigValue, KafkaSettings


def produce(
    settings: KafkaSettings,
    topic: str,
    records: Iterable[tuple[bytes | str | None, bytes | str | None]],
    timestamp_ms: int | None = None,
) -> None:
    """Produces (key, value) records and waits until every one is acknowledged."""
    reliable: dict[str, ConfigValue] = {"enable.idempotence": True, "acks": "all"}
    producer = Producer(settings.client_config(**reliable))
    errors: list[str] = []

    def on_delivery(err: object, _msg: Message) -> None:
        if err is not None:
            errors.append(str(err))

    for key, value in records:
        producer.produce(topic, key=key, value=value, on_delivery=on_delivery, timestamp=timestamp_ms or 0)
    remaining = producer.flush(30)
    assert remaining == 0 and not errors, f"undelivered: {remaining}, errors: {errors}"


def consume_until(
    settings: KafkaSettings,
    topic: str,
    done: Callable[[list[Message]], bool],
    timeout_s: float = 60,
    from_beginning: bool = True,
) -> list[Message]:
    """Reads `topic` with a fresh group until `done(messages)` holds; fails with what was read at the deadline."""
    consumer = Consumer(
        settings.client_config(
            **{
                "group.id": f"test-{uuid.uuid4().hex}",
                "auto.offset.reset": "earliest" if from_beginning else "latest",
                "enable.auto.commit": False,
            }
        )
    )
    consumer.subscribe([topic])
    messages: list[Message] = []
    deadline = time.monotonic() + timeout_s
    try:
        while not done(messages):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout_s}s on {topic}; read {len(messages)} messages")
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                messages.append(msg)
        return messages
    finally:
        consumer.close()


def alert_ids(messages: Iterable[Message]) -> list[str]:
    """The `alertId` of each alert message, in the order read."""
    return [json.loads(m.value())["alertId"] for m in messages]  # type: ignore[arg-type]
