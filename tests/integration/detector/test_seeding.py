"""A detector process on a new checkpoint whose transactions start at `latest` seeds it with the rules in
micro-batches, as many as the rules topic has offsets up to checkpoint.SEEDING_BATCHES, then says ready under
Real-time Mode on the same checkpoint, and stops cleanly; killed in the middle of its seeding, the next detector
continues the checkpoint under Real-time Mode with every rule."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from fraudstream_detector.checkpoint import SEEDING_BATCHES, log_batches
from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import ensure_contract_topics
from fraudstream_localstack.processes import wait_for
from fraudstream_rules.alerts import alert_id
from tests.integration.detector.harness import Script, detector_process
from tests.integration.detector.test_pipeline import spec
from tests.kafka_helpers import alert_ids, consume_until

pytestmark = pytest.mark.integration
# The seeding's log line when it reads one rules offset a micro-batch.
ONE_RULE_A_BATCH = "each micro-batch reading at most 1 of the rules topic's offsets"


def test_a_detector_process_seeds_a_new_checkpoint_in_micro_batches_then_runs_real_time_mode(
    kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    ensure_contract_topics(kafka_settings, unique_topics)
    script = Script(kafka_settings, unique_topics)
    for limit in ("100", "200", "300"):
        script.rule(f"ns/sum-{limit}", spec(["payerId"], "SUM", "paymentAmount", "GREATER", limit, 10))
    checkpoint, log = tmp_path / "checkpoint", tmp_path / "detector.log"
    detector, endpoints = detector_process(
        kafka_settings, unique_topics, checkpoint, log, ["--starting-offsets", "latest"]
    )
    try:
        wait_for(endpoints.ready, 300, "the detector ready", 1, watching=[detector])
        seeded_commits = log_batches(checkpoint, "commits")
        text = log.read_text()
    finally:
        detector.stop()
        stopped = log.read_text()

    assert "seeding the new checkpoint" in text
    assert ONE_RULE_A_BATCH in text
    assert ", 3 micro-batches" in text, "one micro-batch per rules offset, three offsets"
    assert seeded_commits[:3] == [0, 1, 2]
    assert text.index("checkpoint seeded") < text.index("detector query started")
    assert "detector stopped" in stopped


def test_a_detector_killed_in_the_middle_of_its_seeding_is_continued_with_every_rule(
    kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    """kill -9 after the seeding committed its first micro-batch: the checkpoint is no longer new, so the next
    detector runs Real-time Mode on it at once. The rules of the committed batches are in the state, the others
    are read from the offsets committed: every rule alerts on every transaction, each alert once."""
    ensure_contract_topics(kafka_settings, unique_topics)
    script = Script(kafka_settings, unique_topics)
    rules = [f"seed/count-{i}" for i in range(SEEDING_BATCHES)]  # one rules offset a micro-batch
    for rule in rules:
        script.rule(rule, spec(["payerId"], "COUNT", None, "GREATER_EQUAL", "1", 10))
    script.next_ts_ms += 6_000  # past the contract's 5 s margin
    checkpoint = tmp_path / "checkpoint"
    latest = ["--starting-offsets", "latest"]
    first, _ = detector_process(kafka_settings, unique_topics, checkpoint, tmp_path / "detector-1.log", latest)
    try:
        wait_for(
            lambda: bool(log_batches(checkpoint, "commits")),
            300,
            "a seeding batch committed",
            0.02,
            watching=[first],
        )
        assert first.pid is not None
        os.killpg(first.pid, signal.SIGKILL)
    finally:
        first.stop()
    killed_log = (tmp_path / "detector-1.log").read_text()
    commits = log_batches(checkpoint, "commits")
    assert ONE_RULE_A_BATCH in killed_log, "seeded one rule a batch"
    # Spark keeps the last few commits only; the newest says how far the seeding got.
    assert commits and commits[-1] < SEEDING_BATCHES - 1, "killed inside the seeding, after a committed micro-batch"

    txs = [{"transactionId": f"t{i}", "eventTime": script.next_ts_ms + i, "payerId": f"p{i % 3}"} for i in range(6)]
    script.transactions(txs[:3])  # while no detector runs
    second, endpoints = detector_process(kafka_settings, unique_topics, checkpoint, tmp_path / "detector-2.log", latest)
    try:
        wait_for(endpoints.ready, 300, "the second detector ready", 1, watching=[second])
        script.transactions(txs[3:])
        expected = {alert_id(rule, str(tx["transactionId"])) for rule in rules for tx in txs}
        got = consume_until(
            kafka_settings,
            unique_topics.alerts,
            lambda ms: expected <= set(alert_ids(ms)),
            timeout_s=240,
        )
        second_log = (tmp_path / "detector-2.log").read_text()
    finally:
        second.stop()

    assert "seeding the new checkpoint" not in second_log, "a checkpoint a query started on is not seeded again"
    ids = alert_ids(got)
    assert set(ids) == expected, "every rule alerted on every transaction, and no alert id was invented"
    assert len(ids) == len(expected), "each alert once"
