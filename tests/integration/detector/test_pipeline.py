"""The real detector query against the real broker: alerts equal the oracle's on a scripted stream."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from fraudstream_detector import pipeline
from fraudstream_detector.checkpoint import log_batches, seeds
from fraudstream_detector.config import DetectorConfig
from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import ensure_contract_topics
from fraudstream_localstack.processes import NotReadyError, wait_for
from fraudstream_rules.engine import group_key
from fraudstream_rules.exceptions import InvalidTransactionError
from fraudstream_rules.model import parse_rule_message
from fraudstream_rules.transactions import parse_transaction
from tests.integration.detector.harness import (
    Produced,
    Script,
    by_label,
    detector_config,
    evaluator_samples,
    running_detector,
)
from tests.kafka_helpers import consume_until, headers_of, json_of
from tests.unit.rules import oracle
from tests.unit.rules.jvm_engine import java_reporter

pytestmark = pytest.mark.integration


def spec(
    keys: list[str], agg: str, field: str | None, op: str, limit: str, minutes: int, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "groupingKeyNames": keys,
        "aggregatorFunctionType": agg,
        "limitOperatorType": op,
        "limit": limit,
        "windowMinutes": minutes,
        **extra,
    }
    if field is not None:
        body["aggregateFieldName"] = field
    return body


def expected_alerts(records: list[Produced], lateness_ms: int) -> set[tuple[str, str, str]]:
    """The oracle's alerts for the produced records, as (ruleId, transactionId, aggregateValue)."""
    replay: list[oracle.Record] = []
    for r in sorted(records, key=lambda r: r.order_key):
        if r.rule:
            replay.append(oracle.RuleRecord((r.key or b"").decode(), parse_rule_message(r.value), r.timestamp_ms))
        else:
            try:
                replay.append(parse_transaction(r.value, r.timestamp_ms, r.partition, r.offset))
            except InvalidTransactionError:
                continue
    return {key for outcome in oracle.run_oracle(replay, lateness_ms) for key in outcome.alerts}


def alert_keys(messages: list[Any]) -> set[tuple[str, str, str]]:
    alerts = [json_of(m) for m in messages]
    return {(a["ruleId"], str(a["transactionId"]), a["aggregateValue"]) for a in alerts}


def test_alerts_equal_the_oracle_through_rule_update_pause_delete_and_new_rule(
    spark: Any, kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    config = detector_config(kafka_settings, unique_topics, tmp_path / "checkpoint", 30_000)
    script = Script(kafka_settings, unique_topics)
    minute = 60_000
    t0 = script.next_ts_ms
    n = 0

    def txs(payers: list[str], amounts: list[str], step_ms: int, kind: str = "CRD") -> None:
        nonlocal n
        for payer, amount in zip(payers, amounts, strict=True):
            n += 1
            script.transaction(
                {
                    "transactionId": f"t{n}",
                    "eventTime": t0 + n * step_ms,
                    "payerId": payer,
                    "beneficiaryId": f"b{n % 3}",
                    "paymentAmount": amount,
                    "paymentType": kind,
                }
            )

    # Rule changes apply to transactions ingested after they are live (CONTRACT section 6): each phase waits for them.
    with running_detector(spark, config) as detector:
        script.rule("ns/sum", spec(["payerId"], "SUM", "paymentAmount", "GREATER", "100", 10))
        script.rule("ns/count", spec(["payerId", "beneficiaryId"], "COUNT", None, "GREATER_EQUAL", "2", 5))
        script.rule("ns/avg", spec(["beneficiaryId"], "AVG", "paymentAmount", "GREATER", "40", 3))
        crd_only = [{"field": "paymentType", "operator": "EQUAL", "value": "CRD"}]
        script.rule("ns/max", spec(["payerId"], "MAX", "paymentAmount", "GREATER_EQUAL", "70", 1, filters=crd_only))
        # Pre-aggregated into 1-minute buckets: its far edge reaches up to a minute further back than ns/sum's.
        script.rule(
            "ns/bucketed", spec(["payerId"], "SUM", "paymentAmount", "GREATER", "60", 2, windowPrecisionSeconds=60)
        )
        detector.settle(script)
        txs(["a", "b", "a", "c", "a", "b"], ["30", "0.10", "40.5", "99", "30", "0.20"], minute // 4)
        detector.settle(script)
        script.rule("ns/sum", spec(["payerId"], "SUM", "paymentAmount", "GREATER", "50", 10), generation=2)
        paused = spec(["payerId"], "MAX", "paymentAmount", "GREATER_EQUAL", "70", 1, filters=crd_only, state="PAUSE")
        script.rule("ns/max", paused, generation=2)
        script.rule("ns/avg", None)
        script.rule("ns/min", spec(["payerId"], "MIN", "paymentAmount", "LESS", "1", 2))
        detector.settle(script)
        txs(["a", "b", "c", "b", "a"], ["25", "0.5", "80", "75", "100"], minute // 3, kind="CSH")
        txs(["a", "b"], ["70", "0.3"], minute // 2)
        detector.settle(script)
        expected = expected_alerts(script.records, lateness_ms=30_000)
        got = consume_until(kafka_settings, unique_topics.alerts, lambda ms: len(ms) >= len(expected), timeout_s=60)

    assert len(expected) >= 8, f"the script is meant to raise alerts of several rules: {expected}"
    assert {rule for rule, _, _ in expected} >= {"ns/sum", "ns/count", "ns/avg", "ns/max", "ns/min", "ns/bucketed"}
    assert alert_keys(got) == expected
    reads = by_label(evaluator_samples(spark, config), "fraud_window_cache_reads_total", "result")
    assert reads["absent"] > 0 and reads["cached"] > 0, f"groups begun, then read from the window cache: {reads}"


def bucket_transactions(spark: Any, config: DetectorConfig) -> dict[str, float]:
    """fraud_bucket_transactions_total by bucket."""
    return by_label(evaluator_samples(spark, config), "fraud_bucket_transactions_total", "bucket")


ROUTING: tuple[str, frozenset[tuple[str, str]]] = ("fraud_routing_active", frozenset())


def received(transactions: list[Produced], key_groups: list[tuple[str, ...]], route: bool) -> dict[str, int]:
    """How many of `transactions` each of 2 buckets should receive: routed, a transaction goes to its reporter and to
    the bucket of each of its groups in `key_groups`; not routed, to both."""
    reached = [
        {java_reporter(r.partition, r.offset, 2)}
        | {zlib.crc32(str(group_key(keys, json.loads(r.value or b""))).encode()) % 2 for keys in key_groups}
        if route
        else {0, 1}
        for r in transactions
    ]
    if route:
        assert sum(len(buckets) for buckets in reached) < 2 * len(transactions), "some reach one bucket only"
    return {b: sum(int(b) in buckets for buckets in reached) for b in ("0", "1")}


@contextlib.contextmanager
def counting_buckets(spark: Any, config: DetectorConfig) -> Iterator[Callable[[dict[str, int]], dict[str, float]]]:
    """Yields `counted(want)`: what each bucket received since entry, once it equals `want` or after 30 s."""
    before = bucket_transactions(spark, config)

    def counts() -> dict[str, float]:
        after = bucket_transactions(spark, config)
        return {b: after.get(b, 0) - before.get(b, 0) for b in ("0", "1")}

    def counted(want: dict[str, int]) -> dict[str, float]:
        # settle waits for each transaction's reporter; the other bucket a transaction reached may count it a
        # moment later. A bucket that received more than it should exceeds `want`, and the caller's assertion says so.
        with contextlib.suppress(NotReadyError):
            wait_for(lambda: counts() == want, 30, "each bucket to count the transactions it received")
        return counts()

    yield counted


@pytest.mark.parametrize("route", [True, False], ids=["routed", "every-bucket"])
def test_each_transaction_reaches_its_reporter_and_the_buckets_of_its_groups(
    spark: Any, kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path, route: bool
) -> None:
    """Routed, a transaction reaches the bucket that reports it and the bucket of its payer's group, and no other;
    not routed, every bucket. Either way the alerts are the oracle's."""
    config = dataclasses.replace(
        detector_config(kafka_settings, unique_topics, tmp_path / "checkpoint"), route_transactions=route
    )
    assert config.routes_transactions is route
    script = Script(kafka_settings, unique_topics)
    t0 = script.next_ts_ms
    with running_detector(spark, config) as detector:
        script.rule("ns/count", spec(["payerId"], "COUNT", None, "GREATER_EQUAL", "3", 10))
        detector.settle(script)
        if route:  # every bucket has caught up with the rules, so every transaction from now on is routed
            wait_for(lambda: evaluator_samples(spark, config).get(ROUTING) == 1, 60, "routing to start")
        with counting_buckets(spark, config) as counted:
            for i in range(40):
                script.transaction({"transactionId": f"t{i}", "eventTime": t0 + i, "payerId": f"p{i % 7}"})
            want = received([r for r in script.records if not r.rule], [("payerId",)], route)
            detector.settle(script)
            counts = counted(want)
        expected = expected_alerts(script.records, lateness_ms=60_000)
        got = consume_until(kafka_settings, unique_topics.alerts, lambda ms: len(ms) >= len(expected), timeout_s=60)

    assert counts == want
    assert len(expected) >= 10, expected
    assert alert_keys(got) == expected


def test_a_query_restarted_in_the_same_jvm_routes_by_the_rules_published_while_it_was_down(
    spark: Any, kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    """The driver restarts a failed query inside its JVM. A rule with a new key group published while the query was
    down applies to the backlog behind it: routing starts over with the new run, so no transaction is routed by what
    the previous run knew."""
    config = dataclasses.replace(
        detector_config(kafka_settings, unique_topics, tmp_path / "checkpoint"), route_transactions=True
    )
    script = Script(kafka_settings, unique_topics)
    with running_detector(spark, config) as detector:
        script.rule("ns/payer-count", spec(["payerId"], "COUNT", None, "GREATER_EQUAL", "1000", 10))
        detector.settle(script)
        wait_for(lambda: evaluator_samples(spark, config).get(ROUTING) == 1, 60, "routing to start")
    wait_for(lambda: evaluator_samples(spark, config).get(ROUTING) == 0, 30, "routing to read 0, the query down")
    # Down: deletions of rules that never were, which the rules source reads first; a rule whose key group no
    # bucket knew; then, past the contract's 5 s margin, a backlog of transactions it alerts on.
    noise = 20_000
    producer = Producer(kafka_settings.client_config(**{"linger.ms": 50}))
    for i in range(noise):
        producer.produce(unique_topics.rules, key=f"ns/never-{i}".encode(), value=None, timestamp=script.next_ts_ms)
        producer.poll(0)
    assert producer.flush(60) == 0
    script.rule("ns/beneficiary-count", spec(["beneficiaryId"], "COUNT", None, "GREATER_EQUAL", "1", 10))
    script.next_ts_ms += 6_000
    t0 = script.next_ts_ms

    def transactions(first: int, count: int) -> None:
        for i in range(first, first + count):
            script.transaction({"transactionId": f"t{i}", "eventTime": t0 + i, "payerId": f"p{i % 5}",
                                "beneficiaryId": f"b{i}"})  # fmt: skip

    transactions(0, 300)
    with running_detector(spark, config) as detector:
        detector.settle(script, preexisting=noise)
        expected = expected_alerts(script.records, lateness_ms=60_000)
        got = consume_until(kafka_settings, unique_topics.alerts, lambda ms: len(ms) >= len(expected), timeout_s=60)
        # The new run routes, with its own directory: by both key groups, to fewer buckets than every one.
        wait_for(lambda: evaluator_samples(spark, config).get(ROUTING) == 1, 60, "routing again in the new run")
        backlog = len(script.records)
        with counting_buckets(spark, config) as counted:
            transactions(300, 40)
            want = received(script.records[backlog:], [("payerId",), ("beneficiaryId",)], True)
            detector.settle(script, preexisting=noise)
            counts = counted(want)

    assert len(expected) == 300
    assert alert_keys(got) == expected
    assert counts == want


def publish_three_rules(script: Script) -> None:
    """A SUM, a MAX and a COUNT rule per payer, live for every transaction the script produces after them."""
    script.rule("ns/sum", spec(["payerId"], "SUM", "paymentAmount", "GREATER", "100", 10))
    script.rule("ns/max", spec(["payerId"], "MAX", "paymentAmount", "GREATER", "150", 10))
    script.rule("ns/count", spec(["payerId"], "COUNT", None, "GREATER_EQUAL", "3", 10))
    script.next_ts_ms += 6_000  # past the contract's 5 s margin


def seed_one_rule_a_batch(spark: Any, config: DetectorConfig, limits: dict[str, int]) -> None:
    """Runs the seeding on config's checkpoint, one rules offset a micro-batch, until it ends by itself."""
    topics = config.topics
    seeding = pipeline.start_seeding(spark, config, max(limits[topics.alerts], limits[topics.dlq]), rules_per_batch=1)
    assert seeding.awaitTermination(240), "the seeding ends by itself"
    assert seeding.exception() is None


def test_a_new_checkpoint_is_seeded_with_the_rules_and_real_time_mode_continues_it(
    spark: Any, kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    """The seeding is micro-batches of the rules, as many as asked for, that end by themselves, committed; the
    Real-time Mode query on its checkpoint evaluates every transaction from the seeding's `latest` on with all the
    rules the seeding put in the state (its own rules source starts after them): the oracle's alerts, each once."""
    checkpoint = tmp_path / "checkpoint"
    config = dataclasses.replace(detector_config(kafka_settings, unique_topics, checkpoint), starting_offsets="latest")
    limits = ensure_contract_topics(kafka_settings, unique_topics)
    script = Script(kafka_settings, unique_topics)
    publish_three_rules(script)
    t0 = script.next_ts_ms
    n = 0

    def txs(payments: list[tuple[str, str]]) -> None:
        nonlocal n
        for payer, amount in payments:
            n += 1
            script.transaction(
                {"transactionId": f"t{n}", "eventTime": t0 + n, "payerId": payer, "paymentAmount": amount}
            )

    txs([("p1", "500")])  # before `latest`: never read
    before_latest = len(script.records)
    assert seeds(checkpoint, config.starting_offsets)
    seed_one_rule_a_batch(spark, config, limits)
    assert log_batches(checkpoint, "commits") == [0, 1, 2], "one micro-batch per rule"
    assert not seeds(checkpoint, config.starting_offsets)
    txs([("p1", "60"), ("p1", "50"), ("p2", "200"), ("p3", "5")])  # between the two queries; alerts: t3, t4
    with running_detector(spark, config):
        txs([("p1", "10"), ("p3", "90"), ("p3", "6"), ("p4", "1")])  # alerts: t6 (p1 at 120), t8 (p3 at 101)
        read = [r for i, r in enumerate(script.records) if r.rule or i >= before_latest]
        expected = expected_alerts(read, lateness_ms=60_000)
        got = consume_until(kafka_settings, unique_topics.alerts, lambda ms: alert_keys(ms) >= expected, timeout_s=240)

    assert {tx for _, tx, _ in expected} == {"t3", "t4", "t6", "t8"}
    assert {rule for rule, _, _ in expected} == {"ns/sum", "ns/max", "ns/count"}, "each seeded rule alerts"
    assert alert_keys(got) == expected
    assert len(got) == len(expected)


def test_a_seeding_in_micro_batches_evaluates_nothing_before_it_has_read_every_rule(
    spark: Any, kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    """Each seeding micro-batch reads one rule here, and the first also reads every transaction (from `earliest`,
    which the detector itself leaves to Real-time Mode): the rules catch-up holds them across the batches until the
    last rule is read, so the alerts are the oracle's with all three rules, each once."""
    checkpoint = tmp_path / "checkpoint"
    config = detector_config(kafka_settings, unique_topics, checkpoint)  # transactions from `earliest`
    limits = ensure_contract_topics(kafka_settings, unique_topics)
    script = Script(kafka_settings, unique_topics)
    publish_three_rules(script)
    t0 = script.next_ts_ms
    payments = [("p1", "60"), ("p1", "50"), ("p2", "200"), ("p3", "5"), ("p1", "10"), ("p3", "90"), ("p3", "6")]
    for n, (payer, amount) in enumerate(payments):
        script.transaction({"transactionId": f"t{n}", "eventTime": t0 + n, "payerId": payer, "paymentAmount": amount})
    expected = expected_alerts(script.records, lateness_ms=60_000)

    seed_one_rule_a_batch(spark, config, limits)
    got = consume_until(kafka_settings, unique_topics.alerts, lambda ms: alert_keys(ms) >= expected, timeout_s=60)

    assert log_batches(checkpoint, "commits") == [0, 1, 2]
    assert {rule for rule, _, _ in expected} == {"ns/sum", "ns/max", "ns/count"}
    assert alert_keys(got) == expected
    assert len(got) == len(expected)


def test_malformed_and_late_transactions_land_in_the_dlq_and_the_job_keeps_running(
    spark: Any, kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    config = detector_config(kafka_settings, unique_topics, tmp_path / "checkpoint", 1_000)
    script = Script(kafka_settings, unique_topics)
    base = script.next_ts_ms
    with running_detector(spark, config) as detector:
        script.rule("ns/sum", spec(["payerId"], "SUM", "paymentAmount", "GREATER", "10", 10))
        detector.settle(script)
        script.transaction(b"\xff not json")
        script.transaction({"transactionId": "no-time", "payerId": "a", "paymentAmount": "5"})
        script.transaction({"transactionId": "nan", "eventTime": base, "payerId": "a", "paymentAmount": "lots"})
        script.transaction({"transactionId": "ok1", "eventTime": base + 10_000, "payerId": "a", "paymentAmount": "5"})
        # Beyond the horizon: the 10-minute window plus 1 s of lateness behind the newest event.
        script.transaction(
            {"transactionId": "late", "eventTime": base - 700_000, "payerId": "a", "paymentAmount": "50"}
        )
        script.transaction({"transactionId": "ok2", "eventTime": base + 10_001, "payerId": "a", "paymentAmount": "6"})
        detector.settle(script)
        dlq = consume_until(kafka_settings, unique_topics.dlq, lambda ms: len(ms) >= 3, timeout_s=60)
        alerts = consume_until(kafka_settings, unique_topics.alerts, lambda ms: len(ms) >= 1, timeout_s=60)
        assert detector.query.isActive

    headers = [headers_of(m) for m in dlq]
    by_offset = {int(h["source.offset"]): (h["error"], h["error.detail"]) for h in headers}
    tx_offsets = [r.offset for r in script.records if not r.rule]
    assert by_offset[tx_offsets[0]] == ("unparseable", "not valid UTF-8 at byte 0")
    assert by_offset[tx_offsets[1]] == ("invalid", "missing eventTime")
    error, detail = by_offset[tx_offsets[4]]
    assert (error, detail.split(" by ")[0]) == ("late", 'late for group [["payerId"],["a"]]')
    assert len(dlq) == 3, "the non-numeric amount skips the rule; it is not dead-lettered"
    assert all(h["source.topic"] == unique_topics.transactions for h in headers)
    assert [m.value() for m in dlq if int(headers_of(m)["source.offset"]) == tx_offsets[0]] == [b"\xff not json"]
    assert {json_of(m)["transactionId"] for m in alerts} == {"ok2"}

    # What the evaluator serves as metrics: each outcome counted once, the alert's latency observed.
    def served(name: str, **labels: str) -> float:
        return evaluator_samples(spark, config).get((name, frozenset(labels.items())), 0.0)

    wait_for(
        lambda: (
            served("fraud_alerts_total", rule_id="ns/sum") >= 1
            and sum(served("fraud_dlq_records_total", error=e) for e in ("unparseable", "invalid", "late")) >= 3
        ),
        30,
        "the evaluator's metrics",
    )
    samples = evaluator_samples(spark, config)
    outcomes = {o: value for o, value in by_label(samples, "fraud_transactions_total", "outcome").items() if value}
    assert outcomes == {"evaluated": 4, "invalid": 2, "late": 1}
    alerts_by_rule = by_label(samples, "fraud_alerts_total", "rule_id")
    assert alerts_by_rule == {"ns/sum": 1}
    assert samples[("fraud_alert_latency_seconds_count", frozenset())] == 1
    dead_letters = {error: v for error, v in by_label(samples, "fraud_dlq_records_total", "error").items() if v}
    assert dead_letters == {"unparseable": 1, "invalid": 1, "late": 1}
    skipped = {tuple(sorted(dict(labels).items())): v for (n, labels), v in samples.items()
               if n == "fraud_rule_skipped_total"}  # fmt: skip
    assert skipped == {(("reason", "non-numeric"), ("rule_id", "ns/sum")): 1}
    assert samples[("fraud_input_rows_total", frozenset())] == len(script.records)
