"""Detection never goes silent (issue 11): hostile records, a mistaken rule, late, old and future data.

One stack for the module, all real processes: the kube-apiserver with the FraudRule CRD, the operator publishing the
rules, Kafka, and the detector (`python -m fraudstream_detector`, JVM evaluator under Real-time Mode). Each test
sends hostile input and ordinary transactions of keys of its own, then checks that the ordinary transactions alert
exactly as the oracle says, that the hostile record is on the DLQ with the right error and a bounded detail, and that
the streaming query never restarted.
"""

from __future__ import annotations

import json
import os
import random
import string
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Message, TopicPartition

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import ensure_contract_topics
from fraudstream_localstack.kube import KubeControlPlane
from fraudstream_localstack.operator_component import is_ready, kubectl
from fraudstream_localstack.processes import ManagedProcess, wait_for
from fraudstream_rules.dead_letters import MAX_DETAIL_BYTES
from fraudstream_rules.exceptions import InvalidTransactionError, RejectedRuleMessageError
from fraudstream_rules.model import parse_rule_message
from fraudstream_rules.transactions import parse_transaction
from tests.integration.detector.harness import DetectorEndpoints, Script, detector_process, sample
from tests.integration.operator.harness import fraud_rule, operator_in_new_namespace
from tests.kafka_helpers import consume_until, headers_of, json_of, produce
from tests.unit.rules import oracle

pytestmark = pytest.mark.integration

GOOD_RULES = {
    "payer-sum": {
        "groupingKeyNames": ["payerId"],
        "aggregatorFunctionType": "SUM",
        "aggregateFieldName": "paymentAmount",
        "limitOperatorType": "GREATER",
        "limit": "100",
        "windowMinutes": 1440,
    },
    "beneficiary-max": {
        "groupingKeyNames": ["beneficiaryId"],
        "aggregatorFunctionType": "MAX",
        "aggregateFieldName": "paymentAmount",
        "limitOperatorType": "GREATER_EQUAL",
        "limit": "500",
        "windowMinutes": 60,
    },
}


@dataclass
class Stack:
    kafka: KafkaSettings
    topics: Topics
    kubeconfig: Path
    namespace: str
    detector: ManagedProcess
    detector_url: DetectorEndpoints
    work: Path

    def apply(self, name: str, spec: dict[str, Any], *flags: str) -> None:
        """kubectl apply (with `flags`) of a FraudRule, waiting until it is Ready=True."""
        manifest = self.work / f"{name}.json"
        manifest.write_text(json.dumps(fraud_rule(name, spec, self.namespace)))
        kubectl(self.kubeconfig, "apply", *flags, "-f", str(manifest))
        wait_for(
            lambda: is_ready(json.loads(kubectl(self.kubeconfig, "get", "-f", str(manifest), "-o", "json"))),
            60,
            f"FraudRule {name} Ready",
        )

    def restarts(self) -> float:
        return sample(self.detector_url, "fraud_query_restarts_total")

    def rule_records(self) -> list[oracle.RuleRecord]:
        """Every applicable record on the rules topic so far, as the oracle takes them."""
        messages = read_all(self.kafka, self.topics.rules)
        return [
            oracle.RuleRecord((m.key() or b"").decode(), parse_rule_message(m.value()), m.timestamp()[1])
            for m in messages
            if _applicable(m)
        ]


def _applicable(message: Message) -> bool:
    try:
        parse_rule_message(message.value())
    except RejectedRuleMessageError:
        return False
    return True


def read_all(kafka: KafkaSettings, topic: str) -> list[Message]:
    """Every record of a topic up to its current end. The rules topic is compacted within minutes (segment.ms), so
    the end is each partition's last offset, not a count of records: compaction leaves gaps, never the last one."""
    probe = Consumer(kafka.client_config(**{"group.id": f"probe-{uuid.uuid4().hex}"}))
    try:
        partitions = probe.list_topics(topic, timeout=10).topics[topic].partitions
        watermarks = {p: probe.get_watermark_offsets(TopicPartition(topic, p), timeout=10) for p in partitions}
    finally:
        probe.close()
    last = {p: high - 1 for p, (low, high) in watermarks.items() if high > low}

    def at_end(messages: list[Message]) -> bool:
        seen = {(m.partition(), m.offset()) for m in messages}
        return all((p, offset) in seen for p, offset in last.items())

    return consume_until(kafka, topic, at_end, timeout_s=60)


@pytest.fixture(scope="module")
def stack(
    kube: KubeControlPlane, kafka_settings: KafkaSettings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    work = tmp_path_factory.mktemp("silent")
    suffix = os.urandom(3).hex()
    topics = Topics(f"silent.tx.{suffix}", f"silent.rules.{suffix}", f"silent.alerts.{suffix}", f"silent.dlq.{suffix}")
    ensure_contract_topics(kafka_settings, topics)
    kubeconfig = kube.kubeconfig
    namespace = f"silent-{suffix}"
    operator, _liveness = operator_in_new_namespace(kubeconfig, kafka_settings, topics, namespace, work / "op.log")
    detector, url = detector_process(kafka_settings, topics, work / "checkpoint", work / "detector.log")
    stack = Stack(kafka_settings, topics, kubeconfig, namespace, detector, url, work)
    try:
        for name, spec in GOOD_RULES.items():
            stack.apply(name, spec)

        def rules_loaded() -> bool:
            detector.check_alive()
            return sample(url, "fraud_active_rules") == len(GOOD_RULES)

        wait_for(rules_loaded, 300, "the detector with the rules loaded", interval_s=1)
        yield stack
        assert detector.alive(), "the detector kept running"
        assert stack.restarts() == 0, "the streaming query never restarted"
    finally:
        detector.stop()
        operator.stop()
        kubectl(kubeconfig, "delete", "namespace", namespace, "--wait=false")


class Case:
    """One test's transactions: keys of its own, ingestion timestamps close to now."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.prefix = f"c{uuid.uuid4().hex[:8]}"
        self.script = Script(stack.kafka, stack.topics, next_ts_ms=int(time.time() * 1000))
        self.count = 0

    def tx(self, payer: str, amount: str, event_time_ms: int | None = None, **extra: Any) -> str:
        """An ordinary transaction of this case's payer and beneficiary `payer`; returns its id."""
        self.count += 1
        tx_id = f"{self.prefix}-{self.count}"
        body = {
            "transactionId": tx_id,
            "eventTime": self.script.next_ts_ms + 10 if event_time_ms is None else event_time_ms,
            "payerId": f"{self.prefix}-{payer}",
            "beneficiaryId": f"{self.prefix}-{payer}",
            "paymentAmount": amount,
            **extra,
        }
        self.script.transaction(body)
        return tx_id

    def hostile(self, value: bytes | None) -> int:
        """Produces a hostile record value; its offset."""
        self.script.transaction(value if value is not None else b"")
        return self.script.records[-1].offset

    def expected_alerts(self) -> set[tuple[str, str, str]]:
        replay: list[oracle.Record] = [*self.stack.rule_records()]
        for record in self.script.records:
            try:
                replay.append(parse_transaction(record.value, record.timestamp_ms, record.partition, record.offset))
            except InvalidTransactionError:
                continue
        return {
            key
            for outcome in oracle.run_oracle(replay, lateness_ms=60_000)
            for key in outcome.alerts
            if key[1].startswith(self.prefix)
        }

    def alerts(self, expected: set[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
        """This case's alerts on the topic once they include `expected` (and a moment for any extra)."""

        def mine(messages: list[Message]) -> set[tuple[str, str, str]]:
            alerts = [json_of(m) for m in messages]
            return {
                (a["ruleId"], a["transactionId"], a["aggregateValue"])
                for a in alerts
                if a["transactionId"].startswith(self.prefix)
            }

        got = consume_until(self.stack.kafka, self.stack.topics.alerts, lambda ms: expected <= mine(ms), timeout_s=90)
        return mine(got)

    def dead_letter(self, offset: int) -> tuple[dict[str, str], bytes]:
        """The DLQ record of the transaction at `offset`: its headers and value."""

        def found(messages: list[Message]) -> bool:
            return any(int(headers_of(m)["source.offset"]) == offset for m in messages if self._ours(m))

        messages = consume_until(self.stack.kafka, self.stack.topics.dlq, found, timeout_s=90)
        (message,) = [m for m in messages if self._ours(m) and int(headers_of(m)["source.offset"]) == offset]
        headers = headers_of(message)
        assert len(headers["error.detail"].encode()) <= MAX_DETAIL_BYTES
        return headers, message.value() or b""

    def _ours(self, message: Message) -> bool:
        return headers_of(message).get("source.topic") == self.stack.topics.transactions

    def ordinary(self) -> set[tuple[str, str, str]]:
        """Ordinary transactions of two fresh keys that alert (SUM over 100, MAX at 500); their expected alerts."""
        self.tx("a", "60")
        self.tx("a", "50")
        self.tx("b", "700")
        expected = self.expected_alerts()
        assert len(expected) >= 3, expected
        return expected


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("a 600 KB eventTime string", b'{"eventTime":"' + b"7" * 600_000 + b'","payerId":"x"}', "invalid"),
        ("not UTF-8", b'{"eventTime":1,"payerId":"\xff\xfe"}', "unparseable"),
        ("not an object", b"[1,2,3]", "invalid"),
        ("nesting 100 000 deep", b"[" * 100_000 + b"]" * 100_000, "unparseable"),
        ("a number of 10 000 digits", b'{"eventTime":' + b"9" * 10_000 + b"}", "unparseable"),
        ("an empty value", None, "unparseable"),
        ("no eventTime", b'{"payerId":"x","paymentAmount":"1000"}', "invalid"),
    ],
)
def test_a_hostile_record_is_dead_lettered_and_others_still_alert(
    stack: Stack, name: str, value: bytes | None, error: str
) -> None:
    case = Case(stack)
    offset = case.hostile(value)
    expected = case.ordinary()
    assert case.alerts(expected) == expected
    headers, dead = case.dead_letter(offset)
    assert headers["error"] == error, (name, headers)
    assert dead == (value or b""), "the DLQ keeps the original bytes"
    assert stack.restarts() == 0


def test_a_far_future_event_time_is_dead_lettered_and_moves_no_clock(stack: Stack) -> None:
    case = Case(stack)
    future = case.tx("a", "1", event_time_ms=int(time.time() * 1000) + 10**12)
    offset = case.script.records[-1].offset
    expected = case.ordinary()  # same key "a": not late after the future record
    assert case.alerts(expected) == expected
    headers, _ = case.dead_letter(offset)
    assert headers["error"] == "future" and "ahead of its Kafka timestamp" in headers["error.detail"]
    assert not any(tx_id == future for _, tx_id, _ in expected)


def test_old_transactions_within_the_horizon_are_evaluated_and_beyond_it_late(stack: Stack) -> None:
    case = Case(stack)
    now_ms = int(time.time() * 1000)
    case.tx("a", "60", event_time_ms=now_ms)
    case.tx("a", "50", event_time_ms=now_ms - 3_600_000)  # an hour old: inside the 24-hour window
    case.tx("a", "1", event_time_ms=now_ms + 1)
    case.tx("b", "700", event_time_ms=now_ms)
    case.tx("b", "900", event_time_ms=now_ms - 2 * 3_600_000)  # beyond the 60-minute window + 60 s of lateness...
    late_offset = case.script.records[-1].offset
    expected = case.expected_alerts()
    payer_sum = f"{stack.namespace}/payer-sum"
    assert (payer_sum, f"{case.prefix}-3", "111") in expected, "the hour-old one counts in the window"
    assert case.alerts(expected) == expected
    headers, _ = case.dead_letter(late_offset)  # ...for the beneficiary's group (the payer's 24 h window keeps it)
    assert headers["error"] == "late"
    assert headers["error.detail"].startswith(f'late for group [["beneficiaryId"],["{case.prefix}-b"]] by ')


def test_a_mistaken_rule_skips_only_itself(stack: Stack) -> None:
    typo = {**GOOD_RULES["payer-sum"], "aggregateFieldName": "paymentAmout", "limit": "0"}
    stack.apply("typo-sum", typo)
    wait_for(lambda: sample(stack.detector_url, "fraud_active_rules") == len(GOOD_RULES) + 1, 60, "the typo rule")
    case = Case(stack)
    expected = case.ordinary()
    assert case.alerts(expected) == expected
    rule_id = f"{stack.namespace}/typo-sum"
    wait_for(
        lambda: sample(stack.detector_url, "fraud_rule_skipped_total", rule_id=rule_id, reason="missing") >= 3,
        60,
        "the typo rule's skips counted",
    )
    assert sample(stack.detector_url, "fraud_rule_applied_total", rule_id=rule_id) >= 3
    kubectl(stack.kubeconfig, "delete", "fraudrule", "typo-sum", "-n", stack.namespace)


def test_a_rule_message_of_a_newer_format_is_refused_and_counted(stack: Stack) -> None:
    rule_id = f"{stack.namespace}/from-the-future"
    value = {"formatVersion": 9, "ruleId": rule_id, "generation": 1, "uid": "u", "spec": {"somethingNew": True}}
    before = sample(stack.detector_url, "fraud_rule_messages_rejected_total", reason="unsupported-version")
    produce(stack.kafka, stack.topics.rules, [(rule_id, json.dumps(value))])
    wait_for(
        lambda: sample(stack.detector_url, "fraud_rule_messages_rejected_total", reason="unsupported-version") > before,
        60,
        "the refusal counted",
    )
    case = Case(stack)
    expected = case.ordinary()
    assert case.alerts(expected) == expected
    produce(stack.kafka, stack.topics.rules, [(rule_id, None)])  # tombstone: leave the topic as it was


def test_a_large_transaction_alerts_and_an_alert_too_large_to_write_is_passed_over(stack: Stack) -> None:
    case = Case(stack)
    case.tx("a", "500", note="n" * 900_000)  # ~900 KB: its alert (~900 KB) fits the alerts topic
    # Grouping key and transaction each carry it: ~1.2 MB, more than the topic takes, even lz4-compressed (random
    # letters leave lz4, which has no entropy coding, next to nothing to shorten).
    big_payer = "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=600_000))
    before = sample(stack.detector_url, "fraud_dlq_records_total", error="unwritable")
    case.script.transaction(
        {"transactionId": f"{case.prefix}-big", "eventTime": case.script.next_ts_ms, "payerId": big_payer,
         "beneficiaryId": "x", "paymentAmount": "101"}
    )  # fmt: skip
    expected = case.ordinary() | case.expected_alerts()
    unwritable = {key for key in expected if key[1] == f"{case.prefix}-big" and key[0].endswith("payer-sum")}
    assert unwritable, "the big transaction's payer-sum alert is expected by the oracle"
    assert case.alerts(expected - unwritable) == expected - unwritable
    wait_for(
        lambda: sample(stack.detector_url, "fraud_dlq_records_total", error="unwritable") > before,
        60,
        "the unwritable alert counted",
    )
    assert "passed over an output Kafka refused" in stack.detector.log_tail(), "logged with its coordinates"


def test_a_transaction_that_fits_its_topic_only_compressed_is_alerted_on_and_dead_lettered(stack: Stack) -> None:
    """Its alert and its DLQ record are as large as it is uncompressed, more than the output topics take so."""
    case = Case(stack)
    note = "n" * 3_000_000  # ~3 MB uncompressed, three times what the transactions topic takes
    case.script.transaction(
        {"transactionId": f"{case.prefix}-1", "eventTime": case.script.next_ts_ms, "payerId": f"{case.prefix}-a",
         "beneficiaryId": f"{case.prefix}-a", "paymentAmount": "500", "note": note},
        compressed=True,
    )  # fmt: skip
    expected = case.expected_alerts()
    assert {rule.rsplit("/", 1)[1] for rule, _, _ in expected} == set(GOOD_RULES), expected
    assert case.alerts(expected) == expected
    malformed = b'{"eventTime":"soon","note":"' + note.encode() + b'"}'
    case.script.transaction(malformed, compressed=True)
    headers, dead = case.dead_letter(case.script.records[-1].offset)
    assert headers["error"] == "invalid", headers
    assert dead == malformed


def test_a_blocklist_of_thirty_thousand_payers_alerts_on_listed_payers_only(stack: Stack) -> None:
    """A rule message of ~780 KB: more than kubectl's client-side apply or kopf's default bookkeeping take (see
    docs/operator.md), published by the operator and evaluated by the detector like any other rule."""
    case = Case(stack)
    blocklist = [f"{case.prefix}-blocked-{i}" for i in range(30_000)]
    spec = {
        "groupingKeyNames": ["payerId"],
        "aggregatorFunctionType": "COUNT",
        "aggregateFieldName": "paymentAmount",
        "limitOperatorType": "GREATER_EQUAL",
        "limit": "1",
        "windowMinutes": 5,
        "filters": [{"field": "payerId", "operator": "IN", "value": blocklist}],
    }
    stack.apply("blocklist", spec, "--server-side")
    wait_for(lambda: sample(stack.detector_url, "fraud_active_rules") == len(GOOD_RULES) + 1, 60, "the blocklist")
    listed = [case.tx("blocked-29999", "5"), case.tx("blocked-0", "5")]
    case.tx("free", "5")
    expected = case.expected_alerts()
    rule_id = f"{stack.namespace}/blocklist"
    assert {(rule, tx_id) for rule, tx_id, _ in expected} == {(rule_id, tx_id) for tx_id in listed}, expected
    assert case.alerts(expected) == expected
    kubectl(stack.kubeconfig, "delete", "fraudrule", "blocklist", "-n", stack.namespace)
    wait_for(lambda: sample(stack.detector_url, "fraud_active_rules") == len(GOOD_RULES), 60, "the blocklist gone")
