"""Incremental sliding-window aggregates of one rule over one group's events.

A group keeps its events in an `EventLog`: sorted by event time (ties in processing order),
addressed by stable absolute indices, appended at the end for in-order events and inserted before
the end for out-of-order ones (never before the group's horizon), evicted only from the front. Each
ACTIVE rule gets an aggregator that follows the log's *frontier window* `[M - window_ms, M]`, M being
the log's largest event time.

Costs, per event inserted into the log, for one rule:
- in order (event time >= M): amortized O(1). SUM/COUNT/AVG keep an exact running sum and count;
  MIN/MAX keep two monotonic deques, one over the *settled* part `[M - window_ms, M - lateness_ms)`
  and one over the *tail* `[M - lateness_ms, M]`, where most out-of-order insertions land.
- out of order within the lateness (M - lateness_ms <= t < M): O(events between t and M), both for
  the insertion and for the query `[t - window_ms, t]` of that event, which is answered from the
  frontier state corrected by scanning only the part of the log that differs from it.
- older than that but within the horizon (CONTRACT section 6 allows the whole widest window): SUM,
  COUNT and AVG as above, O(events between t and M); MIN/MAX insert into the settled deque in
  O(its length) and answer the query by scanning `[t - window_ms, t]`, O(events in the window).

The JVM twins (the evaluator's SumCountWindow and ExtremeWindow) answer a query behind the newest from
per-time-slice summaries (TimeSlices) once it would read more than 512 events, so that what it reads stays
bounded within the rule's window and twice the lateness when partitions are read seconds or minutes apart;
the results are the same.

Membership is the rule's business: `value_of(event)` returns the value the event contributes, or
None when the event does not count for the rule. It must be a pure function of the event.
Sums are exact (`decimals.EXACT`); an average is compared with its limit exactly, as
`sum <op> limit * count`, and only reported rounded to 34 digits; an empty window has COUNT 0 and
SUM 0, while AVG, MIN and MAX are undefined and hold no limit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum
from typing import Final, NamedTuple, Protocol

from .decimals import EXACT, QUOTIENT, ZERO
from .model import AggregatorFunction, LimitOperator


class Missing(Enum):
    """Marks a projected field the transaction did not have (distinct from JSON null)."""

    MISSING = "MISSING"


MISSING: Final = Missing.MISSING


class StoredEvent(NamedTuple):
    """The copy of a transaction a group keeps (a NamedTuple: compact, cheap to build, plain to serialize).

    `values` are the transaction's values of the group's projected fields, in the group's field order,
    MISSING where absent. `rule_seq` is the detector's rule sequence number when the event was stored.
    """

    event_time_ms: int
    ingest_ts_ms: int
    partition: int
    offset: int
    rule_seq: int
    values: tuple[object, ...]


ValueOf = Callable[[StoredEvent], Decimal | None]


class EventLog(Protocol):
    """Read access to a group's events by absolute index (see the module docstring)."""

    def end_index(self) -> int:
        """One past the absolute index of the last event."""
        ...

    def time_at(self, index: int) -> int: ...

    def event_at(self, index: int) -> StoredEvent: ...

    def index_at_or_after(self, event_time_ms: int) -> int:
        """Absolute index of the first live event with event time >= `event_time_ms` (end_index() if none)."""
        ...


@dataclass(frozen=True, slots=True)
class WindowAggregate:
    """Partial aggregate over a window: exact sum and count of values, and the extreme value (MIN/MAX)."""

    total: Decimal
    count: int
    extreme: Decimal | None


EMPTY: Final = WindowAggregate(ZERO, 0, None)


def include(aggregate: WindowAggregate, value: Decimal, function: AggregatorFunction) -> WindowAggregate:
    """`aggregate` with one more value counted."""
    extreme = aggregate.extreme
    if function is AggregatorFunction.MIN:
        extreme = value if extreme is None or value < extreme else extreme
    elif function is AggregatorFunction.MAX:
        extreme = value if extreme is None or value > extreme else extreme
    return WindowAggregate(EXACT.add(aggregate.total, value), aggregate.count + 1, extreme)


def aggregate_value(function: AggregatorFunction, aggregate: WindowAggregate) -> Decimal | None:
    """The value the rule reports; None when it is undefined (AVG/MIN/MAX of an empty window)."""
    if function is AggregatorFunction.COUNT:
        return Decimal(aggregate.count)
    if function is AggregatorFunction.SUM:
        return aggregate.total
    if function is AggregatorFunction.AVG:
        return None if aggregate.count == 0 else QUOTIENT.divide(aggregate.total, Decimal(aggregate.count))
    return aggregate.extreme


def limit_holds(
    function: AggregatorFunction, aggregate: WindowAggregate, limit_operator: LimitOperator, limit: Decimal
) -> bool:
    """Whether `aggregate <op> limit` holds, exactly (AVG as `sum <op> limit * count`)."""
    if function is AggregatorFunction.AVG:
        if aggregate.count == 0:
            return False
        return limit_operator.holds(aggregate.total, EXACT.multiply(limit, Decimal(aggregate.count)))
    value = aggregate_value(function, aggregate)
    return value is not None and limit_operator.holds(value, limit)


class WindowAggregator(Protocol):
    """A rule's incremental state over one log; built from the log, then told of every insertion."""

    def on_insert(self, log: EventLog, index: int) -> None:
        """The event at `index` was just inserted (indices after it moved up by one)."""
        ...

    def query(self, log: EventLog, event_time_ms: int) -> WindowAggregate:
        """Aggregate of member events in `[event_time_ms - window_ms, event_time_ms]`.

        `event_time_ms` must be the time of the event inserted last, so it is at least M - lateness_ms.
        """
        ...


class SumCountWindow:
    """Exact running sum and count of member values in the frontier window (SUM, COUNT, AVG)."""

    def __init__(self, log: EventLog, max_event_time_ms: int | None, window_ms: int, value_of: ValueOf) -> None:
        self._window_ms = window_ms
        self._value_of = value_of
        self._max_ms = max_event_time_ms
        self._total = ZERO
        self._count = 0
        end = log.end_index()
        self._front = end if max_event_time_ms is None else log.index_at_or_after(max_event_time_ms - window_ms)
        for index in range(self._front, end):
            self._add(log, index, 1)

    def _add(self, log: EventLog, index: int, sign: int) -> None:
        value = self._value_of(log.event_at(index))
        if value is not None:
            self._total = EXACT.add(self._total, value) if sign > 0 else EXACT.subtract(self._total, value)
            self._count += sign

    def on_insert(self, log: EventLog, index: int) -> None:
        event_time_ms = log.time_at(index)
        max_ms = self._max_ms
        if max_ms is None or event_time_ms >= max_ms:
            self._add(log, index, 1)
            self._max_ms = event_time_ms
            low_ms = event_time_ms - self._window_ms
            front = self._front
            while log.time_at(front) < low_ms:
                self._add(log, front, -1)
                front += 1
            self._front = front
        elif index < self._front or (index == self._front and event_time_ms < max_ms - self._window_ms):
            self._front += 1
        else:
            self._add(log, index, 1)

    def query(self, log: EventLog, event_time_ms: int) -> WindowAggregate:
        max_ms = self._max_ms
        assert max_ms is not None, "query before any insertion"
        if event_time_ms >= max_ms:
            return WindowAggregate(self._total, self._count, None)
        # [t - w, t] = frontier [M - w, M] minus members in (t, M] plus members in [t - w, min(M - w, t + 1)).
        total, count = self._total, self._count
        index = log.end_index() - 1
        while index >= self._front and log.time_at(index) > event_time_ms:
            value = self._value_of(log.event_at(index))
            if value is not None:
                total, count = EXACT.subtract(total, value), count - 1
            index -= 1
        index = log.index_at_or_after(event_time_ms - self._window_ms)
        while index < self._front and log.time_at(index) <= event_time_ms:
            value = self._value_of(log.event_at(index))
            if value is not None:
                total, count = EXACT.add(total, value), count + 1
            index += 1
        return WindowAggregate(total, count, None)


class ExtremeWindow:
    """Minimum (or maximum) of member values in the frontier window, by two monotonic deques.

    `_settled` covers `[M - window_ms, M - lateness_ms)`, which only grows at the back; `_tail` covers
    `[max(M - window_ms, M - lateness_ms), M]`, where out-of-order insertions land. Each deque holds
    (event time, value) of the members no later member beats, so its front is its extreme; the settled deque keeps
    only the latest of equal values, the tail the earliest, so that a query for an event a little behind the newest
    finds the tail's front at or before it whenever the extreme's value was reached by then (a repeated extreme, such
    as a round amount, would otherwise move the front past it and make the query scan the lateness).
    """

    def __init__(
        self,
        log: EventLog,
        max_event_time_ms: int | None,
        window_ms: int,
        lateness_ms: int,
        value_of: ValueOf,
        prefer_low: bool,
    ) -> None:
        self._window_ms = window_ms
        self._lateness_ms = lateness_ms
        self._value_of = value_of
        self._prefer_low = prefer_low
        self._max_ms = max_event_time_ms
        self._settled: deque[tuple[int, Decimal]] = deque()
        self._tail: deque[tuple[int, Decimal]] = deque()
        end = log.end_index()
        if max_event_time_ms is None:
            self._settled_end = end
            return
        settled_ms = max_event_time_ms - lateness_ms
        low_ms = max_event_time_ms - window_ms
        self._settled_end = log.index_at_or_after(settled_ms)
        for index in range(log.index_at_or_after(low_ms), self._settled_end):
            self._push(self._settled, log, index)
        for index in range(log.index_at_or_after(max(low_ms, settled_ms)), end):
            self._push(self._tail, log, index)

    def _beats(self, left: Decimal, right: Decimal) -> bool:
        return left < right if self._prefer_low else left > right

    def _displaces(self, candidates: deque[tuple[int, Decimal]], value: Decimal, earlier: Decimal) -> bool:
        """Whether a member of `value` makes an earlier candidate of `earlier` redundant: when it beats it, and in the
        settled deque also when it equals it (the tail keeps the earliest of equal values)."""
        return self._beats(value, earlier) if candidates is self._tail else not self._beats(earlier, value)

    def _push(self, candidates: deque[tuple[int, Decimal]], log: EventLog, index: int) -> None:
        value = self._value_of(log.event_at(index))
        if value is None:
            return
        while candidates and self._displaces(candidates, value, candidates[-1][1]):
            candidates.pop()
        candidates.append((log.time_at(index), value))

    def _insert_between(self, candidates: deque[tuple[int, Decimal]], event_time_ms: int, value: Decimal) -> None:
        """Adds an out-of-order member: a candidate unless the next later candidate displaces it; a candidate drops
        the earlier ones it displaces."""
        later: list[tuple[int, Decimal]] = []
        while candidates and candidates[-1][0] > event_time_ms:
            later.append(candidates.pop())
        if not later or not self._displaces(candidates, later[-1][1], value):
            while candidates and self._displaces(candidates, value, candidates[-1][1]):
                candidates.pop()
            candidates.append((event_time_ms, value))
        candidates.extend(reversed(later))

    def on_insert(self, log: EventLog, index: int) -> None:
        event_time_ms = log.time_at(index)
        max_ms = self._max_ms
        if max_ms is None or event_time_ms >= max_ms:
            self._max_ms = event_time_ms
            settled_ms = event_time_ms - self._lateness_ms
            low_ms = event_time_ms - self._window_ms
            settled_end = self._settled_end
            while log.time_at(settled_end) < settled_ms:
                if log.time_at(settled_end) >= low_ms:
                    self._push(self._settled, log, settled_end)
                settled_end += 1
            self._settled_end = settled_end
            while self._settled and self._settled[0][0] < low_ms:
                self._settled.popleft()
            tail_low_ms = max(low_ms, settled_ms)
            while self._tail and self._tail[0][0] < tail_low_ms:
                self._tail.popleft()
            self._push(self._tail, log, index)
        else:
            settled_ms = max_ms - self._lateness_ms
            if event_time_ms < settled_ms:
                self._settled_end += 1  # the insertion moved the first unsettled event up by one
            if event_time_ms >= max_ms - self._window_ms:
                value = self._value_of(log.event_at(index))
                if value is not None:
                    target = self._tail if event_time_ms >= settled_ms else self._settled
                    self._insert_between(target, event_time_ms, value)

    def _best(self, left: Decimal | None, right: Decimal | None) -> Decimal | None:
        if left is None:
            return right
        if right is None:
            return left
        return right if self._beats(right, left) else left

    def _scan(self, log: EventLog, best: Decimal | None, from_ms: int, stop: Callable[[int], bool]) -> Decimal | None:
        index, end = log.index_at_or_after(from_ms), log.end_index()
        while index < end and not stop(log.time_at(index)):
            best = self._best(best, self._value_of(log.event_at(index)))
            index += 1
        return best

    def query(self, log: EventLog, event_time_ms: int) -> WindowAggregate:
        max_ms = self._max_ms
        assert max_ms is not None, "query before any insertion"
        best = self._settled[0][1] if self._settled else None
        if event_time_ms >= max_ms:
            return WindowAggregate(ZERO, 0, self._best(best, self._tail[0][1] if self._tail else None))
        low_ms = event_time_ms - self._window_ms
        if event_time_ms < max_ms - self._lateness_ms:  # deep in the past: the deques do not cover [t - w, t]
            return WindowAggregate(ZERO, 0, self._scan(log, None, low_ms, lambda time_ms: time_ms > event_time_ms))
        # [t - w, t] = settled deque [M - w, M - L) + scan [t - w, min(M - w, M - L))
        #   + scan [max(t - w, M - L), min(d, t + 1)) + the tail's part [d, t],
        # d = max(M - w, M - L) being where the tail deque starts. The tail's front is the earliest member of [d, M]
        # with its extreme value: when it lies at or before t it is also the extreme of [d, t], so only a tail whose
        # extreme value was first reached after t (rare for small disorder) is scanned; the other scans span at most
        # M - t.
        settled_ms = max_ms - self._lateness_ms
        stop_ms = min(max_ms - self._window_ms, settled_ms)
        tail_start_ms = max(max_ms - self._window_ms, settled_ms)
        best = self._scan(log, best, low_ms, lambda time_ms: time_ms >= stop_ms)
        tail_stop_ms = min(tail_start_ms, event_time_ms + 1)
        best = self._scan(log, best, max(low_ms, settled_ms), lambda time_ms: time_ms >= tail_stop_ms)
        if self._tail and self._tail[0][0] <= event_time_ms:
            return WindowAggregate(ZERO, 0, self._best(best, self._tail[0][1]))
        best = self._scan(log, best, tail_start_ms, lambda time_ms: time_ms > event_time_ms)
        return WindowAggregate(ZERO, 0, best)


@dataclass(slots=True)
class Bucket:
    """What a bucket holds of the member values with event times in it: exact sum and count, minimum, maximum."""

    total: Decimal
    count: int
    low: Decimal
    high: Decimal

    def add(self, value: Decimal) -> None:
        self.total = EXACT.add(self.total, value)
        self.count += 1
        self.low = min(self.low, value)
        self.high = max(self.high, value)


BucketState = list[tuple[int, Decimal, int, Decimal, Decimal]]
"""A BucketedWindow's buckets as plain data: (index, total, count, low, high), by index."""


def _fold(buckets: list[Bucket]) -> Bucket | None:
    if not buckets:
        return None
    folded = Bucket(ZERO, 0, buckets[0].low, buckets[0].high)
    for bucket in buckets:
        folded.total = EXACT.add(folded.total, bucket.total)
        folded.count += bucket.count
        folded.low = min(folded.low, bucket.low)
        folded.high = max(folded.high, bucket.high)
    return folded


class BucketedWindow:
    """One rule's member values pre-aggregated into buckets of `precision_ms` (CONTRACT section 4,
    `windowPrecisionSeconds`): bucket `t // precision_ms` holds every member value with event time t.

    Contract: `query(t)` folds buckets `(t - window_ms) // p` through `t // p`, so the window reaches up to one
    bucket further back than `t - window_ms`, and takes in everything its newest bucket holds, even members with
    event times after t (already seen, in the same bucket). The state is the buckets alone (at most
    `window / precision + 1` of them behind the horizon, `retain`); it is not derived from the group's events, so it
    is persisted with the group (`state`) and survives a change of the group's projection (`rebind`). The fold of all
    but the newest bucket of the last query is cached: an in-order query costs O(1), one whose bucket range moved or
    whose older buckets changed O(buckets).
    """

    def __init__(self, spec: WindowSpec, state: Iterable[tuple[int, Decimal, int, Decimal, Decimal]] = ()) -> None:
        assert spec.precision_ms is not None
        self._precision_ms = spec.precision_ms
        self._spec = spec
        self._buckets: dict[int, Bucket] = {index: Bucket(t, c, lo, hi) for index, t, c, lo, hi in state}
        self._closed: tuple[int, int, Bucket | None] | None = None

    def rebind(self, spec: WindowSpec) -> None:
        """Follow a new spec of the same window (same key): new value projection, window length or aggregate."""
        assert spec.key == self._spec.key
        self._spec = spec

    def on_insert(self, log: EventLog, index: int) -> None:
        value = self._spec.value_of(log.event_at(index))
        if value is None:
            return
        bucket_index = log.time_at(index) // self._precision_ms
        bucket = self._buckets.get(bucket_index)
        if bucket is None:
            self._buckets[bucket_index] = Bucket(value, 1, value, value)
        else:
            bucket.add(value)
        if self._closed is not None and bucket_index < self._closed[1]:
            self._closed = None

    def query(self, log: EventLog, event_time_ms: int) -> WindowAggregate:
        low = (event_time_ms - self._spec.window_ms) // self._precision_ms
        high = event_time_ms // self._precision_ms
        if self._closed is None or self._closed[:2] != (low, high):
            older = [self._buckets[i] for i in sorted(self._buckets) if low <= i < high]
            self._closed = (low, high, _fold(older))
        folded = _fold([part for part in (self._closed[2], self._buckets.get(high)) if part is not None])
        if folded is None:
            return EMPTY
        kind = self._spec.kind
        extreme = folded.low if kind is AggregatorKind.MIN else folded.high if kind is AggregatorKind.MAX else None
        return WindowAggregate(folded.total, folded.count, extreme)

    def retain(self, floor_ms: int) -> None:
        """Drops the buckets wholly before the horizon start `floor_ms`."""
        first = floor_ms // self._precision_ms
        stale = [index for index in self._buckets if index < first]
        for index in stale:
            del self._buckets[index]
        if stale:
            self._closed = None

    def state(self) -> BucketState:
        return [(i, b.total, b.count, b.low, b.high) for i, b in sorted(self._buckets.items())]

    def __len__(self) -> int:
        return len(self._buckets)


class AggregatorKind(Enum):
    """Which incremental structure a rule needs."""

    SUM_COUNT = "SUM_COUNT"
    MIN = "MIN"
    MAX = "MAX"

    @classmethod
    def of(cls, function: AggregatorFunction) -> AggregatorKind:
        if function is AggregatorFunction.MIN:
            return cls.MIN
        if function is AggregatorFunction.MAX:
            return cls.MAX
        return cls.SUM_COUNT


@dataclass(frozen=True)
class WindowSpec:
    """What one rule needs from a group's window. Equal `key`s mean an existing aggregator can be kept; for a
    bucketed rule (`precision_ms` set) the key names its buckets, which are kept whatever else changes."""

    key: Hashable
    kind: AggregatorKind
    window_ms: int
    lateness_ms: int
    value_of: ValueOf = field(compare=False)
    precision_ms: int | None = None

    def build(self, log: EventLog, max_event_time_ms: int | None) -> WindowAggregator:
        """A fresh exact aggregator over the log's current content (bucketed ones are BucketedWindow(spec))."""
        assert self.precision_ms is None, "bucketed windows are not derived from the log"
        if self.kind is AggregatorKind.SUM_COUNT:
            return SumCountWindow(log, max_event_time_ms, self.window_ms, self.value_of)
        return ExtremeWindow(
            log,
            max_event_time_ms,
            self.window_ms,
            self.lateness_ms,
            self.value_of,
            prefer_low=self.kind is AggregatorKind.MIN,
        )
