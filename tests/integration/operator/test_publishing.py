"""The operator against the real API server and the real broker: every FraudRule change reaches the rules topic,
and the FraudRule's status says so only once it did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fraudstream_kafka.settings import KafkaSettings
from fraudstream_localstack.operator_component import kubectl
from fraudstream_operator.exceptions import PublishRejectedError
from fraudstream_operator.rules_producer import RulesProducer
from fraudstream_rules.model import parse_rule_message
from tests.integration.operator.harness import (
    BASE_SPEC,
    FraudRules,
    OperatorHarness,
    fraud_rule,
    http_get,
    latest_by_key,
    read_records,
)

pytestmark = pytest.mark.integration


def test_create_publishes_the_rule_and_reports_ready(
    operator: OperatorHarness, rules: FraudRules, kafka_settings: KafkaSettings
) -> None:
    with operator.running():
        created = rules.create("big-transfers", {**BASE_SPEC, "limit": "200000.00"})
        obj = rules.wait_ready("big-transfers", generation=1)
        key = f"{rules.namespace}/big-transfers"
        record = latest_by_key(read_records(kafka_settings, operator.topic))[key]

        assert record.offset == obj["status"]["published"]["offset"]
        assert obj["status"]["published"] == {
            "generation": 1,
            "topic": operator.topic,
            "partition": 0,
            "offset": record.offset,
        }
        assert record.rule == {
            "formatVersion": 1,
            "ruleId": key,
            "generation": 1,
            "uid": created["metadata"]["uid"],
            "spec": {
                "state": "ACTIVE",
                "groupingKeyNames": ["beneficiaryId", "payerId"],
                "aggregatorFunctionType": "SUM",
                "aggregateFieldName": "paymentAmount",
                "limitOperatorType": "GREATER",
                "limit": "200000",
                "windowMinutes": 1440,
                "filters": [],
            },
        }
        rule = parse_rule_message(record.value)
        assert rule is not None and rule.rule_id == key
        rules.wait_events("big-transfers", "Published")
        assert isinstance(json.loads(http_get(operator.liveness_url))["rulesManaged"], int)
        assert operator.metric('fraudstream_operator_publishes_total{kind="rule",result="delivered"}') >= 1
        assert operator.metric("fraudstream_operator_rules_managed ") == 1


def test_update_publishes_the_new_generation(
    operator: OperatorHarness, rules: FraudRules, kafka_settings: KafkaSettings
) -> None:
    with operator.running():
        rules.create("transfers", BASE_SPEC)
        first = rules.wait_ready("transfers", generation=1)
        rules.patch("transfers", {"spec": {"limit": 300000, "windowMinutes": 60}})
        second = rules.wait_ready("transfers", generation=2)

    record = latest_by_key(read_records(kafka_settings, operator.topic))[f"{rules.namespace}/transfers"]
    assert record.rule is not None
    assert (record.rule["generation"], record.rule["spec"]["limit"], record.rule["spec"]["windowMinutes"]) == (
        2,
        "300000",
        60,
    )
    assert record.offset == second["status"]["published"]["offset"] > first["status"]["published"]["offset"]
    first_ready, second_ready = (obj["status"]["conditions"][0] for obj in (first, second))
    assert second_ready["lastTransitionTime"] == first_ready["lastTransitionTime"], "Ready stayed True"


def test_pause_is_published_as_a_spec_change(
    operator: OperatorHarness, rules: FraudRules, kafka_settings: KafkaSettings
) -> None:
    with operator.running():
        rules.create("pausable", BASE_SPEC)
        rules.wait_ready("pausable", generation=1)
        rules.patch("pausable", {"spec": {"state": "PAUSE"}})
        rules.wait_ready("pausable", generation=2)

    record = latest_by_key(read_records(kafka_settings, operator.topic))[f"{rules.namespace}/pausable"]
    assert record.rule is not None
    assert (record.rule["generation"], record.rule["spec"]["state"]) == (2, "PAUSE")


def test_delete_writes_a_tombstone_and_releases_the_object(
    operator: OperatorHarness, rules: FraudRules, kafka_settings: KafkaSettings
) -> None:
    with operator.running():
        rules.create("short-lived", BASE_SPEC)
        rules.wait_ready("short-lived", generation=1)
        rules.delete("short-lived")
        rules.wait_gone("short-lived")
        assert operator.metric("fraudstream_operator_rules_managed ") == 0

    records = [r for r in read_records(kafka_settings, operator.topic) if r.key == f"{rules.namespace}/short-lived"]
    assert [r.value is None for r in records] == [False, True]


def test_a_spec_only_the_rule_model_refuses_is_never_published(
    operator: OperatorHarness, rules: FraudRules, kafka_settings: KafkaSettings
) -> None:
    """CEL cannot see filter values, so `IN` with a single value passes the API server and fails in the model."""
    bad_filter = {"filters": [{"field": "paymentType", "operator": "IN", "value": "CSH"}]}
    with operator.running():
        rules.create("bad-from-start", {**BASE_SPEC, **bad_filter})
        rules.create("bad-later", BASE_SPEC)
        failed = rules.wait_condition("bad-from-start", "False", "InvalidSpec", generation=1)
        rules.wait_ready("bad-later", generation=1)
        rules.patch("bad-later", {"spec": bad_filter})
        later = rules.wait_condition("bad-later", "False", "InvalidSpec", generation=2)
        rules.wait_events("bad-later", "InvalidSpec")
        rules.patch("bad-later", {"spec": {"filters": [{"field": "paymentType", "operator": "IN", "value": ["CSH"]}]}})
        fixed = rules.wait_ready("bad-later", generation=3)

    message = failed["status"]["conditions"][0]["message"]
    assert "spec.filters[0].value must be a non-empty list for operator IN" in message
    assert later["status"]["published"]["generation"] == 1, "the last valid generation stays published"
    generations = [
        r.rule["generation"] if r.rule else None
        for r in read_records(kafka_settings, operator.topic)
        if r.key == f"{rules.namespace}/bad-later"
    ]
    assert generations == [1, 3]
    assert fixed["status"]["published"]["generation"] == 3
    assert f"{rules.namespace}/bad-from-start" not in latest_by_key(read_records(kafka_settings, operator.topic))


def test_a_record_larger_than_the_client_sends_is_refused_in_produce_as_publish_rejected(
    operator: OperatorHarness, kafka_settings: KafkaSettings
) -> None:
    producer = RulesProducer(kafka_settings, operator.topic, timeout_s=5)
    try:
        with operator.running():  # the operator makes its rules topic at startup
            # librdkafka refuses it in produce() (message.max.bytes, 1 000 000): nothing was sent, and what a retry
            # would meet is the record's size, not an outage, so it is PublishRejected, not KafkaUnavailable.
            with pytest.raises(PublishRejectedError, match="client refused"):
                producer.send("huge/rule", b"x" * 1_100_000)
            assert producer.send("huge/rule", None).topic == operator.topic  # the producer goes on sending
    finally:
        producer.close()


def test_a_spec_larger_than_all_annotations_may_be_is_published_and_reported(
    operator: OperatorHarness, rules: FraudRules, kafka_settings: KafkaSettings, kubeconfig: Path, tmp_path: Path
) -> None:
    """The API server bounds a FraudRule at its request size, not at the 256 KiB that all of an object's
    annotations may hold together, so the operator's own bookkeeping must not grow with the spec.
    As docs/operator.md says, such a rule is applied with `kubectl apply --server-side`."""
    payers = [f"payer-{i:07d}" for i in range(30_000)]  # about 450 KiB of spec
    blocklist = {**BASE_SPEC, "filters": [{"field": "payerId", "operator": "IN", "value": payers}]}
    manifest = tmp_path / "blocklist.json"

    def apply(spec: dict[str, Any], *flags: str) -> None:
        manifest.write_text(json.dumps(fraud_rule("blocklist", spec, rules.namespace)))
        kubectl(kubeconfig, "apply", *flags, "-f", str(manifest))

    with pytest.raises(RuntimeError, match="Too long"):  # client-side apply keeps a copy in an annotation
        apply(blocklist)
    with operator.running():
        apply(blocklist, "--server-side")
        created = rules.wait_ready("blocklist", generation=1)
        apply({**blocklist, "limit": 100}, "--server-side")
        updated = rules.wait_ready("blocklist", generation=2)
        rules.delete("blocklist")
        rules.wait_gone("blocklist")

    annotations = created["metadata"].get("annotations") or {}
    assert sum(len(k) + len(v) for k, v in annotations.items()) < 1024
    assert updated["status"]["published"]["generation"] == 2
    records = [r for r in read_records(kafka_settings, operator.topic) if r.key == f"{rules.namespace}/blocklist"]
    assert [r.rule["generation"] if r.rule else None for r in records] == [1, 2, None]
    first = records[0].rule
    assert first is not None and first["spec"]["filters"][0]["value"] == payers


@pytest.mark.parametrize(
    ("filters", "reason"),
    [
        ([{"field": "paymentType", "operator": "IN", "value": "CSH"}], "InvalidSpec"),
        # a rule message of ~1.1 MB: more than the producer sends (message.max.bytes, 1 000 000)
        (
            [{"field": "payerId", "operator": "IN", "value": [f"payer-{i:07d}" for i in range(75_000)]}],
            "PublishRejected",
        ),
    ],
    ids=["invalid", "too-large"],
)
def test_a_rule_that_cannot_be_published_under_a_deleted_ones_name_retires_the_deleted_ones_rule(
    operator: OperatorHarness,
    rules: FraudRules,
    kafka_settings: KafkaSettings,
    filters: list[dict[str, Any]],
    reason: str,
) -> None:
    """The first object is deleted without its delete handler (its finalizer removed by hand while the operator is
    down), so its rule is still on the topic when a second object of the same name, whose rule cannot be
    published, appears."""
    with operator.running():
        rules.create("recreated", BASE_SPEC)
        first = rules.wait_ready("recreated", generation=1)
    rules.patch("recreated", {"metadata": {"finalizers": None}})
    rules.delete("recreated")
    rules.wait_gone("recreated")
    second = rules.create("recreated", {**BASE_SPEC, "filters": filters})
    with operator.running():
        rules.wait_condition("recreated", "False", reason, generation=1)
        rules.wait_events("recreated", "Tombstoned")

    records = [r for r in read_records(kafka_settings, operator.topic) if r.key == f"{rules.namespace}/recreated"]
    assert [r.rule["uid"] if r.rule else None for r in records] == [first["metadata"]["uid"], None]
    assert second["metadata"]["uid"] != first["metadata"]["uid"]
