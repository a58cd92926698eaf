"""What flows through the detector's stateful step: input records in, output records out. No Spark here.

Every state partition ("bucket") receives every rule message and every transaction; it evaluates only the key
groups it owns (`bucket_of`). Rule messages are thus broadcast to all state, and because they travel in the same
stream as the transactions, ordered by Kafka timestamp, a rule change applies at a deterministic point that a
replay after a crash reproduces exactly.
"""

from __future__ import annotations

import json
import logging
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from fraudstream_rules.dead_letters import DeadLetterError, bounded
from fraudstream_rules.engine import Engine, GroupStore
from fraudstream_rules.exceptions import RejectedRuleMessageError
from fraudstream_rules.model import parse_rule_message

log = logging.getLogger(__name__)


class RecordKind(StrEnum):
    TRANSACTION = "tx"
    RULE = "rule"


class OutputKind(StrEnum):
    ALERT = "alert"
    DLQ = "dlq"
    LATE = "late"
    """The transaction was late for a group of this bucket; the sink writes one DLQ record per transaction."""
    OUT_OF_ORDER = "ooo"
    """The transaction was evaluated out of order in a group of this bucket; the sink counts it once."""
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
    """An alert, a DLQ record, a per-transaction part (LATE, OUT_OF_ORDER), or one bucket's observations for the
    batch (kind STATS: `observations` is a JSON document in the form metrics.record takes)."""

    kind: OutputKind
    key: bytes | None = None
    value: bytes | None = None
    error: str | None = None
    detail: str | None = None
    source_topic: str | None = None
    source_partition: int | None = None
    source_offset: int | None = None
    transaction_ts_ms: int | None = None
    rule_id: str | None = None
    observations: str | None = None


def bucket_of(group_key: str, buckets: int) -> int:
    """The state partition that owns a key group's values; stable across processes and restarts."""
    return zlib.crc32(group_key.encode()) % buckets


def _about(kind: OutputKind, record: InputRecord, error: str | None = None, detail: str | None = None) -> OutputRecord:
    carries_record = kind is not OutputKind.OUT_OF_ORDER
    return OutputRecord(
        kind,
        key=record.key if carries_record else None,
        value=record.value if carries_record else None,
        error=error,
        detail=detail,
        source_topic=record.topic,
        source_partition=record.partition,
        source_offset=record.offset,
        transaction_ts_ms=record.timestamp_ms,
    )


def process_records(
    detector: Engine,
    records: Iterable[InputRecord],
    store: GroupStore,
    bucket: int,
    buckets: int,
    now_ms: int,
) -> Iterator[OutputRecord]:
    """Folds one bucket's records of a micro-batch into `detector` and `store`, in contract order.

    What concerns the whole transaction (evaluated, rejected with its DLQ record, a refused rule message) is
    reported by bucket 0 only, so that each is counted and dead-lettered once; a late verdict or an out-of-order
    evaluation is emitted as a part by each bucket that observed it, and the sink reports it once per transaction.
    Ends with one STATS record for the bucket.
    """
    outcomes: Counter[str] = Counter()
    applied: Counter[str] = Counter()
    skipped: Counter[tuple[str, str]] = Counter()
    rejected_rules: Counter[str] = Counter()
    positions: dict[int, int] = {}
    newest_ts_ms = -1
    reporter = bucket == 0

    def owns(group_key: str) -> bool:
        return bucket_of(group_key, buckets) == bucket

    for record in sorted(records, key=lambda r: r.order_key):
        if record.kind is RecordKind.RULE:
            rule_id = (record.key or b"").decode("utf-8", "replace")
            try:
                detector.on_rule(rule_id, parse_rule_message(record.value), record.timestamp_ms)
            except RejectedRuleMessageError as exc:
                if reporter:
                    rejected_rules[exc.reason] += 1
                    where = f"{record.topic}:{record.partition}:{record.offset}"
                    log.warning(
                        "rules-topic record with key %s at %s not applied (%s): %s",
                        bounded(rule_id, 256), where, exc.reason, bounded(str(exc)),
                    )  # fmt: skip
            continue
        outcome = detector.on_record(
            record.value, record.timestamp_ms, record.partition, record.offset, store, now_ms, owns
        )
        if outcome.rejection is not None:
            if reporter:
                outcomes["future" if outcome.rejection.error is DeadLetterError.FUTURE else "invalid"] += 1
                yield _about(OutputKind.DLQ, record, outcome.rejection.error.value, outcome.rejection.detail)
            continue
        if reporter:
            outcomes["evaluated"] += 1
            positions[record.partition] = max(record.offset, positions.get(record.partition, record.offset))
            newest_ts_ms = max(newest_ts_ms, record.timestamp_ms)
        if outcome.late:
            yield _about(OutputKind.LATE, record, DeadLetterError.LATE.value, outcome.late[0].detail())
        if outcome.out_of_order:
            yield _about(OutputKind.OUT_OF_ORDER, record)
        applied.update(outcome.applied)
        skipped.update((skip.rule_id, skip.reason.value) for skip in outcome.skipped)
        for alert in outcome.alerts:
            yield OutputRecord(
                OutputKind.ALERT,
                key=alert.rule_id.encode(),
                value=alert.to_message_value(),
                rule_id=alert.rule_id,
                transaction_ts_ms=record.timestamp_ms,
                source_topic=record.topic,
                source_partition=record.partition,
                source_offset=record.offset,
            )
    observations = {
        "transactions": dict(outcomes),
        "applied": dict(applied),
        "skipped": [[rule_id, reason, count] for (rule_id, reason), count in skipped.items()],
        "ruleMessagesRejected": dict(rejected_rules),
        "activeRules": detector.active_rule_count if reporter else -1,
        "positions": positions,
        "newestEvaluatedTsMs": newest_ts_ms,
    }
    yield OutputRecord(OutputKind.STATS, observations=json.dumps(observations))
