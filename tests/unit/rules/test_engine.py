"""The Engine's semantics, case by case (the property tests cover the combinations)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal

import pytest

from fraudstream_rules.alerts import alert_id
from fraudstream_rules.dead_letters import MAX_DETAIL_BYTES
from fraudstream_rules.engine import (
    Engine,
    GroupWindow,
    InMemoryGroupStore,
    KeyGroup,
    Outcome,
    SkippedRule,
    SweepClock,
    group_key,
)
from fraudstream_rules.exceptions import CorruptStateError, RejectedRuleMessageError
from fraudstream_rules.json_values import dumps_exact
from fraudstream_rules.model import Rule, parse_spec
from fraudstream_rules.transactions import SkipReason, Transaction, parse_transaction

D = Decimal
T0 = 1_700_000_000_000
MINUTE = 60_000
PAYER_P1 = '[["payerId"],["p1"]]'
PAYER: KeyGroup = ("payerId",)


@pytest.mark.parametrize(
    ("key_group", "fields", "key"),
    [
        (("payerId",), {"payerId": "p1", "x": 1}, PAYER_P1),
        (("payerId",), {"x": 1}, None),
        (("beneficiaryId", "payerId"), {"payerId": "p1", "beneficiaryId": 2}, '[["beneficiaryId","payerId"],[2,"p1"]]'),
        (("beneficiaryId", "payerId"), {"payerId": "p1"}, None),
        (("payerId",), {"payerId": 7}, '[["payerId"],[7]]'),
        (("payerId",), {"payerId": D("7.0")}, '[["payerId"],[7]]'),
        (("payerId",), {"payerId": D("7E0")}, '[["payerId"],[7]]'),
        (("payerId",), {"payerId": "7"}, '[["payerId"],["7"]]'),
        (("payerId",), {"payerId": D("0.50")}, '[["payerId"],[0.5]]'),
        (("payerId",), {"payerId": None}, '[["payerId"],[null]]'),
        (("payerId",), {"payerId": {"b": 1, "a": [D("1.0")]}}, '[["payerId"],[{"a":[1],"b":1}]]'),
        (("payerId",), {"payerId": '\u00e9"'}, '[["payerId"],["\u00e9\\""]]'),
    ],
)
def test_group_key(key_group: tuple[str, ...], fields: dict[str, object], key: str | None) -> None:
    assert group_key(key_group, fields) == key


def make_rule(
    rule_id: str = "ns/r",
    uid: str = "u1",
    generation: int = 1,
    spec: Mapping[str, object] | None = None,
    **overrides: object,
) -> Rule:
    raw: dict[str, object] = {
        "groupingKeyNames": ["payerId"],
        "aggregatorFunctionType": "SUM",
        "aggregateFieldName": "paymentAmount",
        "limitOperatorType": "GREATER_EQUAL",
        "limit": "100",
        "windowMinutes": 1,
        **(spec or {}),
        **overrides,
    }
    return Rule(rule_id, generation, uid, parse_spec(raw))


class Harness:
    """A detector, an in-memory store, and a Kafka-like clock for records (CreateTime, ever increasing)."""

    def __init__(self, lateness_ms: int = MINUTE) -> None:
        self.detector = Engine(lateness_ms=lateness_ms)
        self.store = InMemoryGroupStore()
        self.offset = 0
        self.clock_ms = T0

    def rule(self, rule: Rule | None, rule_id: str = "ns/r") -> None:
        self.clock_ms += 10
        self.detector.on_rule(rule_id, rule, self.clock_ms)

    def tx(self, event_time_ms: int, ingest_ts_ms: int | None = None, **fields: object) -> Outcome:
        """A transaction; unless told otherwise, ingested 10 ms after the previous record and not before its event."""
        self.clock_ms = max(self.clock_ms + 10, event_time_ms)
        self.offset += 1
        body = {"transactionId": f"t{self.offset}", "eventTime": event_time_ms, "payerId": "p1", **fields}
        value = dumps_exact({k: v for k, v in body.items() if v is not ...}).encode()
        ingest = self.clock_ms if ingest_ts_ms is None else ingest_ts_ms
        tx = parse_transaction(value, ingest_ts_ms=ingest, partition=0, offset=self.offset)
        return self.detector.on_transaction(tx, self.store, detected_at_ms=ingest + 5)

    def values(self, outcome: Outcome) -> list[tuple[str, str]]:
        return [(alert.rule_id, str(alert.aggregate_value)) for alert in outcome.alerts]


def test_exact_decimals_fire_equal() -> None:
    h = Harness()
    h.rule(make_rule(limitOperatorType="EQUAL", limit="0.30"))
    assert h.tx(T0, paymentAmount=D("0.1")).alerts == ()
    outcome = h.tx(T0 + 1, paymentAmount="0.2")
    assert h.values(outcome) == [("ns/r", "0.3")]
    alert = outcome.alerts[0]
    assert (alert.alert_id, alert.transaction_id, alert.rule_generation) == (alert_id("ns/r", "t2"), "t2", 1)
    assert alert.grouping_key == {"payerId": "p1"}
    assert alert.transaction_timestamp_ms + 5 == alert.detected_at_ms
    assert alert.transaction["paymentAmount"] == "0.2"


@pytest.mark.parametrize(
    ("aggregator", "amounts", "expected"),
    [
        ("SUM", ["1", "2", "-0.5"], "2.5"),
        ("COUNT", ["1", "2", "-0.5"], "3"),
        ("AVG", ["1", "2", "0"], "1"),
        ("AVG", ["1", "1", "2"], "1.333333333333333333333333333333333"),
        ("MIN", ["1", "2", "-0.5"], "-0.5"),
        ("MAX", ["1", "2", "-0.5"], "2"),
    ],
)
def test_each_aggregator(aggregator: str, amounts: list[str], expected: str) -> None:
    h = Harness()
    h.rule(make_rule(aggregatorFunctionType=aggregator, limitOperatorType="NOT_EQUAL", limit="12345"))
    outcome = None
    for step, amount in enumerate(amounts):
        outcome = h.tx(T0 + step, paymentAmount=D(amount))
    assert outcome is not None and h.values(outcome) == [("ns/r", expected)]


@pytest.mark.parametrize(("gap_ms", "count"), [(MINUTE, "2"), (MINUTE + 1, "1"), (0, "2")])
def test_window_boundary_is_inclusive(gap_ms: int, count: str) -> None:
    h = Harness()
    h.rule(make_rule(aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="0"))
    h.tx(T0)
    assert h.values(h.tx(T0 + gap_ms)) == [("ns/r", count)]


def test_disorder_excludes_later_event_times() -> None:
    h = Harness()
    h.rule(make_rule(limitOperatorType="GREATER", limit="0"))
    h.tx(T0 + 30_000, paymentAmount=5)
    assert h.values(h.tx(T0, paymentAmount=1)) == [("ns/r", "1")]
    assert h.values(h.tx(T0 + 40_000, paymentAmount=2)) == [("ns/r", "8")]


@pytest.mark.parametrize(
    ("event_time_ms", "late"), [(T0 - 2 * MINUTE, False), (T0 - 2 * MINUTE - 1, True), (T0 + 1, False)]
)
def test_late_is_beyond_the_horizon_widest_window_plus_lateness(event_time_ms: int, late: bool) -> None:
    h = Harness()
    h.rule(make_rule(aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="0"))  # 1 min + 1 min
    h.tx(T0)
    outcome = h.tx(event_time_ms)
    assert [group.group_key for group in outcome.late] == ([PAYER_P1] if late else [])
    assert len(outcome.alerts) == (0 if late else 1)
    window = h.store.get(PAYER_P1)
    assert window is not None and len(window) == (1 if late else 2)


def test_old_transactions_within_a_wide_window_are_evaluated_not_late() -> None:
    h = Harness()
    for aggregator in ("SUM", "MIN", "MAX"):
        rule_id = f"ns/{aggregator.lower()}"
        rule = make_rule(rule_id, aggregatorFunctionType=aggregator, windowMinutes=24 * 60, limitOperatorType="GREATER")
        h.rule(replace(rule, spec=replace(rule.spec, limit=D(-1000))), rule_id=rule_id)
    h.tx(T0, paymentAmount=5)
    h.tx(T0 - 2 * 60 * MINUTE, paymentAmount=7)
    outcome = h.tx(T0 - 60 * MINUTE, paymentAmount=1)  # an hour old: 7 is in its window, 5 is after it
    assert outcome.late == ()
    assert h.values(outcome) == [("ns/max", "7"), ("ns/min", "1"), ("ns/sum", "8")]
    assert h.values(h.tx(T0 + 1, paymentAmount=2)) == [("ns/max", "7"), ("ns/min", "1"), ("ns/sum", "15")]


def test_a_late_transaction_says_which_group_and_by_how_much() -> None:
    h = Harness()
    h.rule(make_rule())
    h.tx(T0)
    (late,) = h.tx(T0 - 5 * MINUTE).late
    assert (late.group_key, late.newest_ms, late.horizon_ms, late.behind_ms) == (PAYER_P1, T0, 2 * MINUTE, 3 * MINUTE)
    assert late.detail() == (
        f"late for group {PAYER_P1} by 180000 ms: eventTime {T0 - 5 * MINUTE} is before {T0 - 2 * MINUTE} "
        f"(newest eventTime {T0} minus horizon 120000 ms)"
    )


def test_a_huge_late_group_key_keeps_the_detail_within_bounds() -> None:
    h = Harness()
    h.rule(make_rule())
    payer = "\u00e9" * 300_000
    h.tx(T0, payerId=payer)
    (late,) = h.tx(T0 - 5 * MINUTE, payerId=payer).late
    assert len(late.detail().encode()) <= MAX_DETAIL_BYTES
    assert late.detail().startswith('late for group [["payerId"],["\u00e9\u00e9')


@pytest.mark.parametrize(
    ("event_time_ms", "ingest_ts_ms", "future"),
    [(T0 + 5 * MINUTE, T0, False), (T0 + 5 * MINUTE + 1, T0, True), (10**18, T0, True), (T0, T0 + 10**6, False)],
)
def test_future_transactions_are_rejected_and_move_no_clock(
    event_time_ms: int, ingest_ts_ms: int, future: bool
) -> None:
    h = Harness()
    h.rule(make_rule(aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="0"))
    outcome = h.tx(event_time_ms, ingest_ts_ms=ingest_ts_ms)
    if not future:
        assert outcome.rejection is None and len(outcome.alerts) == 1
        return
    assert outcome.rejection is not None and outcome.rejection.error == "future"
    assert outcome.rejection.detail == (
        f"eventTime {event_time_ms} is {event_time_ms - ingest_ts_ms} ms ahead of its Kafka timestamp {ingest_ts_ms} "
        "(allowed future skew 300000 ms)"
    )
    assert (outcome.alerts, outcome.late, outcome.applied) == ((), (), ())
    assert (h.store.windows, h.detector.clock_ms) == ({}, None)
    assert h.values(h.tx(T0, ingest_ts_ms=T0)) == [("ns/r", "1")]  # not late: the future one set no group clock


def test_future_skew_is_configurable() -> None:
    h = Harness()
    h.detector = Engine(future_skew_ms=0)
    h.rule(make_rule())
    assert h.tx(T0 + 1, ingest_ts_ms=T0).rejection is not None
    assert h.tx(T0, ingest_ts_ms=T0).rejection is None


def test_paused_rules_raise_nothing_but_keep_their_window() -> None:
    h = Harness()
    h.rule(make_rule(aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="0", state="PAUSE"))
    assert h.tx(T0).alerts == ()
    h.rule(make_rule(generation=2, aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="0"))
    assert h.values(h.tx(T0 + 1)) == [("ns/r", "2")]


@pytest.mark.parametrize(
    ("update", "uid", "count"),
    [
        ({"limit": "1"}, "u1", "2"),
        ({"state": "ACTIVE", "windowMinutes": 2}, "u1", "2"),
        ({"limitOperatorType": "GREATER_EQUAL"}, "u1", "2"),
        ({"limit": "0"}, "u2", "1"),  # deleted and re-created: a new window
        ({"filters": [{"field": "payerId", "operator": "EQUAL", "value": "p1"}]}, "u1", "1"),
        ({"groupingKeyNames": ["payerId", "paymentType"]}, "u1", "1"),
    ],
)
def test_rule_updates_keep_or_restart_the_window(update: dict[str, object], uid: str, count: str) -> None:
    h = Harness()
    base = {"aggregatorFunctionType": "COUNT", "limitOperatorType": "GREATER", "limit": "0"}
    h.rule(make_rule(spec=base))
    h.tx(T0, paymentType="CRD")
    h.rule(make_rule(uid=uid, generation=2, spec={**base, **update}))
    outcome = h.tx(T0 + 1, paymentType="CRD")
    assert h.values(outcome) == [("ns/r", count)]
    assert outcome.alerts[0].rule_generation == 2


def test_tombstone_removes_the_rule_and_its_groups_when_touched() -> None:
    h = Harness()
    h.rule(make_rule(aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="0"))
    h.tx(T0)
    h.rule(None)
    assert h.detector.active_rule_count == 0
    assert PAYER_P1 in h.store.windows
    assert h.tx(T0 + 1) == Outcome()
    assert h.store.windows == {}


def test_state_shrinks_when_the_widest_rule_is_paused() -> None:
    h = Harness(lateness_ms=0)
    h.rule(make_rule("ns/wide", windowMinutes=10, limit="1e9"), rule_id="ns/wide")
    h.rule(make_rule("ns/narrow", windowMinutes=1, limit="1e9"), rule_id="ns/narrow")
    for step in range(20):
        h.tx(T0 + step * MINUTE, paymentAmount=1)
    window = h.store.get(PAYER_P1)
    assert window is not None and len(window) == 11
    assert h.detector.horizon_ms(("payerId",)) == 10 * MINUTE
    h.rule(make_rule("ns/wide", generation=2, windowMinutes=10, limit="1e9", state="PAUSE"), rule_id="ns/wide")
    assert h.detector.horizon_ms(("payerId",)) == MINUTE
    h.tx(T0 + 20 * MINUTE, paymentAmount=1)
    assert len(window) == 2
    # Resumed, the wide rule sees only what was kept.
    h.rule(
        make_rule("ns/wide", generation=3, windowMinutes=10, limit="0", limitOperatorType="GREATER"), rule_id="ns/wide"
    )
    assert h.values(h.tx(T0 + 21 * MINUTE, paymentAmount=1)) == [("ns/wide", "3")]


def test_a_key_group_whose_rules_are_all_bucketed_keeps_no_events() -> None:
    h = Harness()
    hourly = {"windowMinutes": 60, "windowPrecisionSeconds": 600, "limit": "3"}
    h.rule(make_rule("ns/hourly", spec=hourly), rule_id="ns/hourly")
    h.rule(make_rule("ns/paused", spec=hourly, state="PAUSE"), rule_id="ns/paused")
    outcomes = [h.tx(T0 + step * MINUTE, paymentAmount=1) for step in range(4)]
    window = h.store.get(PAYER_P1)
    assert window is not None and len(window) == 0
    assert [h.values(outcome) for outcome in outcomes] == [[], [], [("ns/hourly", "3")], [("ns/hourly", "4")]]
    # A paused exact rule keeps its key group's events (back to the lateness), as an active one would.
    h.rule(make_rule("ns/paused", generation=2, windowMinutes=60, limit="3", state="PAUSE"), rule_id="ns/paused")
    h.tx(T0 + 4 * MINUTE, paymentAmount=1)
    assert len(window) == 1
    # A new exact rule starts its window with the events after it, whatever was kept before.
    h.rule(make_rule("ns/exact", windowMinutes=60, limit="0", limitOperatorType="GREATER"), rule_id="ns/exact")
    assert ("ns/exact", "1") in h.values(h.tx(T0 + 5 * MINUTE, paymentAmount=1))


def test_a_mistaken_rule_skips_only_itself() -> None:
    h = Harness()
    h.rule(
        make_rule("ns/count", aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="0"),
        rule_id="ns/count",
    )
    h.rule(make_rule("ns/sum", limitOperatorType="GREATER", limit="0"), rule_id="ns/sum")
    h.rule(make_rule("ns/typo", aggregateFieldName="paymentAmout", limit="0"), rule_id="ns/typo")
    outcome = h.tx(T0, paymentAmount="abc")
    assert h.values(outcome) == [("ns/count", "1")]
    assert outcome.skipped == (
        SkippedRule("ns/sum", SkipReason.NON_NUMERIC),
        SkippedRule("ns/typo", SkipReason.MISSING),
    )
    assert outcome.applied == ("ns/count", "ns/sum", "ns/typo") and outcome.rejection is None
    assert h.tx(T0 + 1, paymentAmount=...).skipped[0] == SkippedRule("ns/sum", SkipReason.MISSING)
    assert h.tx(T0 + 2, paymentAmount="1e200").skipped[0] == SkippedRule("ns/sum", SkipReason.OUT_OF_RANGE)
    # The skipped transactions are in the other rules' windows, not in the skipping rule's.
    assert h.values(h.tx(T0 + 3, paymentAmount=1)) == [("ns/count", "4"), ("ns/sum", "1")]


@pytest.mark.parametrize(
    ("rule_overrides", "skipped"),
    [
        ({}, True),
        ({"state": "PAUSE"}, False),
        ({"aggregatorFunctionType": "COUNT"}, False),
        ({"filters": [{"field": "paymentType", "operator": "EQUAL", "value": "CSH"}]}, False),
        ({"groupingKeyNames": ["beneficiaryId"]}, False),
    ],
)
def test_only_applicable_active_rules_skip(rule_overrides: dict[str, object], skipped: bool) -> None:
    h = Harness()
    h.rule(make_rule(spec=rule_overrides))
    outcome = h.tx(T0, paymentAmount=True, paymentType="CRD")
    assert outcome.skipped == ((SkippedRule("ns/r", SkipReason.NON_NUMERIC),) if skipped else ())


def test_a_resumed_rule_skips_stored_events_it_cannot_read() -> None:
    h = Harness()
    h.rule(make_rule(state="PAUSE", limitOperatorType="GREATER", limit="0"))
    assert h.tx(T0, paymentAmount="n/a").skipped == ()
    h.rule(make_rule(generation=2, limitOperatorType="GREATER", limit="0"))
    assert h.values(h.tx(T0 + 1, paymentAmount=2)) == [("ns/r", "2")]


def test_out_of_order_is_a_transaction_ingested_before_one_its_group_already_holds() -> None:
    h = Harness()
    h.rule(make_rule(aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="0"))
    assert not h.tx(T0, ingest_ts_ms=T0 + 100).out_of_order
    assert h.tx(T0 + 1, ingest_ts_ms=T0 + 50).out_of_order
    assert not h.tx(T0 + 2, ingest_ts_ms=T0 + 100).out_of_order  # equal timestamps are in order
    assert not h.tx(T0 + 3, ingest_ts_ms=T0 + 10, payerId="p2").out_of_order  # another group
    late = h.tx(T0 - 10 * MINUTE, ingest_ts_ms=T0)  # late: not evaluated in the group, so not out of order there
    assert late.late != () and not late.out_of_order


def test_own_event_counts_even_if_ingested_before_the_window_start() -> None:
    h = Harness()
    h.rule(make_rule(aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="0"))
    start_ms = h.clock_ms
    assert h.values(h.tx(T0, ingest_ts_ms=start_ms - 1_000)) == [("ns/r", "1")]
    assert h.values(h.tx(T0 + 1, ingest_ts_ms=start_ms)) == [("ns/r", "1")]
    assert h.values(h.tx(T0 + 2)) == [("ns/r", "2")]


def test_transactions_processed_before_the_rule_are_not_in_its_window() -> None:
    h = Harness()
    h.rule(
        make_rule("ns/other", aggregatorFunctionType="COUNT", limitOperatorType="LESS", limit="0"), rule_id="ns/other"
    )
    h.tx(T0, ingest_ts_ms=T0 + 10**9, paymentAmount=1)  # Kafka timestamp later than the rule's below
    h.rule(make_rule(aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="0"))
    assert h.values(h.tx(T0 + 1)) == [("ns/r", "1")]


def test_rules_of_a_key_group_share_one_projected_copy() -> None:
    h = Harness()
    h.rule(make_rule("ns/a", filters=[{"field": "paymentType", "operator": "EQUAL", "value": "CRD"}]), rule_id="ns/a")
    h.rule(make_rule("ns/b", aggregatorFunctionType="MAX", aggregateFieldName="fee"), rule_id="ns/b")
    h.rule(make_rule("ns/c", groupingKeyNames=["beneficiaryId"]), rule_id="ns/c")
    h.tx(T0, paymentAmount=1, fee=2, paymentType="CRD", beneficiaryId=9, note="not stored")
    assert sorted(h.store.windows) == ['[["beneficiaryId"],[9]]', PAYER_P1]
    window = h.store.windows[PAYER_P1]
    assert window.field_names == ("fee", "paymentAmount", "paymentType")
    assert [stored.values for stored in window.events()] == [(2, 1, "CRD")]


def test_owns_limits_the_groups_touched() -> None:
    h = Harness()
    h.rule(make_rule("ns/a", aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="0"), rule_id="ns/a")
    h.rule(
        make_rule(
            "ns/b",
            aggregatorFunctionType="COUNT",
            limitOperatorType="GREATER",
            limit="0",
            groupingKeyNames=["beneficiaryId"],
        ),
        rule_id="ns/b",
    )
    value = b'{"transactionId":"x","eventTime":1,"payerId":"p1","beneficiaryId":"b1"}'
    tx = parse_transaction(value, ingest_ts_ms=T0 + 10**6, partition=0, offset=0)
    outcome = h.detector.on_transaction(tx, h.store, detected_at_ms=0, owns=lambda key: "payerId" in key)
    assert [alert.rule_id for alert in outcome.alerts] == ["ns/a"]
    assert list(h.store.windows) == [PAYER_P1]


def test_rule_key_must_match_rule_id() -> None:
    with pytest.raises(RejectedRuleMessageError, match='rule message key "ns/x" does not match its ruleId "ns/r"') as e:
        Engine().on_rule("ns/x", make_rule(), T0)
    assert e.value.reason == "key-mismatch"


def test_detector_state_survives_bytes() -> None:
    h = Harness()
    h.rule(make_rule("ns/a", aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="0"), rule_id="ns/a")
    h.rule(make_rule("ns/b", groupingKeyNames=["beneficiaryId"]), rule_id="ns/b")
    h.tx(T0)
    h.tx(T0 + 1)
    h.rule(None, rule_id="ns/b")
    paused = make_rule(
        "ns/a", generation=2, aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="1", state="PAUSE"
    )
    h.rule(paused, rule_id="ns/a")
    copy = Engine.from_bytes(h.detector.to_bytes())
    assert copy.to_bytes() == h.detector.to_bytes()
    assert copy.rules == h.detector.rules
    assert (copy.lateness_ms, copy.active_rule_count, copy.key_groups) == (MINUTE, 0, (("payerId",),))
    assert copy.rules["ns/a"].window_start_ts_ms == T0 + 10

    copy_store = InMemoryGroupStore()
    copy_store.windows = {key: GroupWindow.from_bytes(window.to_bytes()) for key, window in h.store.windows.items()}
    resumed = make_rule("ns/a", generation=3, aggregatorFunctionType="COUNT", limitOperatorType="GREATER", limit="1")
    outcomes = []
    for detector, store in ((h.detector, h.store), (copy, copy_store)):
        detector.on_rule("ns/a", resumed, T0 + 10**6)
        transaction = Transaction({"payerId": "p1", "beneficiaryId": 1}, b"{}", T0 + 5, T0 + 10**6, 0, 99)
        outcomes.append(detector.on_transaction(transaction, store, 0))
    assert outcomes[0] == outcomes[1]
    assert [(alert.rule_id, alert.aggregate_value) for alert in outcomes[0].alerts] == [("ns/a", D(3))]


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{}",
        b'{"format":2}',
        b'{"format":3,"latenessMs":1,"ruleSeq":0,"keyGroups":[],"rules":[]}',
        b'{"format":1,"latenessMs":1,"ruleSeq":0,"keyGroups":[],"rules":[{"ruleId":"a"}]}',
    ],
)
def test_corrupt_detector_state(data: bytes) -> None:
    with pytest.raises(CorruptStateError):
        Engine.from_bytes(data)


def test_negative_lateness_and_skew_are_refused() -> None:
    with pytest.raises(ValueError, match="lateness_ms must be >= 0"):
        Engine(lateness_ms=-1)
    with pytest.raises(ValueError, match="future_skew_ms must be >= 0"):
        Engine(future_skew_ms=-1)


def test_reads_the_previous_state_format_and_configuration_overrides_it() -> None:
    old = b'{"clockMs":70000,"format":1,"keyGroups":[["payerId"]],"latenessMs":1000,"ruleSeq":3,"rules":[]}'
    detector = Engine.from_bytes(old)
    assert (detector.lateness_ms, detector.future_skew_ms, detector.clock_ms) == (1000, 300_000, 70_000)
    detector = Engine.from_bytes(old, lateness_ms=5, future_skew_ms=7)
    assert (detector.lateness_ms, detector.future_skew_ms) == (5, 7)
    assert Engine.from_bytes(detector.to_bytes()).future_skew_ms == 7


def _count_rule(window_minutes: int = 1) -> Rule:
    spec = {"aggregatorFunctionType": "COUNT", "limit": 100, "windowMinutes": window_minutes}
    return make_rule(spec=spec, limitOperatorType="GREATER")


def test_idle_groups_expire_after_their_horizon_on_the_sweep_clock() -> None:
    h = Harness(lateness_ms=1_000)
    h.rule(_count_rule())
    h.tx(10_000, ingest_ts_ms=10_000, payerId="idle")
    for offset in range(SweepClock.SAMPLES):
        h.tx(70_000, ingest_ts_ms=70_000 + offset, payerId="busy")
    assert h.detector.clock_ms == 70_000
    assert not h.detector.group_expired(PAYER, 10_000)  # the idle group: 10 000 >= 70 000 - 61 000
    for offset in range(SweepClock.SAMPLES):
        h.tx(71_001, ingest_ts_ms=71_001 + offset, payerId="busy")
    assert h.detector.group_expired(PAYER, 10_000)  # 10 000 < 71 001 - 61 000
    assert not h.detector.group_expired(PAYER, 71_001)  # the busy group
    assert h.detector.group_expired(PAYER, None), "a group with no event"
    assert h.detector.group_expired(("payeeId",), 71_001), "a key group no rule has"
    restored = Engine.from_bytes(h.detector.to_bytes())
    assert restored.clock_ms == 71_001 and restored.group_expired(PAYER, 10_000)
    h.rule(None)
    assert h.detector.group_expired(PAYER, 71_001), "no rule left for the key group"


def test_before_the_sweep_clock_has_a_time_only_groups_without_events_expire() -> None:
    h = Harness(lateness_ms=1_000)
    h.rule(_count_rule())
    assert h.detector.clock_ms is None
    assert not h.detector.group_expired(PAYER, 0)
    assert h.detector.group_expired(PAYER, None)


@pytest.mark.parametrize("outlier_ms", [10**15, 0])
def test_one_outlier_does_not_move_the_sweep_clock(outlier_ms: int) -> None:
    h = Harness(lateness_ms=1_000)
    h.rule(_count_rule())
    for offset in range(SweepClock.SAMPLES):
        h.tx(T0 + offset, ingest_ts_ms=T0 + offset)
    before = h.detector.clock_ms
    h.tx(outlier_ms, ingest_ts_ms=outlier_ms, payerId="outlier")  # a far-future ingestion timestamp gets it past
    assert h.detector.clock_ms is not None and abs(h.detector.clock_ms - (before or 0)) <= 1
    assert not h.detector.group_expired(PAYER, T0 + SweepClock.SAMPLES)


def test_the_sweep_clock_is_the_lower_median_of_the_recent_event_times() -> None:
    clock = SweepClock()
    assert clock.now_ms is None
    for sample in (5, 1, 9, 3):
        clock.observe(sample)
    assert clock.now_ms == 3
    for sample in range(100, 100 + SweepClock.SAMPLES):
        clock.observe(sample)
    assert clock.now_ms == 107 and len(clock.samples_ms) == SweepClock.SAMPLES


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (None, "unparseable"),
        (b"\xff", "unparseable"),
        (b"[" * 70 + b"]" * 70, "unparseable"),
        (b"[]", "invalid"),
        (b'{"eventTime":"soon"}', "invalid"),
    ],
)
def test_on_record_rejects_what_does_not_parse(value: bytes | None, error: str) -> None:
    h = Harness()
    h.rule(make_rule())
    outcome = h.detector.on_record(value, T0, 0, 1, h.store, 0)
    assert outcome.rejection is not None and outcome.rejection.error == error
    assert (outcome.alerts, h.store.windows) == ((), {})


def test_lone_surrogates_in_grouping_values_give_utf8_group_keys() -> None:
    h = Harness()
    h.rule(make_rule())
    value = b'{"transactionId":"t","eventTime":1,"payerId":"\\ud800x","paymentAmount":100}'
    outcome = h.detector.on_record(value, T0, 0, 1, h.store, 0)
    assert list(h.store.windows) == ['[["payerId"],["\\ud800x"]]']
    assert outcome.alerts[0].to_message_value().decode("utf-8")
