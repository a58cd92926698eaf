"""What flows through the detector's stateful step: input records in, output records out. No Spark here.

Every state partition ("bucket") receives every rule message and every transaction; it evaluates only the key
groups it owns (`bucket_of`). Rule messages are thus broadcast to all state, and because they travel in the same
stream as the transactions, ordered by Kafka timestamp, a rule change applies at a deterministic point that a
replay after a crash reproduces exactly.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from fraudstream_rules.engine import Detector, GroupStore
from fraudstream_rules.exceptions import InvalidRuleError, InvalidTransactionError
from fraudstream_rules.model import parse_rule_message
from fraudstream_rules.transactions import parse_transaction


class RecordKind(StrEnum):
    TRANSACTION = "tx"
    RULE = "rule"


class OutputKind(StrEnum):
    ALERT = "alert"
    DLQ = "dlq"
    STATS = "stats"


@dataclass(frozen=True)
class InputRecord:
    """One Kafka record from the transactions or rules topic."""

    kind: RecordKind
    key: bytes | None
    value: bytes | None
    topic: str
    partition: int
    offset: int
    timestamp_ms: int

    @property
    def order_key(self) -> tuple[int, int, str, int, int]:
        """Kafka timestamp first; at equal timestamps rules before transactions, then partition and offset."""
        return (self.timestamp_ms, 0 if self.kind is RecordKind.RULE else 1, self.topic, self.partition, self.offset)


@dataclass(frozen=True)
class OutputRecord:
    """An alert, a DLQ record, or one bucket's counters for the batch (kind STATS)."""

    kind: OutputKind
    key: bytes | None = None
    value: bytes | None = None
    error: str | None = None
    source_topic: str | None = None
    source_partition: int | None = None
    source_offset: int | None = None
    transaction_ts_ms: int | None = None
    rule_id: str | None = None
    evaluated: int = 0
    invalid: int = 0
    late: int = 0
    active_rules: int = 0


def bucket_of(group_key: str, buckets: int) -> int:
    """The state partition that owns a key group's values; stable across processes and restarts."""
    return zlib.crc32(group_key.encode()) % buckets


def _dlq(record: InputRecord, error: str) -> OutputRecord:
    return OutputRecord(
        OutputKind.DLQ,
        key=record.key,
        value=record.value,
        error=error,
        source_topic=record.topic,
        source_partition=record.partition,
        source_offset=record.offset,
        transaction_ts_ms=record.timestamp_ms,
    )


def process_records(
    detector: Detector,
    records: Iterable[InputRecord],
    store: GroupStore,
    bucket: int,
    buckets: int,
    now_ms: int,
) -> Iterator[OutputRecord]:
    """Folds one bucket's records of a micro-batch into `detector` and `store`, in contract order.

    Outcomes that concern the whole transaction (evaluated, invalid) are reported by bucket 0 only, so that each
    transaction is counted and dead-lettered once; a late verdict is per key group and reported by its owner.
    Ends with one STATS record for the bucket.
    """
    evaluated = invalid = late = 0
    reporter = bucket == 0

    def owns(group_key: str) -> bool:
        return bucket_of(group_key, buckets) == bucket

    for record in sorted(records, key=lambda r: r.order_key):
        if record.kind is RecordKind.RULE:
            rule_id = (record.key or b"").decode("utf-8", "replace")
            # The operator publishes only validated rules; a foreign message changes nothing.
            with contextlib.suppress(InvalidRuleError):
                detector.on_rule(rule_id, parse_rule_message(record.value), record.timestamp_ms)
            continue
        try:
            tx = parse_transaction(record.value, record.timestamp_ms, record.partition, record.offset)
        except InvalidTransactionError as exc:
            if reporter:
                invalid += 1
                yield _dlq(record, exc.reason)
            continue
        outcome = detector.on_transaction(tx, store, now_ms, owns)
        if outcome.invalid_reason is not None:
            if reporter:
                invalid += 1
                yield _dlq(record, outcome.invalid_reason)
            continue
        for _group in outcome.late_groups:
            late += 1
            yield _dlq(record, "late")
        if reporter:
            evaluated += 1
        for alert in outcome.alerts:
            yield OutputRecord(
                OutputKind.ALERT,
                key=alert.rule_id.encode(),
                value=alert.to_message_value(),
                rule_id=alert.rule_id,
                transaction_ts_ms=tx.ingest_ts_ms,
            )
    yield OutputRecord(
        OutputKind.STATS, evaluated=evaluated, invalid=invalid, late=late, active_rules=detector.active_rule_count
    )
