"""Aggregator tables, and the incremental windows against a brute-force rescan of the group's events."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fraudstream_rules.aggregates import (
    EMPTY,
    MISSING,
    AggregatorKind,
    StoredEvent,
    WindowAggregate,
    WindowSpec,
    aggregate_value,
    include,
    limit_holds,
)
from fraudstream_rules.model import AggregatorFunction, LimitOperator
from fraudstream_rules.windows import GroupWindow

D = Decimal
SUM, COUNT, AVG, MIN, MAX = (
    AggregatorFunction.SUM,
    AggregatorFunction.COUNT,
    AggregatorFunction.AVG,
    AggregatorFunction.MIN,
    AggregatorFunction.MAX,
)


def fold(function: AggregatorFunction, values: list[str]) -> WindowAggregate:
    aggregate = EMPTY
    for value in values:
        aggregate = include(aggregate, D(value), function)
    return aggregate


@pytest.mark.parametrize(
    ("function", "values", "expected"),
    [
        (COUNT, [], D(0)),
        (SUM, [], D(0)),
        (AVG, [], None),
        (MIN, [], None),
        (MAX, [], None),
        (COUNT, ["5", "-1"], D(2)),
        (SUM, ["0.1", "0.2"], D("0.3")),
        (SUM, ["1e30", "1e-30", "-1e30"], D("1e-30")),
        (AVG, ["1", "2"], D("1.5")),
        (AVG, ["1", "1", "2"], D("1.333333333333333333333333333333333")),
        (MIN, ["3", "-0.5", "2"], D("-0.5")),
        (MAX, ["3", "-0.5", "2"], D("3")),
    ],
)
def test_aggregate_value(function: AggregatorFunction, values: list[str], expected: Decimal | None) -> None:
    assert aggregate_value(function, fold(function, values)) == expected


@pytest.mark.parametrize(
    ("function", "values", "operator", "limit", "holds"),
    [
        (SUM, ["0.10", "0.20"], LimitOperator.EQUAL, "0.30", True),
        (SUM, ["0.1", "0.2"], LimitOperator.GREATER, "0.3", False),
        (SUM, [], LimitOperator.EQUAL, "0", True),
        (COUNT, [], LimitOperator.LESS, "1", True),
        (AVG, [], LimitOperator.GREATER_EQUAL, "-1000", False),
        (MIN, [], LimitOperator.LESS, "1000", False),
        (MAX, [], LimitOperator.NOT_EQUAL, "0", False),
        # An average is compared exactly, not through its 34-digit rounding.
        (AVG, ["1", "1", "2"], LimitOperator.EQUAL, "1.333333333333333333333333333333333", False),
        (AVG, ["1", "1", "2"], LimitOperator.GREATER, "1.333333333333333333333333333333333", True),
        (AVG, ["0.1", "0.2"], LimitOperator.EQUAL, "0.15", True),
        (MAX, ["2", "2.00"], LimitOperator.GREATER_EQUAL, "2", True),
        (MIN, ["2", "3"], LimitOperator.LESS_EQUAL, "1.99", False),
    ],
)
def test_limit_holds(
    function: AggregatorFunction, values: list[str], operator: LimitOperator, limit: str, holds: bool
) -> None:
    assert limit_holds(function, fold(function, values), operator, D(limit)) is holds


def event(time_ms: int, value: object, seq: int = 0) -> StoredEvent:
    return StoredEvent(time_ms, ingest_ts_ms=seq, partition=0, offset=seq, rule_seq=0, values=(value,))


def value_of(stored: StoredEvent) -> Decimal | None:
    value = stored.values[0]
    return value if isinstance(value, Decimal) else None


def window_with(kind: AggregatorKind, window_ms: int, lateness_ms: int) -> tuple[GroupWindow, dict[str, WindowSpec]]:
    window = GroupWindow(("amount",))
    specs = {"r": WindowSpec(("r", kind), kind, window_ms, lateness_ms, value_of)}
    window.prepare(("amount",), specs)
    return window, specs


BOUNDARY_CASES = [
    # (events inserted as (time, value) in order, query time, expected SUM and COUNT, MIN, MAX) with window 60 s
    ([(0, "1"), (60_000, "2")], 60_000, ("3", 2, "1", "2")),  # x exactly at t - window is included
    ([(0, "1"), (60_001, "2")], 60_001, ("2", 1, "2", "2")),  # one millisecond further is not
    ([(60_000, "2"), (0, "1")], 0, ("1", 1, "1", "1")),  # disorder: the later event time is excluded
    ([(60_000, "2"), (0, "1"), (30_000, "5")], 30_000, ("6", 2, "1", "5")),
    ([(10, "1"), (10, "2"), (10, None)], 10, ("3", 2, "1", "2")),  # duplicate times; None does not count
    ([(100_000, "5"), (40_000, "1"), (100_000, "7")], 100_000, ("13", 3, "1", "7")),  # late arrival on the edge
    ([(100_000, "5"), (40_000, "9"), (100_000, "7")], 100_000, ("21", 3, "5", "9")),
]


@pytest.mark.parametrize(("inserts", "query_ms", "expected"), BOUNDARY_CASES)
@pytest.mark.parametrize("lateness_ms", [60_000, 120_000])
def test_window_boundaries_and_disorder(
    inserts: list[tuple[int, str | None]], query_ms: int, expected: tuple[str, int, str, str], lateness_ms: int
) -> None:
    total, count, low, high = expected
    for kind in AggregatorKind:
        window, _ = window_with(kind, 60_000, lateness_ms)
        for seq, (time_ms, value) in enumerate(inserts):
            window.insert(event(time_ms, None if value is None else D(value), seq))
        result = window.aggregate("r", query_ms)
        if kind is AggregatorKind.SUM_COUNT:
            assert (result.total, result.count) == (D(total), count)
        else:
            assert result.extreme == D(low if kind is AggregatorKind.MIN else high)


FAR_DISORDER_CASES = [
    # lateness (200 s) far wider than the window (10 s): out-of-order events land before the frontier window
    ([(100_000, "1"), (55_000, "2"), (75_000, "4")], ("4", 1, "4", "4")),
    ([(100_000, "1"), (55_000, "2"), (60_000, "4")], ("6", 2, "2", "4")),
    ([(100_000, "1"), (95_000, "2"), (89_000, "4"), (91_000, "8")], ("12", 2, "4", "8")),
    ([(100_000, "1"), (90_000, "2"), (90_000, "4")], ("6", 2, "2", "4")),
    ([(100_000, "1"), (99_999, "2"), (100_000, "4"), (95_000, "8")], ("8", 1, "8", "8")),
]


@pytest.mark.parametrize(("inserts", "expected"), FAR_DISORDER_CASES)
def test_disorder_beyond_the_window(inserts: list[tuple[int, str]], expected: tuple[str, int, str, str]) -> None:
    total, count, low, high = expected
    for kind in AggregatorKind:
        window, _ = window_with(kind, 10_000, 200_000)
        for seq, (time_ms, value) in enumerate(inserts):
            window.insert(event(time_ms, D(value), seq))
        result = window.aggregate("r", inserts[-1][0])
        if kind is AggregatorKind.SUM_COUNT:
            assert (result.total, result.count) == (D(total), count)
        else:
            assert result.extreme == D(low if kind is AggregatorKind.MIN else high)


@pytest.mark.parametrize("kind", [AggregatorKind.MIN, AggregatorKind.MAX])
def test_a_repeated_extreme_spares_a_query_behind_the_newest_its_scan(kind: AggregatorKind) -> None:
    """The extreme's value recurs (a round amount, every 10th event, the newest too) in a tail of 1 000 events; an
    event 5 ms behind the newest finds its first occurrence in the tail and reads no stored values to answer, where
    keeping the latest occurrence would scan the lateness."""
    reads = 0

    def counting(stored: StoredEvent) -> Decimal | None:
        nonlocal reads
        reads += 1
        return value_of(stored)

    window = GroupWindow(("amount",))
    window.prepare(("amount",), {"r": WindowSpec(("r", kind), kind, 300_000, 60_000, counting)})
    extreme = D(0) if kind is AggregatorKind.MIN else D(1_000)
    for i in range(1_000):
        window.insert(event(10_000 + 50 * i, extreme if i % 10 == 9 else D(500 + i % 7), i))
    newest = 10_000 + 50 * 999
    window.insert(event(newest - 5, D(600), 1_000))
    reads = 0
    assert window.aggregate("r", newest - 5).extreme == extreme
    assert reads == 0


def test_empty_window_when_nothing_counts() -> None:
    for kind in AggregatorKind:
        window, _ = window_with(kind, 60_000, 0)
        window.insert(event(5, MISSING))
        assert window.aggregate("r", 5) == WindowAggregate(D(0), 0, None)


def brute_force(
    window: GroupWindow, window_ms: int, time_ms: int
) -> tuple[Decimal, int, Decimal | None, Decimal | None]:
    values = [
        value
        for stored in window.events()
        if time_ms - window_ms <= stored.event_time_ms <= time_ms and (value := value_of(stored)) is not None
    ]
    return (
        sum(values, D(0)),
        len(values),
        min(values) if values else None,
        max(values) if values else None,
    )


steps = st.sampled_from(
    [-150_000, -60_000, -45_000, -30_000, -10_000, -1, 0, 0, 1, 5_000, 10_000, 20_000, 30_000, 60_000, 60_000]
)
amounts = st.sampled_from([None, "0.1", "0.2", "0.3", "1", "-2", "5", "5"])


@settings(max_examples=500, deadline=None)
@given(
    window_ms=st.sampled_from([1, 10_000, 60_000, 120_000]),
    lateness_ms=st.sampled_from([0, 1, 20_000, 60_000, 200_000]),
    wider_ms=st.sampled_from([0, 0, 100_000]),
    moves=st.lists(st.tuples(steps, amounts, st.integers(0, 9)), max_size=120),
)
def test_incremental_windows_match_rescan(
    window_ms: int, lateness_ms: int, wider_ms: int, moves: list[tuple[int, str | None, int]]
) -> None:
    """Every aggregator kind, fed non-late events in any order, answers exactly as a rescan would.

    The group's horizon is the window plus the lateness, plus `wider_ms` when a wider rule of the key group stretches
    it, so events land behind the lateness too. Events are inserted only when within the horizon, the floor is set
    as the engine does (M - horizon), and now and then the window goes through bytes and its aggregators are
    rebuilt from scratch.
    """
    windows = {kind: window_with(kind, window_ms, lateness_ms) for kind in AggregatorKind}
    horizon_ms = window_ms + lateness_ms + wider_ms
    clock_ms = 1_000_000
    for seq, (step_ms, amount, action) in enumerate(moves):
        clock_ms += step_ms
        for kind, (window, specs) in list(windows.items()):
            newest_ms = window.max_event_time_ms
            if newest_ms is not None and clock_ms < newest_ms - horizon_ms:
                continue
            window.insert(event(clock_ms, None if amount is None else D(amount), seq))
            total, count, low, high = brute_force(window, window_ms, clock_ms)
            result = window.aggregate("r", clock_ms)
            if kind is AggregatorKind.SUM_COUNT:
                assert (result.total, result.count) == (total, count)
            else:
                assert result.extreme == (low if kind is AggregatorKind.MIN else high)
            max_ms = window.max_event_time_ms
            assert max_ms is not None
            window.set_floor(max_ms - horizon_ms)
            if action == 0:
                window = GroupWindow.from_bytes(window.to_bytes())
                window.prepare(window.field_names, specs)
                windows[kind] = (window, specs)


def bucketed(kind: AggregatorKind, window_ms: int, precision_ms: int) -> tuple[GroupWindow, dict[str, WindowSpec]]:
    window = GroupWindow(("amount",))
    spec = WindowSpec(("r", "buckets", precision_ms), kind, window_ms, 0, value_of, precision_ms)
    specs = {"r": spec}
    window.prepare(("amount",), specs)
    return window, specs


@pytest.mark.parametrize(
    ("inserts", "query_ms", "expected"),
    [
        # window 60 s, buckets of 20 s: [t - 60 s, t] widens to whole buckets (t - 60 s) // 20 s .. t // 20 s
        ([(0, "1"), (59_999, "2"), (60_000, "4")], 60_000, ("7", 3, "1", "4")),
        ([(0, "1"), (60_000, "4"), (79_999, "8")], 79_999, ("13", 3, "1", "8")),  # 0 is in bucket 0: counted
        ([(0, "1"), (60_000, "4"), (80_000, "8")], 80_000, ("12", 2, "4", "8")),  # now bucket 0 has left
        ([(60_000, "4"), (75_000, "8"), (61_000, "2")], 61_000, ("14", 3, "2", "8")),  # 75 000 shares 61 000's bucket
        ([(100_000, "5"), (20_000, "9")], 100_000, ("5", 1, "5", "5")),  # an older bucket, outside the window
    ],
)
def test_bucketed_windows_take_whole_buckets(
    inserts: list[tuple[int, str]], query_ms: int, expected: tuple[str, int, str, str]
) -> None:
    total, count, low, high = expected
    for kind in AggregatorKind:
        window, _ = bucketed(kind, 60_000, 20_000)
        for seq, (time_ms, amount) in enumerate(inserts):
            window.insert(event(time_ms, D(amount), seq))
        result = window.aggregate("r", query_ms)
        if kind is AggregatorKind.SUM_COUNT:
            assert (result.total, result.count) == (D(total), count)
        else:
            assert result.extreme == D(low if kind is AggregatorKind.MIN else high)


def test_buckets_survive_bytes_and_a_new_projection_and_leave_behind_their_floor() -> None:
    window, specs = bucketed(AggregatorKind.SUM_COUNT, 60_000, 20_000)
    for seq, time_ms in enumerate([0, 10_000, 20_000, 40_000, 61_000]):
        window.insert(event(time_ms, D(1), seq))
    assert window.aggregate("r", 61_000).count == 5
    copy = GroupWindow.from_bytes(window.to_bytes())
    assert len(copy) == 5
    copy.prepare(("amount",), specs)
    assert copy.aggregate("r", 61_000).count == 5, "buckets are state of their own, restored by key"
    wider = ("amount", "extra")
    respecced = {"r": WindowSpec(specs["r"].key, AggregatorKind.MAX, 40_000, 0, lambda e: value_of(e), 20_000)}
    copy.prepare(wider, respecced)
    assert copy.aggregate("r", 61_000).extreme == D(1), "a new projection and aggregate keep the buckets"
    copy.set_floor(61_000)
    assert len(copy) == 1, "events go below the (exact) floor"
    assert copy.aggregate("r", 61_000).count == 3, "buckets before the one holding M - (window + lateness) go"
    assert copy.bucket_states()[specs["r"].key] == [
        (1, D(1), 1, D(1), D(1)),
        (2, D(1), 1, D(1), D(1)),
        (3, D(1), 1, D(1), D(1)),
    ]
