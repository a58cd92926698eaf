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


@pytest.mark.parametrize(
    ("max_ms", "event_time_ms", "lateness_ms", "late"),
    [
        (None, 0, 0, False),
        (100, 40, 60, False),
        (100, 39, 60, True),
        (100, 100, 0, False),
        (100, 99, 0, True),
        (100, 500, 0, False),
    ],
)
def test_is_late(max_ms: int | None, event_time_ms: int, lateness_ms: int, late: bool) -> None:
    window = GroupWindow(("a", "b"))
    if max_ms is not None:
        window.insert(event(max_ms, D(1), "x"))
    assert window.is_late(event_time_ms, lateness_ms) is late


def test_floor_evicts_and_never_goes_down() -> None:
    window = filled(list(range(0, 1000, 10)))
    window.raise_floor(500)
    assert next(window.events()).event_time_ms == 500
    window.raise_floor(200)
    assert window.floor_ms == 500
    assert len(window) == 50
    window.raise_floor(995)
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
        window.raise_floor(time_ms - 100)
        assert window.aggregate("r", time_ms).count == min(time_ms + 1, 101)
    assert len(window) == 101


def test_bytes_round_trip_keeps_events_missing_and_decimals() -> None:
    window = filled([30, 10, 20, 10])
    window.raise_floor(10)
    copy = GroupWindow.from_bytes(window.to_bytes())
    assert list(copy.events()) == list(window.events())
    assert (copy.field_names, copy.max_event_time_ms, copy.floor_ms) == (("a", "b"), 30, 10)
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
    window.raise_floor(900)
    assert 8 * small < large < 12 * small
    assert len(window.to_bytes()) < 1.2 * small


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"garbage",
        pickle.dumps((99, (), None, None, [])),
        pickle.dumps((1, ("a",), 1, None, [("x",)])),
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
