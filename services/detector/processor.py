"""The transformWithState adapter: load the bucket's state, fold the batch's records through the pure core,
save, and yield rows. State layout and caching: see state.py. Per micro-batch a bucket reads its detector
state once, and each key group it touches costs one head and one segment write (plus reads only on a cache
miss): O(1) state calls per key per batch, whatever the number of events.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

from pyspark.sql import Row
from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from fraudstream_rules.persistence import GroupHead

from .records import InputRecord, OutputRecord, RecordKind, process_records
from .state import CachedGroupStore, load_detector, save_detector

OUTPUT_SCHEMA = (
    "kind string, key binary, value binary, error string, detail string, source_topic string, source_partition int, "
    "source_offset long, transaction_ts_ms long, rule_id string, observations string"
)


class RuleEngineProcessor(StatefulProcessor):
    """Evaluates one bucket's transactions against its broadcast rule set; sweeps idle groups on a timer."""

    def __init__(
        self,
        buckets: int,
        lateness_ms: int,
        sweep_interval_ms: int = 600_000,
        future_skew_ms: int = 300_000,
        instance: str | None = None,
    ) -> None:
        """`instance` names the detector (its checkpoint location) and keys the workers' caches; by default a name
        of this processor's own, so two processors never share a cache."""
        self.instance = instance or uuid.uuid4().hex
        self.buckets = buckets
        self.lateness_ms = lateness_ms
        self.future_skew_ms = future_skew_ms
        self.sweep_interval_ms = sweep_interval_ms

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.detector_state = handle.getValueState("detector", "rules binary, generation long")
        self.heads = handle.getMapState("groups", "group string", "head binary, inline binary")
        self.segments = handle.getMapState("segments", "group string, seq long", "events binary")

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: TimerValues) -> Iterator[Row]:
        bucket = int(key[0])
        cache = load_detector(self.instance, bucket, self.detector_state, self.lateness_ms, self.future_skew_ms)
        store = CachedGroupStore(cache, self.heads, self.segments)
        # Rows are tuples in the input schema's order (rule, key, value, topic, partition, offset, timestamp_ms,
        # bucket: pipeline.input_records); unpacking them is much cheaper than Row attribute lookups.
        records = [InputRecord(RecordKind.RULE if row[0] else RecordKind.TRANSACTION, *row[1:7]) for row in rows]
        now_ms = int(time.time() * 1000)
        outputs = list(process_records(cache.detector, records, store, bucket, self.buckets, now_ms))
        store.flush()
        save_detector(cache, self.detector_state)
        if not any(True for _ in self.handle.listTimers()):
            self.handle.registerTimer(timerValues.getCurrentProcessingTimeInMs() + self.sweep_interval_ms)
        for out in outputs:
            yield _row(out)

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[Row]:
        """Drops the groups that no transaction touched while they aged past their retention (state shrinks)."""
        cache = load_detector(self.instance, int(key[0]), self.detector_state, self.lateness_ms, self.future_skew_ms)
        store = CachedGroupStore(cache, self.heads, self.segments)
        expired = [
            group_key
            for (group_key,), (head, _) in self.heads.iterator()
            if cache.detector.group_expired(group_key, GroupHead.from_bytes(head).max_event_time_ms)
        ]
        for group_key in expired:
            store.delete(group_key)
        store.flush()
        save_detector(cache, self.detector_state)
        self.handle.registerTimer(timerValues.getCurrentProcessingTimeInMs() + self.sweep_interval_ms)
        yield from ()

    def close(self) -> None:
        pass


def _row(out: OutputRecord) -> Row:
    return Row(
        kind=out.kind.value,
        key=out.key,
        value=out.value,
        error=out.error,
        detail=out.detail,
        source_topic=out.source_topic,
        source_partition=out.source_partition,
        source_offset=out.source_offset,
        transaction_ts_ms=out.transaction_ts_ms,
        rule_id=out.rule_id,
        observations=out.observations,
    )
