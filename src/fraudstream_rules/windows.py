"""The state of one group (a key group plus grouping values): its events and its rules' aggregators.

Contracts:
- Events are sorted by event time, ties in insertion (= processing) order, and addressed by absolute
  indices that eviction and compaction never change (see aggregates.EventLog).
- `max_event_time_ms` is the largest event time ever stored and `max_ingest_ts_ms` the largest ingestion
  timestamp; after `set_floor` every stored event has `event_time_ms >= floor_ms`. The caller sets the floor after
  each insertion (the insertion may land below it: such an event is evaluated, then evicted by that `set_floor`); a
  floor that moves down (the horizon widened) brings nothing back, it only lets later insertions land lower.
- `field_names` is the projection the events' `values` follow; `prepare` changes it (re-projecting
  every event, absent fields becoming MISSING) and brings the aggregators in line with the rules.
- Exact aggregators are derived state, rebuilt from the events on first use after `from_bytes`; bucketed ones
  (rules with a window precision) are state of their own, kept by their spec key in `to_bytes` and across a change
  of projection, trimmed to their own floor (`set_floor`). `to_bytes` keeps the events, the maxima, the floor and
  the buckets (size proportional to what is held); `from_bytes` also reads the previous formats.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Hashable, Iterator, Mapping
from typing import Final

from .aggregates import (
    MISSING,
    BucketedWindow,
    BucketState,
    StoredEvent,
    WindowAggregate,
    WindowAggregator,
    WindowSpec,
)
from .event_codec import decode_events, encode_events, plain_dumps, plain_loads
from .exceptions import CorruptStateError

_FORMAT: Final = 4
_FORMATS_READ: Final = {2: 4, 3: 5, 4: 6}  # format -> fields in the tuple
_COMPACT_AFTER: Final = 256


class GroupWindow:
    """One group's stored events, event-time horizon and per-rule aggregators (an aggregates.EventLog)."""

    __slots__ = (
        "_aggregators",
        "_base",
        "_events",
        "_field_names",
        "_floor_ms",
        "_head",
        "_max_ingest_ms",
        "_max_ms",
        "_restored_buckets",
        "_times",
    )

    def __init__(self, field_names: tuple[str, ...] = ()) -> None:
        self._field_names = field_names
        self._events: list[StoredEvent] = []
        self._times: list[int] = []
        self._head = 0  # events[:head] are evicted, awaiting compaction
        self._base = 0  # absolute index of events[0]
        self._max_ms: int | None = None
        self._max_ingest_ms: int | None = None
        self._floor_ms: int | None = None
        self._aggregators: dict[str, tuple[WindowSpec, WindowAggregator | BucketedWindow]] = {}
        self._restored_buckets: dict[Hashable, BucketState] = {}

    @classmethod
    def restore(
        cls,
        field_names: tuple[str, ...],
        events: list[StoredEvent],
        max_event_time_ms: int | None,
        floor_ms: int | None,
        max_ingest_ts_ms: int | None = None,
        buckets: Mapping[Hashable, BucketState] | None = None,
    ) -> GroupWindow:
        """A window holding `events` (sorted by event time, all at or above `floor_ms`) and the buckets of bucketed
        rules by spec key (taken up by `prepare`)."""
        window = cls(field_names)
        window._restored_buckets = dict(buckets or {})
        window._events = events
        window._times = [event.event_time_ms for event in events]
        window._max_ms = max_event_time_ms
        window._max_ingest_ms = max_ingest_ts_ms
        window._floor_ms = floor_ms
        return window

    @property
    def field_names(self) -> tuple[str, ...]:
        return self._field_names

    @property
    def max_event_time_ms(self) -> int | None:
        return self._max_ms

    @property
    def max_ingest_ts_ms(self) -> int | None:
        return self._max_ingest_ms

    @property
    def floor_ms(self) -> int | None:
        return self._floor_ms

    def __len__(self) -> int:
        return len(self._events) - self._head

    def events(self) -> Iterator[StoredEvent]:
        """The live events in order."""
        return iter(self._events[self._head :])

    # EventLog
    def end_index(self) -> int:
        return self._base + len(self._events)

    def time_at(self, index: int) -> int:
        return self._times[index - self._base]

    def event_at(self, index: int) -> StoredEvent:
        return self._events[index - self._base]

    def index_at_or_after(self, event_time_ms: int) -> int:
        return self._base + bisect_left(self._times, event_time_ms, self._head)

    def prepare(self, field_names: tuple[str, ...], specs: Mapping[str, WindowSpec]) -> None:
        """Adopt projection `field_names` and keep exactly one up-to-date aggregator per spec: an exact one rebuilt
        from the events when its spec changed, a bucketed one kept (with its buckets) while its key is the same."""
        if field_names != self._field_names:
            positions = {name: position for position, name in enumerate(self._field_names)}
            picks = [positions.get(name) for name in field_names]
            self._events[self._head :] = [
                event._replace(values=tuple(MISSING if pick is None else event.values[pick] for pick in picks))
                for event in self._events[self._head :]
            ]
            self._field_names = field_names
            for slot in [slot for slot, (spec, _) in self._aggregators.items() if spec.precision_ms is None]:
                del self._aggregators[slot]
        for slot in [slot for slot in self._aggregators if slot not in specs]:
            del self._aggregators[slot]
        for slot, spec in specs.items():
            current = self._aggregators.get(slot)
            if spec.precision_ms is not None:
                if current is not None and isinstance(current[1], BucketedWindow) and current[0].key == spec.key:
                    if current[0] is not spec:
                        current[1].rebind(spec)
                        self._aggregators[slot] = (spec, current[1])
                else:
                    buckets = BucketedWindow(spec, self._restored_buckets.pop(spec.key, ()))
                    self._aggregators[slot] = (spec, buckets)
            elif current is None or (current[0] is not spec and current[0] != spec):
                self._aggregators[slot] = (spec, spec.build(self, self._max_ms))
        self._restored_buckets.clear()  # buckets of rules no longer in the plan

    def insert(self, event: StoredEvent) -> None:
        """Store an event (at or above the horizon) and tell every aggregator."""
        event_time_ms = event.event_time_ms
        if self._max_ms is None or event_time_ms >= self._max_ms:
            self._events.append(event)
            self._times.append(event_time_ms)
            position = len(self._events) - 1
            self._max_ms = event_time_ms
        else:
            position = bisect_right(self._times, event_time_ms, self._head)
            self._events.insert(position, event)
            self._times.insert(position, event_time_ms)
        if self._max_ingest_ms is None or event.ingest_ts_ms > self._max_ingest_ms:
            self._max_ingest_ms = event.ingest_ts_ms
        index = self._base + position
        for _, aggregator in self._aggregators.values():
            aggregator.on_insert(self, index)

    def aggregate(self, slot: str, event_time_ms: int) -> WindowAggregate:
        """The aggregate of `slot`'s rule over `[event_time_ms - window_ms, event_time_ms]`."""
        return self._aggregators[slot][1].query(self, event_time_ms)

    def set_floor(self, floor_ms: int) -> None:
        """Set the floor, evicting the events below it; each bucketed rule keeps its buckets from the one holding
        `max_event_time_ms - (its window + lateness)` on."""
        if self._max_ms is not None:
            for spec, aggregator in self._aggregators.values():
                if isinstance(aggregator, BucketedWindow):
                    aggregator.retain(self._max_ms - spec.window_ms - spec.lateness_ms)
        self._floor_ms = floor_ms
        # Also when the floor stays: an event below it may have been inserted since (not late for a bucketed rule).
        head, times = self._head, self._times
        while head < len(times) and times[head] < floor_ms:
            head += 1
        if head > _COMPACT_AFTER and head * 2 > len(times):
            del self._events[:head]
            del self._times[:head]
            self._base += head
            head = 0
        self._head = head

    def bucket_states(self) -> dict[Hashable, BucketState]:
        """The buckets of the bucketed rules, by spec key (plain data)."""
        states = dict(self._restored_buckets)
        for spec, aggregator in self._aggregators.values():
            if isinstance(aggregator, BucketedWindow):
                states[spec.key] = aggregator.state()
        return states

    def to_bytes(self) -> bytes:
        events = encode_events(self._field_names, list(self.events()))
        buckets = list(self.bucket_states().items())
        return plain_dumps((_FORMAT, self._max_ms, self._floor_ms, events, self._max_ingest_ms, buckets))

    @classmethod
    def from_bytes(cls, data: bytes) -> GroupWindow:
        try:
            version, max_ms, floor_ms, payload, *rest = plain_loads(data)
        except CorruptStateError:
            raise
        except Exception as exc:
            raise CorruptStateError(f"unreadable group state: {exc}") from exc
        if _FORMATS_READ.get(version) != 4 + len(rest):
            raise CorruptStateError(f"unknown group state format {version!r}")
        field_names, events = decode_events(payload)
        max_ingest = rest[0] if rest else None
        buckets = {key: list(state) for key, state in rest[1]} if len(rest) > 1 else {}
        return cls.restore(field_names, events, max_ms, floor_ms, max_ingest, buckets)
