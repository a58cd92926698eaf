"""kill -9 of the detector mid-stream loses no alert, and a replayed alert keeps its alertId."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import contract_topics, ensure_topics
from fraudstream_localstack.processes import ManagedProcess
from fraudstream_rules.alerts import alert_id
from tests.integration.detector.harness import COUNT_EVERY_TRANSACTION, Script, detector_process
from tests.kafka_helpers import alert_ids, consume_until

pytestmark = pytest.mark.integration


# Its buckets must survive the crash: the transactions after it count those before.
BUCKETED_COUNT = {**COUNT_EVERY_TRANSACTION, "limit": 3, "windowPrecisionSeconds": 60}


def _detector(kafka: KafkaSettings, topics: Topics, checkpoint: Path, log: Path) -> ManagedProcess:
    return detector_process(kafka, topics, checkpoint, log)[0]


# Under Real-time Mode the restarted query reads the transactions backlog and the rules topic concurrently; the
# rules catch-up barrier (RulesCatchUp.java) is what keeps the backlog from being evaluated before its rule.
def test_kill_9_mid_stream_then_restart_loses_no_alert(
    kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    ensure_topics(kafka_settings, contract_topics(unique_topics))
    script = Script(kafka_settings, unique_topics)
    script.rule("crash/every-tx", COUNT_EVERY_TRANSACTION)
    script.rule("crash/bucketed", BUCKETED_COUNT)
    total = 120
    detector = _detector(kafka_settings, unique_topics, tmp_path / "checkpoint", tmp_path / "detector-1.log")
    try:
        # The first transactions go in, then the detector is killed while the rest keep arriving.
        first = [{"transactionId": f"t{i}", "eventTime": script.next_ts_ms, "payerId": f"p{i % 7}"} for i in range(40)]
        script.transactions(first)
        seen = consume_until(kafka_settings, unique_topics.alerts, lambda ms: len(ms) >= 10, timeout_s=360)
        assert seen, detector.log_tail()
        rest = [
            {"transactionId": f"t{i}", "eventTime": script.next_ts_ms, "payerId": f"p{i % 7}"} for i in range(40, total)
        ]
        feeder = threading.Thread(target=script.transactions, args=(rest,))
        feeder.start()
        assert detector.pid is not None
        os.killpg(detector.pid, signal.SIGKILL)
        detector.stop()
        feeder.join()
        detector = _detector(kafka_settings, unique_topics, tmp_path / "checkpoint", tmp_path / "detector-2.log")
        expected = {alert_id("crash/every-tx", f"t{i}") for i in range(total)}
        # Payer p(i % 7) has its third transaction at i = 14 + i % 7: from then on, all of them alert.
        expected |= {alert_id("crash/bucketed", f"t{i}") for i in range(14, total)}
        got = consume_until(
            kafka_settings,
            unique_topics.alerts,
            lambda ms: expected <= set(alert_ids(ms)),
            timeout_s=480,
        )
    finally:
        detector.stop()
    ids = alert_ids(got)
    assert set(ids) == expected, "every transaction alerted, and no alert id was invented"
    assert len(ids) >= len(expected)
