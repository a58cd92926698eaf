"""The whole pipeline on the secured broker, once over SASL_SSL (SCRAM-SHA-512) and once over mutual TLS: kubectl
apply of a FraudRule -> operator process -> rules topic -> detector process -> alerts, each component as its own
principal with only its ACLs, the topics created by the admin. Then principals without the ACL try to write a rule
and a tombstone to the rules topic: Kafka refuses them, and the detector evaluates exactly as before."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from confluent_kafka import KafkaError, Message

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_localstack.kafka import KafkaBroker
from fraudstream_localstack.kafka_security import ADMIN, NOBODY, KafkaSecurity
from fraudstream_localstack.kube import KubeControlPlane
from fraudstream_localstack.operator_component import is_ready, kubectl
from fraudstream_localstack.processes import ManagedProcess, wait_for
from tests.integration.detector.harness import DetectorEndpoints, detector_process, sample
from tests.integration.operator.harness import BIG_SPENDER_MANIFEST, liveness_answer, operator_in_new_namespace
from tests.integration.security.harness import produce_one, secure_topics
from tests.kafka_helpers import consume_until, json_of, key_of, produce

pytestmark = pytest.mark.integration

# What an attacker would publish to flood analysts: an alert for every transaction.
FORGED_SPEC = {"groupingKeyNames": ["payerId"], "aggregatorFunctionType": "COUNT", "limitOperatorType": "GREATER_EQUAL",
               "limit": 1, "windowMinutes": 60}  # fmt: skip


@dataclass(frozen=True)
class SecuredPipeline:
    """The operator and the detector running against `topics` on the secured broker over `mode`."""

    broker: KafkaBroker
    mode: KafkaSecurity
    topics: Topics
    namespace: str
    detector_url: DetectorEndpoints

    def settings(self, user: str) -> KafkaSettings:
        return self.broker.settings(user, self.mode)

    @property
    def rule_id(self) -> str:
        return f"{self.namespace}/big-spender"


@pytest.fixture(scope="module", params=[KafkaSecurity.SASL_SSL, KafkaSecurity.MTLS], ids=lambda m: m.value)
def pipeline(
    request: pytest.FixtureRequest,
    secured_kafka: KafkaBroker,
    kube: KubeControlPlane,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[SecuredPipeline]:
    mode: KafkaSecurity = request.param
    tmp = tmp_path_factory.mktemp(f"secured-{mode.value}")
    suffix = uuid.uuid4().hex[:6]
    topics = Topics(f"sec.{mode}.tx.{suffix}", f"sec.{mode}.rules.{suffix}", f"sec.{mode}.alerts.{suffix}",
                    f"sec.{mode}.dlq.{suffix}")  # fmt: skip
    secure_topics(secured_kafka, topics)
    namespace = f"sec-{mode.value.replace('_', '-')}-{suffix}"
    kubeconfig = kube.kubeconfig
    operator, liveness = operator_in_new_namespace(
        kubeconfig, secured_kafka.settings("operator", mode), topics, namespace, tmp / "operator.log"
    )
    detector: ManagedProcess | None = None
    manifest = tmp / "rule.yaml"
    manifest.write_text(BIG_SPENDER_MANIFEST.format(namespace=namespace))

    def operator_leads() -> bool:
        operator.check_alive()
        return "rulesManaged" in (liveness_answer(liveness) or {})

    try:
        wait_for(operator_leads, 120, "operator leading", interval_s=0.5)
        kubectl(kubeconfig, "apply", "-f", str(manifest))
        wait_for(
            lambda: is_ready(json.loads(kubectl(kubeconfig, "get", "-f", str(manifest), "-o", "json"))),
            60,
            "FraudRule Ready",
        )
        detector, url = detector_process(
            secured_kafka.settings("detector", mode), topics, tmp / "checkpoint", tmp / "detector.log",
            extra_args=["--metrics-addr", "127.0.0.1"],
        )  # fmt: skip
        wait_for(url.ready, 240, "the detector's query running", interval_s=0.5, watching=[detector])
        yield SecuredPipeline(secured_kafka, mode, topics, namespace, url)
    finally:
        kubectl(kubeconfig, "delete", "-f", str(manifest), "--ignore-not-found", "--timeout=60s")
        if detector is not None:
            detector.stop()
        operator.stop()
        kubectl(kubeconfig, "delete", "namespace", namespace, "--wait=false")


def transaction(tx_id: str, payer: str, amount: str) -> tuple[str, str]:
    """(Kafka key, value): one key for every transaction of these tests, so one partition keeps their order."""
    body = {"transactionId": tx_id, "eventTime": int(time.time() * 1000), "payerId": payer, "beneficiaryId": "bob",
            "paymentAmount": amount, "paymentType": "CRD"}  # fmt: skip
    return "k", json.dumps(body)


def alerts_for(pipeline: SecuredPipeline, tx_ids: set[str]) -> list[dict[str, object]]:
    """Every alert on the alerts topic once all of `tx_ids` have one (read as the admin)."""

    def done(messages: list[Message]) -> bool:
        seen = {json_of(m)["transactionId"] for m in messages}
        return tx_ids <= seen

    messages = consume_until(pipeline.settings(ADMIN), pipeline.topics.alerts, done, timeout_s=120)
    return [json_of(m) for m in messages]


def test_a_fraudrule_raises_alerts_with_every_component_as_its_own_principal(pipeline: SecuredPipeline) -> None:
    run = uuid.uuid4().hex[:6]
    payer = f"alice-{run}"
    sent = [transaction(f"{run}-{i}", payer, amount) for i, amount in enumerate(["150000", "40000", "10000.01"])]
    produce(pipeline.settings("generator"), pipeline.topics.transactions, sent)

    alerts = [a for a in alerts_for(pipeline, {f"{run}-2"}) if str(a["transactionId"]).startswith(run)]

    assert [(a["ruleId"], a["transactionId"], a["aggregateValue"]) for a in alerts] == [
        (pipeline.rule_id, f"{run}-2", "200000.01")
    ]
    assert alerts[0]["groupingKey"] == {"payerId": payer, "beneficiaryId": "bob"}


def test_principals_without_the_acl_write_no_rule_and_no_tombstone_and_detection_is_unchanged(
    pipeline: SecuredPipeline,
) -> None:
    forged = json.dumps({"ruleId": f"{pipeline.namespace}/forged", "generation": 1, "uid": "x", "spec": FORGED_SPEC})
    attempts = {
        (user, what): produce_one(pipeline.settings(user), pipeline.topics.rules, key.encode(), value)
        for user in ("generator", "detector", NOBODY)
        for what, key, value in (
            ("rule", f"{pipeline.namespace}/forged", forged.encode()),
            ("tombstone", pipeline.rule_id, None),
        )
    }
    refused = {attempt: err.code() if err else None for attempt, err in attempts.items()}
    assert refused == dict.fromkeys(attempts, KafkaError.TOPIC_AUTHORIZATION_FAILED)

    # The rules topic holds the operator's record only, and the detector still evaluates that rule alone: a
    # transaction only the forged rule would alert on raises nothing, the real rule still alerts.
    on_topic = consume_until(pipeline.settings(ADMIN), pipeline.topics.rules, lambda ms: len(ms) >= 1, timeout_s=30)
    assert [(key_of(m), m.value() is not None) for m in on_topic] == [(pipeline.rule_id, True)]
    run = uuid.uuid4().hex[:6]
    small = transaction(f"{run}-small", f"carol-{run}", "5")
    big = transaction(f"{run}-big", f"dave-{run}", "250000")
    produce(pipeline.settings("generator"), pipeline.topics.transactions, [small, big])

    alerts = [a for a in alerts_for(pipeline, {f"{run}-big"}) if str(a["transactionId"]).startswith(run)]

    assert [(a["ruleId"], a["transactionId"]) for a in alerts] == [(pipeline.rule_id, f"{run}-big")]
    assert sample(pipeline.detector_url, "fraud_active_rules") == 1
    assert sample(pipeline.detector_url, "fraud_rule_messages_rejected_total", reason="unparseable") == 0


def test_the_detector_cannot_write_to_the_rules_topic_but_can_write_its_outputs(pipeline: SecuredPipeline) -> None:
    detector = pipeline.settings("detector")
    rule_write = produce_one(detector, pipeline.topics.rules, pipeline.rule_id.encode(), b"{}")
    dlq_write = produce_one(detector, pipeline.topics.dlq, b"probe", b"probe")

    assert rule_write is not None and rule_write.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert dlq_write is None
