"""The driver side of each micro-batch (python evaluator): publish alerts and DLQ records, then record metrics.

Records go out through one idempotent producer (acks=all) and the batch completes only when every record is
acknowledged, so a batch whose output did not land fails and is replayed from the checkpoint (at-least-once; a
replayed alert keeps its alertId). A broker outage is waited out (no delivery timeout). An output Kafka refuses for
good (larger than its topic takes) is passed over: counted as unwritable and logged with its transaction's
coordinates. A producer that reported a fatal error is replaced. Per-transaction parts of the buckets become one
report per transaction: one DLQ record for a late transaction, one count for an out-of-order one. Alert latency is
measured at the broker's acknowledgement.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from fraudstream_kafka.settings import ConfigValue, KafkaSettings, Topics

from . import metrics
from .liveness import Progress
from .records import OutputKind

log = logging.getLogger(__name__)
# Errors that concern one record, never the producer: too large, or malformed for the broker.
_UNWRITABLE = {
    KafkaError.MSG_SIZE_TOO_LARGE,
    KafkaError.RECORD_LIST_TOO_LARGE,
    KafkaError.INVALID_RECORD,
}


class DeliveryError(RuntimeError):
    """Some output of a micro-batch was not acknowledged by Kafka; the batch must be retried."""


class BatchSink:
    def __init__(self, kafka: KafkaSettings, topics: Topics, max_request_bytes: int, progress: Progress) -> None:
        reliable: dict[str, ConfigValue] = {
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 0,
            "message.max.bytes": max_request_bytes,
            "message.timeout.ms": 0,  # an outage is waited out, however long
        }
        self._config = kafka.client_config(**reliable)
        self._producer = Producer(self._config)
        self._topics = topics
        self._progress = progress

    def write_batch(self, batch: Any, batch_id: int) -> None:
        """foreachBatch entry point: `batch` is the micro-batch's output DataFrame."""
        self.publish(batch.collect())

    def publish(self, rows: Iterable[Any]) -> None:
        errors: list[KafkaError] = []
        acknowledged: list[tuple[str, int]] = []
        observed: dict[str, Any] = {"transactions": {}, "dlq": {}, "applied": {}, "skipped": [], "outOfOrder": 0}
        late_reported: set[tuple[str, int, int]] = set()
        out_of_order: set[tuple[str, int, int]] = set()

        def count(section: str, key: str, n: int = 1) -> None:
            observed[section][key] = observed[section].get(key, 0) + n

        def delivered(row: Any) -> Any:
            def report(err: KafkaError | None, _msg: Message) -> None:
                if err is None:
                    if OutputKind(row.kind) is OutputKind.ALERT:
                        acknowledged.append((row.rule_id, row.transaction_ts_ms))
                    else:
                        count("dlq", row.error)
                elif err.code() in _UNWRITABLE:
                    self._unwritable(row, err.str())
                    count("dlq", "unwritable")
                else:
                    errors.append(err)

            return report

        for row in rows:
            kind = OutputKind(row.kind)
            coordinates = (row.source_topic, row.source_partition, row.source_offset)
            if kind is OutputKind.STATS:
                self._merge(observed, json.loads(row.observations))
                continue
            if kind is OutputKind.OUT_OF_ORDER:
                out_of_order.add(coordinates)
                continue
            if kind is OutputKind.LATE:
                if coordinates in late_reported:
                    continue
                late_reported.add(coordinates)
                count("transactions", "late")
            if not self._send(row, kind, delivered(row)):
                count("dlq", "unwritable")
                self._unwritable(row)
        observed["outOfOrder"] = len(out_of_order)
        while self._producer.flush(5) > 0:
            log.warning("waiting for Kafka to acknowledge the batch's output (is the broker down?)")
        if errors:
            if any(err.fatal() for err in errors):
                self._producer = Producer(self._config)
            raise DeliveryError(f"outputs not acknowledged: {[err.str() for err in errors[:5]]}")
        acked_ms = time.time() * 1000
        observed["alerts"] = [[rule_id, max(0, acked_ms - ts_ms)] for rule_id, ts_ms in acknowledged]
        metrics.record(observed)
        self._progress.update(observed.get("positions", {}), observed.get("newestEvaluatedTsMs"))

    def _send(self, row: Any, kind: OutputKind, on_delivery: Any) -> bool:
        """Queues one output; False if the producer refused it outright (too large to send)."""
        if kind is OutputKind.ALERT:
            topic, headers = self._topics.alerts, None
        else:
            topic = self._topics.dlq
            headers = [
                ("error", row.error.encode()),
                ("error.detail", row.detail.encode()),
                ("source.topic", row.source_topic.encode()),
                ("source.partition", str(row.source_partition).encode()),
                ("source.offset", str(row.source_offset).encode()),
            ]
        while True:
            try:
                self._producer.produce(topic, key=row.key, value=row.value, headers=headers, on_delivery=on_delivery)
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                self._producer.poll(0.1)
            except KafkaException as exc:
                if exc.args[0].code() not in _UNWRITABLE:
                    raise
                return False
        self._producer.poll(0)
        return True

    @staticmethod
    def _unwritable(row: Any, reason: str = "larger than the producer's message.max.bytes") -> None:
        what = f"alert of rule {row.rule_id}" if row.kind == OutputKind.ALERT else f"DLQ record ({row.error})"
        log.error(
            "passed over an output Kafka refused: the %s for the transaction at %s:%s:%s (%d bytes): %s",
            what, row.source_topic, row.source_partition, row.source_offset, len(row.value or b""), reason,
        )  # fmt: skip

    @staticmethod
    def _merge(into: dict[str, Any], stats: dict[str, Any]) -> None:
        """Adds one bucket's STATS observations to the batch's."""
        for section in ("transactions", "applied", "ruleMessagesRejected"):
            target = into.setdefault(section, {})
            for key, value in stats.get(section, {}).items():
                target[key] = target.get(key, 0) + value
        into["skipped"] = into.get("skipped", []) + stats.get("skipped", [])
        if stats.get("activeRules", -1) >= 0:
            into["activeRules"] = stats["activeRules"]
        positions = into.setdefault("positions", {})
        for partition, offset in stats.get("positions", {}).items():
            positions[partition] = max(offset, positions.get(partition, offset))
        into["newestEvaluatedTsMs"] = max(into.get("newestEvaluatedTsMs", -1), stats.get("newestEvaluatedTsMs", -1))
