"""The driver side of each micro-batch: publish alerts and DLQ records, then record metrics.

Records go out through one idempotent producer (acks=all) and the batch completes only when every record is
acknowledged, so a batch whose output did not land fails and is replayed from the checkpoint (at-least-once;
a replayed alert keeps its alertId). Alert latency is measured at the broker's acknowledgement.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from confluent_kafka import KafkaError, Message, Producer

from fraudstream_kafka.settings import ConfigValue, KafkaSettings, Topics

from . import metrics
from .records import OutputKind


class DeliveryError(RuntimeError):
    """Some output of a micro-batch was not acknowledged by Kafka; the batch must be retried."""


class BatchSink:
    def __init__(self, kafka: KafkaSettings, topics: Topics, flush_timeout_s: float = 60.0) -> None:
        reliable: dict[str, ConfigValue] = {"enable.idempotence": True, "acks": "all", "linger.ms": 0}
        self._producer = Producer(kafka.client_config(**reliable))
        self._topics = topics
        self._flush_timeout_s = flush_timeout_s

    def write_batch(self, batch: Any, batch_id: int) -> None:
        """foreachBatch entry point: `batch` is the micro-batch's output DataFrame."""
        self.publish(batch.collect())

    def publish(self, rows: Iterable[Any]) -> None:
        errors: list[str] = []
        alert_ts: list[tuple[str, int]] = []

        def delivered(err: KafkaError | None, msg: Message) -> None:
            if err is not None:
                errors.append(str(err))

        evaluated = invalid = late = 0
        active_rules: int | None = None
        for row in rows:
            kind = OutputKind(row.kind)
            if kind is OutputKind.ALERT:
                self._producer.produce(self._topics.alerts, key=row.key, value=row.value, on_delivery=delivered)
                alert_ts.append((row.rule_id, row.transaction_ts_ms))
            elif kind is OutputKind.DLQ:
                headers = [
                    ("error", row.error.encode()),
                    ("source.topic", row.source_topic.encode()),
                    ("source.partition", str(row.source_partition).encode()),
                    ("source.offset", str(row.source_offset).encode()),
                ]
                self._producer.produce(
                    self._topics.dlq, key=row.key, value=row.value, headers=headers, on_delivery=delivered
                )
                metrics.DLQ_RECORDS.labels(error=row.error.split(":")[0]).inc()
            else:
                evaluated, invalid, late = evaluated + row.evaluated, invalid + row.invalid, late + row.late
                active_rules = row.active_rules
            self._producer.poll(0)
        remaining = self._producer.flush(self._flush_timeout_s)
        if remaining or errors:
            raise DeliveryError(f"{remaining} records unacknowledged, errors: {errors[:5]}")
        acked_ms = time.time() * 1000
        for rule_id, ts_ms in alert_ts:
            metrics.ALERT_LATENCY.observe(max(0.0, (acked_ms - ts_ms) / 1000))
            metrics.ALERTS.labels(rule_id=rule_id).inc()
        metrics.TRANSACTIONS.labels(outcome="evaluated").inc(evaluated)
        metrics.TRANSACTIONS.labels(outcome="invalid").inc(invalid)
        metrics.TRANSACTIONS.labels(outcome="late").inc(late)
        if active_rules is not None:
            metrics.ACTIVE_RULES.set(active_rules)
