"""A running detector keeps a bounded checkpoint history (session.CHECKPOINT_DEFAULTS): its offset and commit logs
hold the last few batches however long it runs, where Spark's own default keeps 100."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fraudstream_detector.checkpoint import log_batches
from fraudstream_detector.session import CHECKPOINT_DEFAULTS
from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_localstack.processes import wait_for
from tests.integration.detector.harness import Script, detector_config, running_detector

pytestmark = pytest.mark.integration

RETAIN = int(CHECKPOINT_DEFAULTS["spark.sql.streaming.minBatchesToRetain"])


def test_the_checkpoint_logs_keep_only_the_last_batches(
    spark: Any, kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "ck"
    config = replace(detector_config(kafka_settings, unique_topics, checkpoint), checkpoint_interval="5 seconds")
    script = Script(kafka_settings, unique_topics)
    with running_detector(spark, config) as detector:

        def many_batches_committed() -> bool:
            assert detector.query.isActive, detector.query.exception()
            script.transaction({"transactionId": f"t{len(script.records)}"})  # keeps every batch non-empty
            committed = log_batches(checkpoint, "commits")
            return bool(committed) and committed[-1] > 2 * RETAIN

        wait_for(many_batches_committed, 180, f"batch {2 * RETAIN + 1} to be committed")
        for log in ("offsets", "commits"):
            kept = log_batches(checkpoint, log)
            assert kept[0] > kept[-1] - 2 * RETAIN, (log, kept)
