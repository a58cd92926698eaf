"""Broker outages: during an update, Ready=False/KafkaUnavailable while it lasts and Ready=True with the right
generation on the topic once the broker is back; during a delete, the finalizer holds the object until the
tombstone is on the topic; at startup, the operator waits for the broker. Nobody touches the operator in between.
And uninstalling without Kafka as docs/operator.md says: finalizers removed by hand, the stale rule left on the
topic until an operator's startup reconciliation tombstones it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from fraudstream_kafka.settings import KafkaSettings
from fraudstream_localstack.kafka import KafkaBroker
from fraudstream_localstack.operator_component import kubectl
from fraudstream_localstack.processes import wait_for
from tests.integration.operator.conftest import MakeOperator
from tests.integration.operator.harness import (
    BASE_SPEC,
    KOPF_FINALIZER,
    FraudRules,
    latest_by_key,
    read_records,
)

pytestmark = pytest.mark.integration

# Finalizer removal, exactly as docs/operator.md "Uninstalling without Kafka" gives it.
MERGE_PATCH = '{"metadata":{"finalizers":[]}}'
JSON_PATCH = '[{"op":"remove","path":"/metadata/finalizers"}]'
LIST_RULES = '{range .items[*]}{.metadata.namespace} {.metadata.name}{"\\n"}{end}'


def reconcile_errors(reason: str) -> float:
    """Failed reconciliations so far (the operator runs in this process, so its registry is ours)."""
    return REGISTRY.get_sample_value("fraudstream_operator_reconcile_errors_total", {"reason": reason}) or 0.0


@pytest.fixture
def private_broker(tmp_path: Path) -> Iterator[KafkaBroker]:
    """A broker of this test's own, which it may stop and start again on the same ports and data."""
    broker = KafkaBroker(tmp_path / "kafka").start()
    try:
        yield broker
    finally:
        broker.stop()


def test_broker_outage_during_an_update_recovers_on_its_own(
    make_operator: MakeOperator, private_broker: KafkaBroker, rules: FraudRules
) -> None:
    kafka = KafkaSettings(bootstrap=private_broker.bootstrap)
    operator = make_operator(kafka)
    with operator.running():
        rules.create("outage", BASE_SPEC)
        published = rules.wait_ready("outage", generation=1)

        private_broker.stop()
        rules.patch("outage", {"spec": {"limit": 250000}})
        unavailable = rules.wait_condition("outage", "False", "KafkaUnavailable", generation=2)
        assert operator.metric('fraudstream_operator_reconcile_errors_total{reason="KafkaUnavailable"}') >= 1

        private_broker.start()
        recovered = rules.wait_ready("outage", generation=2, timeout_s=120)
        rules.wait_events("outage", "KafkaUnavailable")

    assert unavailable["status"]["published"] == published["status"]["published"]
    assert f"topic {operator.topic}" in unavailable["status"]["conditions"][0]["message"]
    record = latest_by_key(read_records(kafka, operator.topic))[f"{rules.namespace}/outage"]
    assert record.rule is not None
    assert (record.rule["generation"], record.rule["spec"]["limit"]) == (2, "250000")
    assert record.offset == recovered["status"]["published"]["offset"]
    flips = [obj["status"]["conditions"][0]["lastTransitionTime"] for obj in (published, unavailable, recovered)]
    assert flips[0] <= flips[1] <= flips[2]


def test_a_rule_deleted_while_the_broker_is_down_is_tombstoned_once_it_is_back(
    make_operator: MakeOperator, private_broker: KafkaBroker, rules: FraudRules
) -> None:
    kafka = KafkaSettings(bootstrap=private_broker.bootstrap)
    operator = make_operator(kafka)
    key = f"{rules.namespace}/doomed"
    with operator.running():
        rules.create("doomed", BASE_SPEC)
        published = rules.wait_ready("doomed", generation=1)

        private_broker.stop()
        rules.delete("doomed")
        deleting = rules.get("doomed")
        assert deleting is not None and deleting["metadata"].get("deletionTimestamp")
        held = rules.wait_condition("doomed", "False", "KafkaUnavailable", int(deleting["metadata"]["generation"]))
        rules.wait_events("doomed", "KafkaUnavailable")
        retries_before = reconcile_errors("KafkaUnavailable")
        wait_for(lambda: reconcile_errors("KafkaUnavailable") > retries_before, 60, "a retried tombstone")
        still_held = rules.get("doomed")

        private_broker.start()
        rules.wait_gone("doomed", timeout_s=120)
        rules.wait_events("doomed", "Published", "KafkaUnavailable", "Tombstoned")

    assert still_held is not None and KOPF_FINALIZER in still_held["metadata"]["finalizers"]
    assert f"topic {operator.topic}" in held["status"]["conditions"][0]["message"]
    assert held["status"]["published"] == published["status"]["published"], "the last publication stays on record"
    records = [r for r in read_records(kafka, operator.topic) if r.key == key]
    # A send that timed out just as the broker came back may have landed too: a second tombstone is harmless.
    assert [r.value is None for r in records][:2] == [False, True], "the rule record, then its tombstone"
    assert all(r.value is None for r in records[1:])
    assert latest_by_key(records)[key].value is None


def test_an_operator_started_before_the_broker_waits_for_it(
    make_operator: MakeOperator, tmp_path: Path, rules: FraudRules
) -> None:
    broker = KafkaBroker(tmp_path / "late-kafka")
    kafka = KafkaSettings(bootstrap=broker.bootstrap)
    operator = make_operator(kafka)
    errors_before = reconcile_errors("KafkaUnavailable")
    try:
        with operator.running(wait_live=False):
            rules.create("early", BASE_SPEC)
            wait_for(lambda: reconcile_errors("KafkaUnavailable") > errors_before, 60, "a failed startup attempt")
            broker.start()
            operator.wait_live(timeout_s=120)
            rules.wait_ready("early", generation=1)
        record = latest_by_key(read_records(kafka, operator.topic))[f"{rules.namespace}/early"]
    finally:
        broker.stop()
    assert record.rule is not None and record.rule["generation"] == 1


def test_uninstalling_without_kafka_by_removing_finalizers_as_documented(
    make_operator: MakeOperator, private_broker: KafkaBroker, rules: FraudRules, kubeconfig: Path
) -> None:
    kafka = KafkaSettings(bootstrap=private_broker.bootstrap)
    operator = make_operator(kafka)
    ns = rules.namespace
    with operator.running():
        for name in ("merge-patched", "json-patched"):
            rules.create(name, BASE_SPEC)
            rules.wait_ready(name, generation=1)
        private_broker.stop()
    for name in ("merge-patched", "json-patched"):
        rules.delete(name)
        assert rules.get(name) is not None, "held by the finalizer: no operator, no broker"

    # The commands of docs/operator.md, "Uninstalling without Kafka".
    listed = kubectl(kubeconfig, "get", "fraudrules", "-A", "-o", f"jsonpath={LIST_RULES}").splitlines()
    assert {f"{ns} merge-patched", f"{ns} json-patched"} <= set(listed)
    kubectl(kubeconfig, "-n", ns, "patch", "fraudrule", "merge-patched", "--type=merge", "-p", MERGE_PATCH)
    kubectl(kubeconfig, "-n", ns, "patch", "fraudrule", "json-patched", "--type=json", "-p", JSON_PATCH)
    rules.wait_gone("merge-patched")
    rules.wait_gone("json-patched")

    private_broker.start()
    stale = latest_by_key(read_records(kafka, operator.topic))
    assert all(stale[f"{ns}/{name}"].rule is not None for name in ("merge-patched", "json-patched"))
    with operator.running():
        pass  # the startup reconciliation tombstones keys no FraudRule backs
    latest = latest_by_key(read_records(kafka, operator.topic))
    assert [latest[f"{ns}/{name}"].value for name in ("merge-patched", "json-patched")] == [None, None]
