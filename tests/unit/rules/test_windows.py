"""A group's stored events: ordering, eviction, re-projection and the byte form."""

from __future__ import annotations

import pickle
from decimal import Decimal

import pytest

from fraudstream_rules.aggregates import MISSING, AggregatorKind, StoredEvent, WindowSpec
from fraudstream_rules.exceptions import CorruptStateError
from fraudstream_rules.windows import GroupWindow

D = Decimal


def event(time_ms: int, *values: object, seq: int = 0) -> StoredEvent:
    return StoredEvent(time_ms, ingest_ts_ms=1_000 + seq, partition=seq % 3, offset=seq, rule_seq=seq, values=values)


def filled(times: list[int]) -> GroupWindow:
    window = GroupWindow(("a", "b"))
    for seq, time_ms in enumerate(times):
        window.insert(event(time_ms, D(seq), MISSING if seq % 2 else f"v{seq}", seq=seq))
    return window


def test_events_sorted_by_time_then_insertion() -> None:
    window = filled([50, 10, 50, 30, 10])
    assert [(e.event_time_ms, e.offset) for e in window.events()] == [(10, 1), (10, 4), (30, 3), (50, 0), (50, 2)]
    assert window.max_event_time_ms == 50


def test_maxima_follow_the_largest_event_time_and_ingestion_timestamp() -> None:
    window = GroupWindow(("a", "b"))
    assert (window.max_event_time_ms, window.max_ingest_ts_ms) == (None, None)
    window.insert(StoredEvent(100, 7, 0, 0, 0, (D(1), "x")))
    window.insert(StoredEvent(50, 9, 0, 1, 0, (D(1), "x")))
    window.insert(StoredEvent(60, 8, 1, 0, 0, (D(1), "x")))
    assert (window.max_event_time_ms, window.max_ingest_ts_ms) == (100, 9)


def test_floor_evicts_and_a_lower_floor_brings_nothing_back() -> None:
    window = filled(list(range(0, 1000, 10)))
    window.set_floor(500)
    assert next(window.events()).event_time_ms == 500
    window.set_floor(200)
    assert window.floor_ms == 200
    assert len(window) == 50
    window.insert(event(300, D(1), "x"))  # lands below the old floor, above the new one
    assert [e.event_time_ms for e in window.events()][:2] == [300, 500]
    window.set_floor(995)
    assert [e.event_time_ms for e in window.events()] == []  # the compaction path kept nothing stale
    window.insert(event(2000, D(1), "x"))
    assert [e.event_time_ms for e in window.events()] == [2000]


def test_many_evictions_compact_and_keep_indices_valid() -> None:
    window = GroupWindow(("a",))
    spec = WindowSpec(
        "k", AggregatorKind.SUM_COUNT, 100, 0, lambda e: e.values[0] if isinstance(e.values[0], Decimal) else None
    )
    window.prepare(("a",), {"r": spec})
    for time_ms in range(10_000):
        window.insert(event(time_ms, D(1)))
        window.set_floor(time_ms - 100)
        assert window.aggregate("r", time_ms).count == min(time_ms + 1, 101)
    assert len(window) == 101


def test_bytes_round_trip_keeps_events_missing_and_decimals() -> None:
    window = filled([30, 10, 20, 10])
    window.set_floor(10)
    copy = GroupWindow.from_bytes(window.to_bytes())
    assert list(copy.events()) == list(window.events())
    assert (copy.field_names, copy.max_event_time_ms, copy.floor_ms) == (("a", "b"), 30, 10)
    assert copy.max_ingest_ts_ms == window.max_ingest_ts_ms == 1_003
    assert [e.values[1] for e in copy.events()] == [MISSING, MISSING, "v2", "v0"]
    assert all(isinstance(e.values[0], Decimal) for e in copy.events())


def test_json_null_is_not_missing_in_bytes() -> None:
    window = GroupWindow(("a",))
    window.insert(event(1, None))
    window.insert(event(2, MISSING))
    assert [e.values for e in GroupWindow.from_bytes(window.to_bytes()).events()] == [(None,), (MISSING,)]


def test_bytes_grow_with_the_events_held_not_with_history() -> None:
    window = filled(list(range(100)))
    small = len(window.to_bytes())
    window = filled(list(range(1_000)))
    large = len(window.to_bytes())
    window.set_floor(900)
    assert 8 * small < large < 12 * small
    assert len(window.to_bytes()) < 1.2 * small


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"garbage",
        pickle.dumps((99, (), None, None, [])),
        pickle.dumps((1, ("a",), 1, None, [("x",)])),
        pickle.dumps((3, 1, None, b"")),
        pickle.dumps((2, 1, None, b"", 5)),
        pickle.dumps(ValueError("no classes allowed")),
    ],
)
def test_from_bytes_refuses_corrupt_state(data: bytes) -> None:
    with pytest.raises(CorruptStateError):
        GroupWindow.from_bytes(data)


def test_reprojection_keeps_shared_fields_and_marks_new_ones_missing() -> None:
    window = GroupWindow(("a", "b"))
    window.insert(event(1, "a1", "b1"))
    window.prepare(("b", "c"), {})
    assert window.field_names == ("b", "c")
    assert [e.values for e in window.events()] == [("b1", MISSING)]


def test_reads_the_previous_byte_forms() -> None:
    window = filled([10, 20])
    _, max_ms, floor_ms, events, max_ingest_ms, _ = pickle.loads(window.to_bytes())
    without_ingest = GroupWindow.from_bytes(pickle.dumps((2, max_ms, floor_ms, events)))
    assert list(without_ingest.events()) == list(window.events())
    assert (without_ingest.max_event_time_ms, without_ingest.max_ingest_ts_ms) == (20, None)
    without_buckets = GroupWindow.from_bytes(pickle.dumps((3, max_ms, floor_ms, events, max_ingest_ms)))
    assert list(without_buckets.events()) == list(window.events())
    assert without_buckets.max_ingest_ts_ms == window.max_ingest_ts_ms
    assert without_buckets.bucket_states() == {}
