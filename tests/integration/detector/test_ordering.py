"""Order across partitions against the real broker and Spark (CONTRACT section 6, reorderWaitMs; JVM evaluator)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_localstack.processes import wait_for
from tests.integration.detector.harness import Script, detector_config, evaluator_samples, running_detector
from tests.integration.detector.test_pipeline import spec
from tests.kafka_helpers import consume_until, json_of, reliable_producer

pytestmark = pytest.mark.integration


# The wait is far above the two sends' spread on a loaded machine (each is acknowledged before the next, and the two
# partitions reach the evaluator through different source tasks); it only lengthens the test by itself.
@pytest.mark.parametrize("reorder_wait_ms", [0, 5_000])
def test_a_reorder_wait_evaluates_two_partitions_in_ingestion_order(
    spark: Any, kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path, reorder_wait_ms: int
) -> None:
    """The issue's case: a beneficiary's largest payment is ingested 24 ms before another payment, on the other
    partition, and reaches the detector after it. With a wait the MAX rule counts it for both; without, the later one
    misses it, and the disorder is counted once."""
    checkpoint = tmp_path / "checkpoint"
    config = detector_config(kafka_settings, unique_topics, checkpoint, reorder_wait_ms=reorder_wait_ms)
    script = Script(kafka_settings, unique_topics)
    producer = reliable_producer(kafka_settings)

    def send(partition: int, ts_ms: int, tx_id: str, amount: str) -> None:
        body = {"transactionId": tx_id, "eventTime": ts_ms, "payerId": tx_id, "beneficiaryId": "b"}
        value = json.dumps({**body, "paymentAmount": amount}).encode()
        producer.produce(unique_topics.transactions, value=value, partition=partition, timestamp=ts_ms)
        assert producer.flush(30) == 0

    with running_detector(spark, config) as detector:
        script.rule("ns/max", spec(["beneficiaryId"], "MAX", "paymentAmount", "GREATER_EQUAL", "500", 60))
        detector.settle(script)
        now_ms = int(time.time() * 1000)
        send(0, now_ms, "later", "100")
        if not reorder_wait_ms:  # make sure it is evaluated before the earlier-ingested one arrives
            detector.settle(script, preexisting=1)
        send(1, now_ms - 24, "largest", "600")
        detector.settle(script, preexisting=2)
        expected = {"largest", "later"} if reorder_wait_ms else {"largest"}
        got = consume_until(kafka_settings, unique_topics.alerts, lambda ms: len(ms) >= len(expected), timeout_s=60)
        out_of_order: tuple[str, frozenset[tuple[str, str]]] = ("fraud_out_of_order_total", frozenset())
        wanted = 0 if reorder_wait_ms else 1
        wait_for(lambda: evaluator_samples(spark, config).get(out_of_order, 0) >= wanted, 30, "the out-of-order count")
        counted = evaluator_samples(spark, config).get(out_of_order, 0)
    assert {json_of(m)["transactionId"] for m in got} == expected
    assert counted == wanted
