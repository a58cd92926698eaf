"""Test helpers for reading and writing real Kafka topics with deadlines (no fixed sleeps)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from confluent_kafka import Consumer, Message, Producer

from fraudstream_kafka.settings import RELIABLE_PRODUCER, ConfigValue, KafkaSettings


def reliable_producer(settings: KafkaSettings, **extra: ConfigValue) -> Producer:
    """An idempotent producer whose sends are acknowledged by every in-sync replica (`extra`: more settings)."""
    return Producer(settings.client_config(**RELIABLE_PRODUCER, **extra))


def produce(
    settings: KafkaSettings,
    topic: str,
    records: Iterable[tuple[bytes | str | None, bytes | str | None]],
    timestamp_ms: int | None = None,
) -> None:
    """Produces (key, value) records and waits until every one is acknowledged."""
    producer = reliable_producer(settings)
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


def value_of(message: Message) -> bytes:
    """The message's value; a message without one (a tombstone) fails the test."""
    value = message.value()
    assert value is not None, f"no value at {message.topic()}[{message.partition()}]@{message.offset()}"
    return value


def text_of(message: Message) -> str:
    """The message's value as UTF-8 text."""
    return value_of(message).decode()


def json_of(message: Message) -> Any:
    """The message's value parsed as JSON."""
    return json.loads(value_of(message))


def key_of(message: Message) -> str:
    """The message's key as UTF-8 text; a message without one fails the test."""
    key = message.key()
    assert key is not None, f"no key at {message.topic()}[{message.partition()}]@{message.offset()}"
    return key.decode()


def headers_of(message: Message) -> dict[str, str]:
    """The message's headers as text (the last value of a repeated header)."""
    raw = message.headers() or []
    pairs = raw.items() if isinstance(raw, dict) else raw
    return {name: value.decode() if isinstance(value, bytes) else value or "" for name, value in pairs}


def alert_ids(messages: Iterable[Message]) -> list[str]:
    """The `alertId` of each alert message, in the order read."""
    return [json_of(m)["alertId"] for m in messages]
