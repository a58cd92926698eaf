"""kubectl apply of a FraudRule -> operator -> rules topic -> detector -> alert, all real processes."""

from __future__ import annotations

import json
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_localstack.kube import KubeControlPlane
from fraudstream_localstack.operator_component import is_ready, kubectl
from fraudstream_localstack.processes import wait_for
from tests.integration.detector.harness import Script, detector_config, running_detector
from tests.integration.operator.harness import BIG_SPENDER_MANIFEST, operator_in_new_namespace
from tests.kafka_helpers import consume_until, json_of

pytestmark = pytest.mark.integration


def test_applied_fraudrule_raises_an_alert_for_matching_transactions(
    spark: Any, kube: KubeControlPlane, kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    kubeconfig = kube.kubeconfig
    namespace = f"e2e-{uuid.uuid4().hex[:6]}"
    operator, liveness = operator_in_new_namespace(
        kubeconfig, kafka_settings, unique_topics, namespace, tmp_path / "op.log"
    )
    config = detector_config(kafka_settings, unique_topics, tmp_path / "checkpoint")
    try:
        wait_for(lambda: urllib.request.urlopen(liveness, timeout=2).status == 200, 60, "operator liveness")
        manifest = tmp_path / "rule.yaml"
        manifest.write_text(BIG_SPENDER_MANIFEST.format(namespace=namespace))
        kubectl(kubeconfig, "apply", "-f", str(manifest))
        wait_for(
            lambda: is_ready(json.loads(kubectl(kubeconfig, "get", "-f", str(manifest), "-o", "json"))),
            60,
            "FraudRule Ready",
        )
        with running_detector(spark, config) as detector:
            detector.settle(Script(kafka_settings, unique_topics), preexisting=1)  # the rule, published above
            script = Script(kafka_settings, unique_topics, next_ts_ms=int(time.time() * 1000))
            now = int(time.time() * 1000)
            for i, amount in enumerate(["150000", "40000", "10000.01", "5"]):
                script.transaction(
                    {"transactionId": f"e2e-{i}", "eventTime": now + i, "payerId": "alice", "beneficiaryId": "bob",
                     "paymentAmount": amount, "paymentType": "CRD"}
                )  # fmt: skip
            detector.settle(script, preexisting=1)
            # Read while the query runs: settle() returns once the records are evaluated, their alerts maybe in flight.
            alerts = consume_until(kafka_settings, unique_topics.alerts, lambda ms: len(ms) >= 2, timeout_s=60)
    finally:
        operator.stop()
        kubectl(kubeconfig, "delete", "namespace", namespace, "--wait=false")
    got = sorted((json_of(m) for m in alerts), key=lambda a: a["transactionId"])
    assert [(a["ruleId"], a["transactionId"], a["aggregateValue"]) for a in got] == [
        (f"{namespace}/big-spender", "e2e-2", "200000.01"),
        (f"{namespace}/big-spender", "e2e-3", "200005.01"),
    ]
    assert got[0]["groupingKey"] == {"payerId": "alice", "beneficiaryId": "bob"}
    assert got[0]["ruleGeneration"] == 1
