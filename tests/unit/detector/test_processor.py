"""The transformWithState adapter, run in memory with pyspark's TwsTester (no JVM)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pyspark.sql import Row
from pyspark.sql.streaming.tws_tester import TwsTester

from fraudstream_detector.processor import RuleEngineProcessor
from fraudstream_rules.alerts import alert_id
from fraudstream_rules.engine import SweepClock

SUM_OVER_100 = {
    "groupingKeyNames": ["payerId"],
    "aggregatorFunctionType": "SUM",
    "aggregateFieldName": "paymentAmount",
    "limitOperatorType": "GREATER",
    "limit": "100",
    "windowMinutes": 10,
}


def rule_row(offset: int, ts_ms: int, rule_id: str, spec: dict[str, Any] | None) -> Row:
    value = None if spec is None else json.dumps({"ruleId": rule_id, "generation": 1, "uid": "u", "spec": spec})
    return Row(
        rule=True,
        key=rule_id.encode(),
        value=value.encode() if value else None,
        topic="rules",
        partition=0,
        offset=offset,
        timestamp_ms=ts_ms,
        bucket=0,
    )


def tx_row(offset: int, ts_ms: int, tx: dict[str, Any] | bytes) -> Row:
    value = tx if isinstance(tx, bytes) else json.dumps(tx).encode()
    return Row(
        rule=False,
        key=b"k",
        value=value,
        topic="transactions",
        partition=0,
        offset=offset,
        timestamp_ms=ts_ms,
        bucket=0,
    )


def tx(i: int, payer: str, amount: str, event_time_ms: int) -> dict[str, Any]:
    return {"transactionId": f"t{i}", "eventTime": event_time_ms, "payerId": payer, "paymentAmount": amount}


def by_kind(rows: list[Row], kind: str) -> list[Row]:
    return [r for r in rows if r.kind == kind]


def test_state_carries_rules_and_windows_across_batches() -> None:
    tester = TwsTester(RuleEngineProcessor(buckets=1, lateness_ms=60_000), timeMode="ProcessingTime")
    first = tester.test(0, [rule_row(0, 1_000, "ns/sum", SUM_OVER_100), tx_row(0, 1_010, tx(1, "p", "60", 5_000))])
    assert by_kind(first, "alert") == []
    assert observations(first)["transactions"] == {"evaluated": 1}
    assert observations(first)["activeRules"] == 1

    second = tester.test(0, [tx_row(1, 1_020, tx(2, "p", "50.5", 6_000)), tx_row(2, 1_030, tx(3, "q", "500", 6_000))])
    alerts = [json.loads(r.value) for r in by_kind(second, "alert")]
    assert [(a["alertId"], a["aggregateValue"]) for a in alerts] == [
        (alert_id("ns/sum", "t2"), "110.5"),  # 60 from the first batch + 50.5
        (alert_id("ns/sum", "t3"), "500"),  # q's own window
    ]


def test_rows_of_a_batch_are_evaluated_in_timestamp_order_whatever_their_arrival_order() -> None:
    tester = TwsTester(RuleEngineProcessor(buckets=1, lateness_ms=60_000), timeMode="ProcessingTime")
    rows = [tx_row(1, 2_000, tx(1, "p", "150", 5_000)), rule_row(0, 1_000, "ns/sum", SUM_OVER_100)]
    alerts = by_kind(tester.test(0, rows), "alert")
    assert [json.loads(r.value)["transactionId"] for r in alerts] == ["t1"]


def observations(rows: list[Row]) -> dict[str, Any]:
    (stats,) = by_kind(rows, "stats")
    parsed: dict[str, Any] = json.loads(stats.observations)
    return parsed


def test_unusable_transactions_go_to_the_dlq_and_a_non_numeric_amount_skips_only_its_rule() -> None:
    tester = TwsTester(RuleEngineProcessor(buckets=1, lateness_ms=60_000), timeMode="ProcessingTime")
    rows = [
        rule_row(0, 1_000, "ns/sum", SUM_OVER_100),
        tx_row(1, 1_010, b"{not json"),
        tx_row(2, 1_020, {"transactionId": "t2", "payerId": "p", "paymentAmount": "1"}),
        tx_row(3, 1_030, tx(3, "p", "abc", 5_000)),
        tx_row(4, 1_040, tx(4, "p", "1", 10**9)),
    ]
    out = tester.test(0, rows)
    dlq = by_kind(out, "dlq")
    assert [(r.source_offset, r.error, r.detail) for r in dlq] == [
        (1, "unparseable", "not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        (2, "invalid", "missing eventTime"),
        (4, "future", "eventTime 1000000000 is 999998960 ms ahead of its Kafka timestamp 1040 "
         "(allowed future skew 300000 ms)"),
    ]  # fmt: skip
    assert all(r.source_topic == "transactions" and r.source_partition == 0 for r in dlq)
    observed = observations(out)
    assert observed["transactions"] == {"invalid": 2, "future": 1, "evaluated": 1}
    assert (observed["applied"], observed["skipped"]) == ({"ns/sum": 1}, [["ns/sum", "non-numeric", 1]])


def test_a_refused_rule_message_changes_nothing_and_is_counted() -> None:
    tester = TwsTester(RuleEngineProcessor(buckets=1, lateness_ms=60_000), timeMode="ProcessingTime")
    newer = json.dumps({"formatVersion": 9, "ruleId": "ns/sum", "generation": 2, "uid": "u", "spec": {}}).encode()
    rows = [
        rule_row(0, 1_000, "ns/sum", SUM_OVER_100),
        Row(rule=True, key=b"ns/sum", value=newer, topic="rules", partition=0, offset=1, timestamp_ms=1_001, bucket=0),
        tx_row(2, 1_010, tx(2, "p", "500", 5_000)),
    ]
    out = tester.test(0, rows)
    assert observations(out)["ruleMessagesRejected"] == {"unsupported-version": 1}
    assert [json.loads(r.value)["ruleId"] for r in by_kind(out, "alert")] == ["ns/sum"]


def test_a_late_transaction_is_a_late_part_with_its_group_and_is_not_evaluated_there() -> None:
    tester = TwsTester(RuleEngineProcessor(buckets=1, lateness_ms=1_000), timeMode="ProcessingTime")
    rows = [
        rule_row(0, 1_000, "ns/sum", SUM_OVER_100),
        tx_row(1, 1_000_010, tx(1, "p", "10", 1_000_000)),
        tx_row(2, 1_000_020, tx(2, "p", "500", 1_000_000 - 602_000)),  # window 10 min + lateness 1 s behind
    ]
    out = tester.test(0, rows)
    (late,) = by_kind(out, "late")
    assert (late.source_offset, late.error) == (2, "late")
    assert late.detail.startswith('late for group [["payerId"],["p"]] by 1000 ms')
    assert by_kind(out, "alert") == [] and by_kind(out, "dlq") == []


def test_a_bucket_evaluates_only_the_key_groups_it_owns() -> None:
    rows = [rule_row(0, 1_000, "ns/sum", SUM_OVER_100)] + [
        tx_row(i, 1_000 + i, tx(i, f"payer-{i}", "500", 5_000)) for i in range(1, 21)
    ]
    alerts = []
    for bucket in (0, 1):
        tester = TwsTester(RuleEngineProcessor(buckets=2, lateness_ms=60_000), timeMode="ProcessingTime")
        alerts.append({json.loads(r.value)["transactionId"] for r in by_kind(tester.test(bucket, rows), "alert")})
    assert alerts[0] and alerts[1], "both buckets own some payers"
    assert alerts[0].isdisjoint(alerts[1])
    assert alerts[0] | alerts[1] == {f"t{i}" for i in range(1, 21)}


def test_a_worker_without_the_cache_restores_the_same_state_from_the_store() -> None:
    from fraudstream_detector import state

    batches = [
        [rule_row(0, 1_000, "ns/sum", SUM_OVER_100)]
        + [tx_row(i, 1_000 + i, tx(i, "p", "30", 5_000 + i)) for i in (1, 2)],
        [tx_row(i, 1_000 + i, tx(i, "p", "30", 5_000 + i)) for i in (3, 4, 5)],
        [tx_row(6, 1_006, tx(6, "p", "1", 5_006))],
    ]

    def run(drop_cache: bool) -> list[tuple[str, str]]:
        state._CACHE.clear()
        tester = TwsTester(RuleEngineProcessor(buckets=1, lateness_ms=60_000), timeMode="ProcessingTime")
        alerts = []
        for rows in batches:
            if drop_cache:
                state._CACHE.clear()
            alerts += [(json.loads(r.value)["transactionId"], json.loads(r.value)["aggregateValue"])
                       for r in by_kind(tester.test(0, rows), "alert")]  # fmt: skip
        return alerts

    assert run(drop_cache=False) == run(drop_cache=True) == [("t4", "120"), ("t5", "150"), ("t6", "151")]


def test_a_cache_left_behind_by_a_failed_batch_is_not_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    from fraudstream_detector import processor, state

    state._CACHE.clear()
    tester = TwsTester(RuleEngineProcessor(buckets=1, lateness_ms=60_000), timeMode="ProcessingTime")
    tester.test(0, [rule_row(0, 1_000, "ns/sum", SUM_OVER_100)])
    real = processor.process_records

    def dies_midway(detector: Any, records: Any, *args: Any) -> Any:
        detector.on_rule("ns/sum", None, 2_000)  # a change the store will never see...
        raise RuntimeError("executor lost")  # ...because the batch dies

    monkeypatch.setattr(processor, "process_records", dies_midway)
    with pytest.raises(RuntimeError, match="executor lost"):
        tester.test(0, [tx_row(1, 2_001, tx(1, "p", "500", 5_000))])
    monkeypatch.setattr(processor, "process_records", real)

    retried = tester.test(0, [tx_row(1, 2_001, tx(1, "p", "500", 5_000))])
    assert [json.loads(r.value)["ruleId"] for r in by_kind(retried, "alert")] == ["ns/sum"]


def test_the_sweep_timer_drops_groups_idle_past_their_retention() -> None:
    from fraudstream_detector import state

    state._CACHE.clear()
    minute = 60_000
    one_minute_count = {
        "groupingKeyNames": ["payerId"],
        "aggregatorFunctionType": "COUNT",
        "limitOperatorType": "GREATER",
        "limit": 100,
        "windowMinutes": 1,
    }
    processor = RuleEngineProcessor(buckets=1, lateness_ms=1_000, sweep_interval_ms=minute)
    tester = TwsTester(processor, timeMode="ProcessingTime")
    tester.test(0, [rule_row(0, 1, "ns/count", one_minute_count), tx_row(1, 2, tx(1, "idle", "1", 10_000))])
    tester.test(0, [tx_row(2, 3, tx(2, "busy", "1", 70_000))])
    assert len(tester.peekMapState("groups", 0)) == 2
    tester.setProcessingTime(minute)  # the clock (70 000) is not yet past idle's retention (10 000 + 61 000)
    assert len(tester.peekMapState("groups", 0)) == 2
    # The sweep clock is the median of the recent event times: it moves once most of them have.
    tester.test(0, [tx_row(3 + i, 4 + i, tx(3 + i, "busy", "1", 71_001)) for i in range(SweepClock.SAMPLES)])
    tester.setProcessingTime(2 * minute)
    assert [key[0] for key in tester.peekMapState("groups", 0)] == ['[["payerId"],["busy"]]']


def test_two_detectors_in_one_worker_never_share_a_bucket_cache() -> None:
    """A Python worker outlives queries: a detector whose stored generation equals the one another detector's
    cache of the same bucket stands at must still see its own rules, not the other's."""
    with_rule = TwsTester(RuleEngineProcessor(buckets=1, lateness_ms=60_000), timeMode="ProcessingTime")
    with_rule.test(0, [rule_row(0, 1_000, "ns/sum", SUM_OVER_100)])  # its bucket 0 stands at generation 1
    other = TwsTester(RuleEngineProcessor(buckets=1, lateness_ms=60_000), timeMode="ProcessingTime")
    other.test(0, [tx_row(0, 1_000, tx(1, "q", "1", 5_000))])  # and so does this one's, with no rule
    rows = with_rule.test(0, [tx_row(1, 1_010, tx(2, "p", "500", 6_000))])
    assert [json.loads(r.value)["alertId"] for r in by_kind(rows, "alert")] == [alert_id("ns/sum", "t2")]
