"""Incremental storage of group windows: what is flushed restores exactly, at amortized O(1) writes per event."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from fraudstream_rules.aggregates import MISSING, AggregatorKind, StoredEvent, WindowSpec
from fraudstream_rules.persistence import GroupHead, decode_events, encode_events, plan_flush, restore
from fraudstream_rules.windows import GroupWindow

FIELDS = ("paymentAmount", "paymentType")


def event(time_ms: int, seq: int, amount: object = Decimal("1.5")) -> StoredEvent:
    return StoredEvent(time_ms, 1_000 + seq, 0, seq, 1, (amount, "CRD" if seq % 2 else MISSING))


class FakeStore:
    """The state store as the shell sees it: a head and numbered segments, with write counting."""

    def __init__(self, inline_max_events: int = 64) -> None:
        self.inline_max_events = inline_max_events
        self.head: GroupHead | None = None
        self.inline = b""
        self.segments: dict[int, bytes] = {}
        self.events_written = 0

    def flush(self, window: GroupWindow) -> None:
        plan = plan_flush(self.head, window, window.take_changes(), self.inline_max_events)
        for seq in plan.deletes:
            del self.segments[seq]
        for seq, payload in plan.puts:
            self.segments[seq] = payload
            self.events_written += len(decode_events(payload)[1])
        if plan.inline:
            self.events_written += len(decode_events(plan.inline)[1])
        self.head, self.inline = plan.head, plan.inline

    def restore(self) -> GroupWindow:
        assert self.head is not None
        return restore(self.head, self.inline, [self.segments[s.seq] for s in self.head.segments])


def test_encode_decode_round_trip_keeps_missing_distinct_from_null() -> None:
    events = [event(5, 1), event(6, 2, None), event(7, 3, Decimal("0.10"))]
    assert decode_events(encode_events(FIELDS, events)) == (FIELDS, events)


# (clock step, floor move): 0 keeps the floor, 1 sets it tight behind the newest event, 2 wide (it may go down).
batches = st.lists(
    st.lists(st.tuples(st.integers(0, 30), st.sampled_from([0, 0, 1, 2])), min_size=0, max_size=8),
    min_size=1,
    max_size=25,
)


@settings(max_examples=50, deadline=None)
@given(batches=batches, reload_every=st.integers(1, 4), inline_max=st.sampled_from([0, 4, 64]))
def test_flushed_windows_restore_exactly(
    batches: list[list[tuple[int, int]]], reload_every: int, inline_max: int
) -> None:
    """Disorder within the horizon, floors rising and falling, reloads at random points: nothing drifts, and no
    event evicted by a higher floor comes back when the floor goes down."""
    lateness_ms = 10
    window = GroupWindow(FIELDS)
    store = FakeStore(inline_max)
    seq = 0
    clock = 0
    for n, batch in enumerate(batches):
        for step, floor_move in batch:
            clock += step
            seq += 1
            max_ms = window.max_event_time_ms or 0
            time_ms = max(clock - (seq % 7), max_ms - lateness_ms)  # some disorder, never late
            window.insert(event(time_ms, seq))
            if floor_move:
                window.set_floor((window.max_event_time_ms or 0) - lateness_ms - (5 if floor_move == 1 else 60))
        store.flush(window)
        restored = store.restore()
        assert list(restored.events()) == list(window.events())
        assert (restored.max_event_time_ms, restored.floor_ms) == (window.max_event_time_ms, window.floor_ms)
        assert restored.max_ingest_ts_ms == window.max_ingest_ts_ms
        if n % reload_every == 0:
            window = restored


def test_each_event_is_written_an_amortized_constant_number_of_times() -> None:
    window = GroupWindow(FIELDS)
    store = FakeStore(inline_max_events=64)
    inserted = 0
    for batch in range(2_000):
        for i in range(3):
            inserted += 1
            window.insert(event(batch * 10 + i, inserted))
        store.flush(window)
    assert store.events_written <= 4 * inserted + 64 * 64  # + rewrites while the group is small (inline)
    assert store.head is not None and len(store.head.segments) <= 2 + inserted // 3
    assert not store.inline, "a large group keeps its events in segments"


def test_a_small_group_is_one_inline_value() -> None:
    window = GroupWindow(FIELDS)
    store = FakeStore(inline_max_events=64)
    for i in range(10):
        window.insert(event(i, i))
        store.flush(window)
    assert store.head is not None and store.head.segments == () and store.segments == {}
    assert decode_events(store.inline)[1] == list(window.events())


def test_segments_wholly_below_the_floor_are_deleted() -> None:
    window = GroupWindow(FIELDS)
    store = FakeStore(inline_max_events=4)
    for i in range(1, 200):
        window.insert(event(i * 100, i))
        window.set_floor(i * 100 - 1_000)
        store.flush(window)
    assert store.head is not None
    assert all(ref.max_event_time_ms >= 200 * 100 - 2_000 for ref in store.head.segments)
    assert len(store.segments) == len(store.head.segments)


def test_a_bucketed_rules_buckets_are_flushed_and_restored_with_the_head() -> None:
    spec = WindowSpec(("u", 1, 0, "buckets", 1_000), AggregatorKind.SUM_COUNT, 10_000, 0, _amount, 1_000)
    window = GroupWindow(FIELDS)
    window.prepare(FIELDS, {"r": spec})
    store = FakeStore(inline_max_events=4)
    for seq in range(1, 12):
        window.insert(event(seq * 500, seq))
        store.flush(window)
    restored = store.restore()
    restored.prepare(FIELDS, {"r": spec})
    assert restored.bucket_states() == window.bucket_states()
    assert restored.aggregate("r", 5_500).count == window.aggregate("r", 5_500).count == 11


def _amount(stored: StoredEvent) -> Decimal | None:
    value = stored.values[0]
    return value if isinstance(value, Decimal) else None
