"""A detector started with another number of state partitions than its checkpoint holds refuses to start (exit
status 78) with one line saying what to do, instead of running every bucket without its rules and windows."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_localstack.processes import ManagedProcess, free_port, wait_for
from tests.checkpoints import offsets_entry

pytestmark = pytest.mark.integration

EXIT_CONFIG = 78


def test_a_checkpoint_of_another_partition_count_ends_the_detector_at_start(
    kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "ck"
    offsets_entry(checkpoint, 0, 2)
    argv = [
        "-m", "fraudstream_detector", "--checkpoint-dir", str(checkpoint), "--shuffle-partitions", "3",
        "--metrics-port", str(free_port()),
    ]  # fmt: skip
    log = tmp_path / "detector.log"
    detector = ManagedProcess(
        "detector", [sys.executable, *argv], log, env={**kafka_settings.as_env(), **unique_topics.as_env()}
    ).start()
    try:
        wait_for(lambda: not detector.alive(), 120, "the detector to exit")
        code = detector._proc.returncode if detector._proc else None
    finally:
        detector.stop()
    text = log.read_text()
    assert code == EXIT_CONFIG, text
    assert "has 2 state partitions, but --shuffle-partitions (DETECTOR_SHUFFLE_PARTITIONS) is 3" in text
    assert "Traceback" not in text
