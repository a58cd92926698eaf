"""Operator restarts: the topic is reconciled against the cluster, orphans are tombstoned, and nothing that is
already on the topic is written again."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from fraudstream_kafka.settings import KafkaSettings
from fraudstream_localstack.processes import wait_for
from tests.integration.operator.harness import BASE_SPEC, FraudRules, OperatorHarness, latest_by_key, read_records
from tests.kafka_helpers import produce

pytestmark = pytest.mark.integration


def unchanged_rule_sends() -> float:
    """Sends skipped because the topic already held the record (the operator runs in this process)."""
    labels = {"kind": "rule", "result": "unchanged"}
    return REGISTRY.get_sample_value("fraudstream_operator_publishes_total", labels) or 0.0


def test_restart_tombstones_orphans_and_duplicates_nothing(
    operator: OperatorHarness, rules: FraudRules, kafka_settings: KafkaSettings
) -> None:
    ns = rules.namespace
    with operator.running():
        for name in ("kept", "deleted-while-down", "force-deleted-while-down", "invalid"):
            rules.create(name, BASE_SPEC)
        for name in ("kept", "deleted-while-down", "force-deleted-while-down", "invalid"):
            rules.wait_ready(name, generation=1)
        rules.patch("invalid", {"spec": {"filters": [{"field": "paymentType", "operator": "IN", "value": 1}]}})
        rules.wait_condition("invalid", "False", "InvalidSpec", generation=2)

    # While the operator is down: a normal delete (held by the finalizer), a delete that bypasses the finalizer,
    # and a key no FraudRule ever had, in this namespace and in one the operator does not watch.
    rules.delete("deleted-while-down")
    rules.patch("force-deleted-while-down", {"metadata": {"finalizers": None}})
    rules.delete("force-deleted-while-down")
    rules.wait_gone("force-deleted-while-down")
    produce(kafka_settings, operator.topic, [(f"{ns}/ghost", b"{}"), ("elsewhere/ghost", b"{}")])
    before = read_records(kafka_settings, operator.topic)
    restart_offset = before[-1].offset + 1
    unchanged_before = unchanged_rule_sends()

    with operator.running():
        rules.wait_gone("deleted-while-down")
        # Startup reconciliation runs before any handler, so the orphans are tombstoned by now; the resume handler
        # of "kept" is the only one that can find its record already on the topic.
        wait_for(lambda: unchanged_rule_sends() >= unchanged_before + 1, 30, "resume of kept")
        rules.wait_condition("invalid", "False", "InvalidSpec", generation=2)
        kept = rules.wait_ready("kept", generation=1)

    after = read_records(kafka_settings, operator.topic)
    appended = sorted((r.key, r.value) for r in after if r.offset >= restart_offset)
    assert appended == [
        (f"{ns}/deleted-while-down", None),
        (f"{ns}/force-deleted-while-down", None),
        (f"{ns}/ghost", None),
    ]
    latest = latest_by_key(after)
    assert latest["elsewhere/ghost"].value == b"{}", "keys of namespaces the operator does not watch are not its own"
    assert latest[f"{ns}/kept"].offset == kept["status"]["published"]["offset"] < restart_offset
    invalid = latest[f"{ns}/invalid"].rule
    assert invalid is not None and invalid["generation"] == 1
