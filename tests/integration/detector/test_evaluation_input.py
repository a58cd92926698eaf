"""The input the pipeline hands to the JVM's stages: its columns are the ones Evaluation.evaluate reads, and any
other layout is refused there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import IllegalArgumentException

from fraudstream_detector import jvm_evaluator
from fraudstream_detector.pipeline import input_records
from fraudstream_kafka.settings import KafkaSettings, Topics
from tests.integration.detector.harness import detector_config

pytestmark = pytest.mark.integration


def test_the_pipelines_input_has_the_columns_the_jvm_stages_read(spark: Any, tmp_path: Path) -> None:
    config = detector_config(KafkaSettings(bootstrap="127.0.0.1:9"), Topics(), tmp_path / "checkpoint")
    expected = list(spark._jvm.io.fraudstream.evaluator.spark.Evaluation.INPUT_COLUMNS)
    assert input_records(spark, config).columns == expected


def test_an_input_of_another_layout_is_refused_with_the_columns_expected(spark: Any, tmp_path: Path) -> None:
    config = detector_config(KafkaSettings(bootstrap="127.0.0.1:9"), Topics(), tmp_path / "checkpoint")
    wrong = spark.createDataFrame([], "kind string, key binary, value binary, bucket int")
    with pytest.raises(IllegalArgumentException, match=r"the input's columns must be \[rule, key, value, topic"):
        jvm_evaluator.evaluate(wrong, config)
