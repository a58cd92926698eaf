"""Broker outages (issue 11): the detector waits them out, loses no alert, and does not crash-loop.

A broker of its own (the session's serves other tests), stopped and started again on the same ports and data.
"""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import ensure_contract_topics
from fraudstream_localstack.kafka import KafkaBroker
from fraudstream_localstack.processes import ManagedProcess, wait_for
from fraudstream_rules.alerts import alert_id
from tests.integration.detector.harness import COUNT_EVERY_TRANSACTION, Script, detector_process, sample
from tests.kafka_helpers import alert_ids, consume_until, json_of

pytestmark = pytest.mark.integration

TOPICS = Topics("outage.tx", "outage.rules", "outage.alerts", "outage.dlq")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[KafkaBroker]:
    broker = KafkaBroker(tmp_path / "kafka")
    try:
        yield broker
    finally:
        broker.stop()


def alive_through(process: ManagedProcess, seconds: float) -> None:
    """The outage itself: `seconds` long, during which the detector must stay up (checked every half second)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        process.check_alive()
        time.sleep(0.5)


def answers(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:
        return bool(response.status == 200)


def test_outages_of_30_seconds_and_3_minutes_lose_no_alert(broker: KafkaBroker, tmp_path: Path) -> None:
    broker.start()
    kafka = KafkaSettings(bootstrap=broker.bootstrap)
    ensure_contract_topics(kafka, TOPICS)
    script = Script(kafka, TOPICS, next_ts_ms=int(time.time() * 1000))
    script.rule("outage/every-tx", COUNT_EVERY_TRANSACTION)
    detector, url = detector_process(kafka, TOPICS, tmp_path / "checkpoint", tmp_path / "detector.log")
    sent: list[str] = []

    def transactions(count: int) -> None:
        for _ in range(count):
            tx_id = f"t{len(sent)}"
            script.next_ts_ms = max(script.next_ts_ms, int(time.time() * 1000))
            script.transaction({"transactionId": tx_id, "eventTime": script.next_ts_ms, "payerId": f"p{len(sent) % 5}"})
            sent.append(tx_id)

    def all_alerted() -> None:
        expected = {alert_id("outage/every-tx", tx_id) for tx_id in sent}
        got = consume_until(
            kafka,
            TOPICS.alerts,
            lambda ms: expected <= set(alert_ids(ms)),
            timeout_s=300,
        )
        assert set(alert_ids(got)) == expected

    try:
        wait_for(url.ready, 300, "the detector running", 1, watching=[detector])
        transactions(20)
        all_alerted()
        for outage_s in (30, 180):
            broker.stop()
            alive_through(detector, outage_s)
            broker.start()
            transactions(20)
            all_alerted()
            assert answers(f"{url.base}/livez"), "alive after the outage"
        assert detector.alive()
        assert sample(url, "fraud_query_restarts_total") == 0, "no crash loop: the query never restarted"
    finally:
        detector.stop()


def test_a_detector_started_while_the_broker_is_down_waits_and_says_so(broker: KafkaBroker, tmp_path: Path) -> None:
    kafka = KafkaSettings(bootstrap=broker.bootstrap)  # not started yet
    detector, url = detector_process(kafka, TOPICS, tmp_path / "checkpoint", tmp_path / "detector.log")
    try:
        wait_for(
            lambda: f"waiting for Kafka at {kafka.bootstrap}" in detector.log_tail(),
            120,
            "the detector saying it waits for Kafka",
            watching=[detector],
        )
        alive_through(detector, 10)
        assert not url.ready()
        broker.start()
        wait_for(url.ready, 300, "the detector running", 1, watching=[detector])
        script = Script(kafka, TOPICS, next_ts_ms=int(time.time() * 1000))
        script.rule("outage/every-tx", COUNT_EVERY_TRANSACTION)
        wait_for(lambda: sample(url, "fraud_active_rules") == 1, 120, "the rule loaded")
        script.transaction({"transactionId": "after", "eventTime": script.next_ts_ms, "payerId": "p"})
        got = consume_until(kafka, TOPICS.alerts, lambda ms: len(ms) >= 1, timeout_s=120)
        assert [json_of(m)["transactionId"] for m in got] == ["after"]
    finally:
        detector.stop()
