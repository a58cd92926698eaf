"""How a group's window is kept in a key-value state store without rewriting it on every update.

A small group (at most INLINE_MAX_EVENTS live events, the vast majority of groups) is stored in one value: its
head and its events inline, rewritten whole at each flush, which is one state write. A larger group is
stored as its head plus immutable event segments. Each flush writes one new segment
with the events inserted since the previous flush (the window's journal) and a new head; once the segments
written since the last rewrite hold as many events as the base segment, all live events are rewritten as a
new base and the old segments are deleted. Every event is thus written an amortized O(1) times, and a
flush costs O(new events), not O(window). Segments wholly below the eviction floor are deleted at once.

Contracts:
- `restore(head, segments)` rebuilds exactly the live window that was flushed: the same events (those at
  or above the floor) in the same order (event time, then insertion order), the same maxima and floor. A floor
  that went down after evicting since the previous flush forces a rewrite, so no evicted event comes back.
- The head names its segments oldest first; segment payloads are `event_codec` payloads.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .aggregates import StoredEvent
from .event_codec import decode_events, encode_events, plain_dumps, plain_loads
from .exceptions import CorruptStateError
from .windows import GroupWindow, WindowChanges

__all__ = ["FlushPlan", "GroupHead", "SegmentRef", "decode_events", "encode_events", "plan_flush", "restore"]

_FORMAT: Final = 3
_FIELDS_OF_FORMAT: Final = {1: 6, 2: 7, 3: 8}
INLINE_MAX_EVENTS: Final = 64


@dataclass(frozen=True)
class SegmentRef:
    seq: int
    count: int
    max_event_time_ms: int


@dataclass(frozen=True)
class GroupHead:
    """What a group's stored form is made of; `segments[0]` is the base, the rest are deltas."""

    field_names: tuple[str, ...]
    max_event_time_ms: int | None
    floor_ms: int | None
    segments: tuple[SegmentRef, ...]
    next_seq: int
    max_ingest_ts_ms: int | None = None
    buckets: bytes = b""
    """The window's bucketed rules' buckets (`GroupWindow.bucket_states`) as plain pickled data, b"" if none."""

    def to_bytes(self) -> bytes:
        return json.dumps(
            [_FORMAT, list(self.field_names), self.max_event_time_ms, self.floor_ms,
             [[s.seq, s.count, s.max_event_time_ms] for s in self.segments], self.next_seq, self.max_ingest_ts_ms,
             base64.b64encode(self.buckets).decode()],
            separators=(",", ":"),
        ).encode()  # fmt: skip

    @staticmethod
    def from_bytes(data: bytes) -> GroupHead:
        try:
            version, names, max_ms, floor_ms, segments, next_seq, *rest = json.loads(data)
            if _FIELDS_OF_FORMAT.get(version) != 6 + len(rest):
                raise CorruptStateError(f"unknown group head format {version!r}")
            refs = tuple(SegmentRef(int(s), int(c), int(m)) for s, c, m in segments)
            max_ingest = None if not rest or rest[0] is None else int(rest[0])
            buckets = base64.b64decode(rest[1]) if len(rest) > 1 else b""
            return GroupHead(tuple(names), max_ms, floor_ms, refs, int(next_seq), max_ingest, buckets)
        except CorruptStateError:
            raise
        except Exception as exc:
            raise CorruptStateError(f"unreadable group head: {exc}") from exc


@dataclass(frozen=True)
class FlushPlan:
    """State-store operations that bring a group's stored form in line with its window: write `head` with
    `inline` (the events of a small group, else empty) as one value, put and delete segments."""

    head: GroupHead
    inline: bytes
    puts: tuple[tuple[int, bytes], ...]
    deletes: tuple[int, ...]


def plan_flush(
    head: GroupHead | None,
    window: GroupWindow,
    changes: WindowChanges,
    inline_max_events: int = INLINE_MAX_EVENTS,
) -> FlushPlan:
    """The writes for one flush of `window`, whose changes since the last flush are `changes`."""
    journal = changes.inserted
    floor_ms = window.floor_ms
    old = head.segments if head else ()
    next_seq = head.next_seq if head else 0
    max_ingest = window.max_ingest_ts_ms
    states = window.bucket_states()
    buckets = plain_dumps(list(states.items())) if states else b""
    if len(window) <= inline_max_events:
        inline = encode_events(window.field_names, list(window.events()))
        small = GroupHead(window.field_names, window.max_event_time_ms, floor_ms, (), next_seq, max_ingest, buckets)
        return FlushPlan(small, inline, (), tuple(s.seq for s in old))
    live = [s for s in old if floor_ms is None or s.max_event_time_ms >= floor_ms]
    delta_count = sum(s.count for s in live[1:]) + len(journal)
    rewrite = (
        head is None
        or head.field_names != window.field_names
        or not live
        or delta_count >= live[0].count
        or changes.floor_lowered
    )
    if rewrite:
        events = list(window.events())
        segments: tuple[SegmentRef, ...] = ()
        puts: tuple[tuple[int, bytes], ...] = ()
        if events:
            segments = (SegmentRef(next_seq, len(events), max(e.event_time_ms for e in events)),)
            puts = ((next_seq, encode_events(window.field_names, events)),)
        deletes = tuple(s.seq for s in old)
    else:
        dropped = tuple(s.seq for s in old if s not in live)
        segments, puts, deletes = tuple(live), (), dropped
        if journal:
            ref = SegmentRef(next_seq, len(journal), max(e.event_time_ms for e in journal))
            segments += (ref,)
            puts = ((next_seq, encode_events(window.field_names, journal)),)
    new_head = GroupHead(
        window.field_names, window.max_event_time_ms, floor_ms, segments, next_seq + 1, max_ingest, buckets
    )
    return FlushPlan(new_head, b"", puts, deletes)


def restore(head: GroupHead, inline: bytes, segments: Sequence[bytes]) -> GroupWindow:
    """The window that was flushed as `head`, `inline` and the payloads of `head.segments` (in that order)."""
    events: list[StoredEvent] = []
    for data in (inline, *segments) if inline else segments:
        field_names, segment_events = decode_events(data)
        if field_names != head.field_names:
            raise CorruptStateError(f"segment projected on {field_names}, head on {head.field_names}")
        events.extend(segment_events)
    events.sort(key=lambda event: event.event_time_ms)  # stable: insertion order among equal times
    if head.floor_ms is not None:
        events = [event for event in events if event.event_time_ms >= head.floor_ms]
    buckets = {key: list(state) for key, state in plain_loads(head.buckets)} if head.buckets else {}
    return GroupWindow.restore(
        head.field_names, events, head.max_event_time_ms, head.floor_ms, head.max_ingest_ts_ms, buckets
    )
