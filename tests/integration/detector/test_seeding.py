"""A detector process on a new checkpoint whose transactions start at `latest` seeds it with the rules in
micro-batches, as many as the rules topic has offsets up to checkpoint.SEEDING_BATCHES, then says ready under
Real-time Mode on the same checkpoint, and stops cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from fraudstream_detector.checkpoint import log_batches
from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import ensure_contract_topics
from fraudstream_localstack.processes import wait_for
from tests.integration.detector.harness import Script, detector_process
from tests.integration.detector.test_pipeline import spec

pytestmark = pytest.mark.integration


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
        wait_for(lambda: detector.check_alive() or endpoints.ready(), 300, "the detector ready", 1)
        seeded_commits = log_batches(checkpoint, "commits")
        text = log.read_text()
    finally:
        detector.stop()
        stopped = log.read_text()

    assert "seeding the new checkpoint" in text
    assert "each micro-batch reading at most 1 of the rules topic's offsets" in text
    assert ", 3 micro-batches" in text, "one micro-batch per rules offset, three offsets"
    assert seeded_commits[:3] == [0, 1, 2]
    assert text.index("checkpoint seeded") < text.index("detector query started")
    assert "detector stopped" in stopped
