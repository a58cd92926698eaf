"""The evaluator micro-benchmark: what it records, and that its driver evaluates that workload as the reference
engine does (a real JVM running the evaluator's BucketProcessor in Spark's TwsTester)."""

from __future__ import annotations

import json

import pytest

from bench.evaluator_cost import T0_MS, measure, records, summary
from fraudstream_generator.workload import Profile
from fraudstream_rules.engine import Engine, InMemoryGroupStore
from fraudstream_rules.model import parse_rule_message


def test_the_workload_is_the_profiles_rules_then_its_transactions_one_per_step_of_event_time() -> None:
    recorded = list(records(Profile.DEFAULT, rules=50, transactions=20, rate=500.0, payers=1_000))
    rules, transactions = recorded[:50], recorded[50:]
    assert [r["kind"] for r in rules] == ["rule"] * 50
    for rule in rules:
        parsed = parse_rule_message(str(rule["value"]).encode())
        assert parsed is not None and parsed.rule_id == rule["ruleId"]
    assert [t["kind"] for t in transactions] == ["tx"] * 20
    assert [t["offset"] for t in transactions] == list(range(20))
    event_times = [json.loads(str(t["value"]))["eventTime"] for t in transactions]
    assert event_times == [T0_MS + 1_000 + 2 * i for i in range(20)]
    assert all(t["ts"] > e for t, e in zip(transactions, event_times, strict=True))


def test_flink_demo_records_its_six_rules() -> None:
    recorded = list(records(Profile.FLINK_DEMO, rules=50, transactions=3, rate=1_000.0, payers=1_000))
    assert [r["kind"] for r in recorded] == ["rule"] * 6 + ["tx"] * 3


def test_the_summary_leaves_out_the_warm_up_rounds() -> None:
    rounds = [
        {
            "round": i,
            "transactions": 10,
            "cpuNsPerTx": cpu,
            "allocBytesPerTx": 100 + i,
            "outputRows": 1,
            "routeCpuNsPerTx": 10 * cpu,
            "routeAllocBytesPerTx": 50 + i,
            "routedBuckets": 15,
        }
        for i, cpu in enumerate([900, 30, 10, 20])
    ]
    assert summary(rounds, warmup_rounds=1) == {
        "rounds": 3,
        "cpu_ns_per_tx_median": 20,
        "cpu_ns_per_tx_min": 10,
        "cpu_ns_per_tx_max": 30,
        "alloc_bytes_per_tx_median": 102,
        "output_rows": 3,
        "route_cpu_ns_per_tx_median": 200,
        "route_alloc_bytes_per_tx_median": 52,
        "routed_buckets": 45,
    }
    with pytest.raises(SystemExit, match="all of them warm-up"):
        summary(rounds, warmup_rounds=4)


def reference_alerts(recorded: list[dict[str, object]]) -> int:
    """How many alerts the Python reference engine raises for the recorded workload."""
    engine, store, alerts = Engine(), InMemoryGroupStore(), 0
    for record in recorded:
        value, ts = str(record["value"]).encode(), int(record["ts"])  # type: ignore[call-overload]
        if record["kind"] == "rule":
            engine.on_rule(str(record["ruleId"]), parse_rule_message(value), ts)
        else:
            partition, offset = int(record["partition"]), int(record["offset"])  # type: ignore[call-overload]
            alerts += len(engine.on_record(value, ts, partition, offset, store, 0).alerts)
    return alerts


def test_the_driver_measures_every_round_and_alerts_as_the_reference_engine() -> None:
    recorded = list(records(Profile.DEFAULT, rules=50, transactions=3_000, rate=1_000.0, payers=2_000))
    rounds = measure(recorded, buckets=2, per_round=1_000, heap="512m")
    assert [r["round"] for r in rounds] == [0, 1, 2]
    assert all(r["transactions"] == 1_000 and r["cpuNsPerTx"] > 0 and r["allocBytesPerTx"] > 0 for r in rounds)
    assert all(r["routeCpuNsPerTx"] > 0 and r["routeAllocBytesPerTx"] > 0 for r in rounds)
    # Each transaction reaches its reporter and at most both buckets.
    assert all(1_000 <= r["routedBuckets"] <= 2_000 for r in rounds)
    expected = reference_alerts(recorded)
    assert expected > 0
    assert sum(r["outputRows"] for r in rounds) == expected  # in order and valid: alerts are the only output
