"""The JVM evaluator on Spark executors (issue 13): a detector whose tasks run in executor JVMs, not in the driver.

Spark's `local-cluster[workers,cores,memory]` master starts a standalone worker that launches each executor as a JVM
of its own, as Kubernetes runs them in executor pods. The executor serves the evaluation metrics itself (its
`fraud_evaluator_info` names it), and the driver's liveness reads the evaluated positions from it.
"""

from __future__ import annotations

import math
import time
import urllib.request
from pathlib import Path

import pytest

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import ensure_contract_topics
from fraudstream_localstack.processes import wait_for
from tests.integration.detector.harness import DetectorEndpoints, Script, detector_process, samples_at
from tests.kafka_helpers import consume_until, json_of

pytestmark = pytest.mark.integration

SUM_OVER_100 = {
    "groupingKeyNames": ["payerId"],
    "aggregatorFunctionType": "SUM",
    "aggregateFieldName": "paymentAmount",
    "limitOperatorType": "GREATER",
    "limit": 100,
    "windowMinutes": 60,
}
# One worker with one executor of 8 cores: Real-time Mode runs every stage at once (a slot per transactions
# partition, the rules partition, each bucket and each report partition).
MASTER = "local-cluster[1,8,1536]"


def evaluator_sample(endpoints: DetectorEndpoints, name: str, **labels: str) -> float | None:
    """A sample of the evaluator's endpoint alone (None when it serves none such)."""
    return samples_at(endpoints.evaluator_metrics).get((name, frozenset(labels.items())))


def test_the_evaluator_runs_in_an_executor_jvm_which_serves_its_metrics(
    kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    ensure_contract_topics(kafka_settings, unique_topics)
    script = Script(kafka_settings, unique_topics, next_ts_ms=int(time.time() * 1000) - 60_000)
    script.rule("exec/sum", SUM_OVER_100)
    for n, amount in enumerate((60, 50, 10)):
        script.transaction({"transactionId": f"t{n}", "eventTime": script.next_ts_ms, "payerId": "p1",
                            "paymentAmount": amount})  # fmt: skip
    args = ["--master", MASTER, "--checkpoint-interval", "10 seconds", "--metrics-addr", "127.0.0.1"]
    detector, endpoints = detector_process(
        kafka_settings, unique_topics, tmp_path / "checkpoint", tmp_path / "detector.log", extra_args=args
    )
    try:
        got = consume_until(kafka_settings, unique_topics.alerts, lambda ms: len(ms) >= 2, timeout_s=300)
        assert sorted(json_of(m)["transactionId"] for m in got) == ["t1", "t2"]
        # The executor's JVM serves the evaluation metrics, not the driver's.
        assert evaluator_sample(endpoints, "fraud_evaluator_info", executor_id="0") == 1
        wait_for(
            lambda: evaluator_sample(endpoints, "fraud_alerts_total", rule_id="exec/sum") == 2,
            60,
            "the executor counting both alerts",
            interval_s=0.5,
        )
        assert evaluator_sample(endpoints, "fraud_alert_latency_seconds_count") == 2
        assert evaluator_sample(endpoints, "fraud_transactions_total", outcome="evaluated") == 3
        with urllib.request.urlopen(f"{endpoints.base}/metrics", timeout=5) as response:
            driver = response.read().decode()
        assert "fraud_alerts" not in driver, "the driver serves no idle copy of the evaluation metrics"

        # The driver reads the executor's evaluated positions: its input lag becomes a number, and input waits on
        # no partition.
        def lag_known() -> bool:
            detector.check_alive()
            values = samples_at(f"{endpoints.base}/metrics")
            lag, pending = (
                values[(name, frozenset())] for name in ("fraud_input_lag_seconds", "fraud_input_pending_records")
            )
            return not math.isnan(lag) and pending == 0

        wait_for(lag_known, 60, "the driver to read the executor's progress", interval_s=1)
        with urllib.request.urlopen(f"{endpoints.base}/livez", timeout=5) as response:
            assert response.status == 200
    finally:
        detector.stop()
