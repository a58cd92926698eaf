"""Whether the detector is alive (CONTRACT section 7), and how far behind its input it is.

Contract: the detector is not alive while its query has been down for `timeout_s`, or while transactions have been
waiting on the topic for `timeout_s` without the evaluated positions moving. `Liveness.tick` also keeps
`fraud_input_pending_records` and `fraud_input_lag_seconds` current. Pure apart from the metrics: the caller passes
the topic's end offsets (None while they cannot be read) and the clocks.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from . import metrics


@dataclass
class Progress:
    """What the evaluator reported of its progress (thread-safe): the last offset evaluated per transactions
    partition, and the Kafka timestamp of the newest transaction evaluated."""

    _positions: dict[int, int] = field(default_factory=dict)
    _newest_ts_ms: int | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def update(self, positions: Mapping[str, int] | Mapping[int, int], newest_ts_ms: int | None) -> None:
        with self._lock:
            for partition, offset in positions.items():
                key = int(partition)
                self._positions[key] = max(offset, self._positions.get(key, offset))
            if newest_ts_ms is not None and newest_ts_ms >= 0:
                self._newest_ts_ms = max(newest_ts_ms, self._newest_ts_ms or newest_ts_ms)

    def snapshot(self) -> tuple[dict[int, int], int | None]:
        with self._lock:
            return dict(self._positions), self._newest_ts_ms


@dataclass
class Liveness:
    """The liveness verdict from the query's state, the evaluated positions and the topic's end offsets."""

    progress: Progress
    timeout_s: float
    _down_since_s: float | None = None
    _stalled_since_s: float | None = None
    _last_positions: dict[int, int] = field(default_factory=dict)
    _baseline: dict[int, int] = field(default_factory=dict)
    _reason: str = ""

    def query_state(self, up: bool, now_s: float) -> None:
        """The query is (or is not) running, as of monotonic time `now_s`."""
        metrics.QUERY_UP.set(1 if up else 0)
        if up:
            self._down_since_s = None
        elif self._down_since_s is None:
            self._down_since_s = now_s

    def tick(self, end_offsets: Mapping[int, int] | None, now_s: float, wall_ms: int) -> None:
        """Updates the gauges and the stall clock; `end_offsets` maps partition to the offset the next record gets."""
        positions, newest_ts_ms = self.progress.snapshot()
        metrics.INPUT_LAG.set(float("nan") if newest_ts_ms is None else max(0.0, (wall_ms - newest_ts_ms) / 1000))
        if end_offsets is None:
            metrics.INPUT_PENDING.set(float("nan"))
            return
        pending = 0
        for partition, end in end_offsets.items():
            done = positions.get(partition)
            # Before a partition's first evaluation, what arrives after the detector first looked is waiting.
            start = self._baseline.setdefault(partition, end) if done is None else done + 1
            pending += max(0, end - start)
        metrics.INPUT_PENDING.set(pending)
        if pending == 0 or positions != self._last_positions:
            self._stalled_since_s = None if pending == 0 else now_s
        elif self._stalled_since_s is None:
            self._stalled_since_s = now_s
        self._last_positions = positions

    def alive(self, now_s: float) -> tuple[bool, str]:
        """(alive, why not) as of monotonic time `now_s`."""
        if self._down_since_s is not None and now_s - self._down_since_s >= self.timeout_s:
            return False, f"the streaming query has been down for {now_s - self._down_since_s:.0f} s"
        if self._stalled_since_s is not None and now_s - self._stalled_since_s >= self.timeout_s:
            return False, f"transactions have waited {now_s - self._stalled_since_s:.0f} s with no progress"
        return True, "ok"
