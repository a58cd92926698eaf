"""The JVM evaluator seen from the PySpark driver: its stages and its writer in the query, and its metrics.

The evaluation itself runs in the JVM (services/evaluator, package io.fraudstream.evaluator), because
Real-time Mode admits no Python operator; pipeline.py builds the query around its stages and its writer. Python
keeps the configuration, the process lifecycle and the Prometheus endpoint: `MetricsBridge` drains what the JVM
observed into the same metrics the Python evaluator feeds (metrics.record), and its progress into the liveness
`Progress`.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from py4j.java_collections import MapConverter
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.readwriter import DataStreamWriter

from . import metrics
from .config import DetectorConfig
from .liveness import Progress


def _jvm_package(spark: SparkSession) -> Any:
    return spark._jvm.io.fraudstream.evaluator.spark  # type: ignore[union-attr]


def _java_map(spark: SparkSession, values: dict[str, str]) -> Any:
    return MapConverter().convert(values, spark.sparkContext._gateway._gateway_client)  # type: ignore[union-attr]


def instance_name(cfg: DetectorConfig) -> str:
    """What the JVM keys this detector's caches and metrics by: its checkpoint location."""
    return str(cfg.checkpoint_dir)


def evaluate(input_records: DataFrame, cfg: DetectorConfig) -> DataFrame:
    """The reported rows (alerts and DLQ records) of `input_records`, a stream with the columns of
    Evaluation.INPUT_COLUMNS: the JVM's two transformWithState stages (Evaluation.java)."""
    spark = input_records.sparkSession
    settings = {
        "rulesTopic": cfg.topics.rules,
        "checkpointDir": instance_name(cfg),
        "buckets": str(cfg.buckets),
        "latenessMs": str(cfg.lateness_ms),
        "futureSkewMs": str(cfg.future_skew_ms),
        "reorderWaitMs": str(cfg.reorder_wait_ms),
        "sweepIntervalMs": str(cfg.sweep_interval_ms),
        "rulesCatchUpTimeoutMs": str(cfg.rules_catch_up_timeout_ms),
    }
    jreported = _jvm_package(spark).Evaluation.evaluate(
        input_records._jdf, _java_map(spark, cfg.source_options()), _java_map(spark, settings)
    )
    return DataFrame(jreported, spark)


def publish_to_kafka(writer: DataStreamWriter, cfg: DetectorConfig, max_request_bytes: int) -> DataStreamWriter:
    """`writer` with the JVM's OutputWriter (a ForeachWriter) as its sink, publishing each reported row to the alerts
    or the DLQ topic as it comes; `max_request_bytes` is the largest record its producer sends (the output topics'
    max.message.bytes). PySpark's own foreach would run Python, which Real-time Mode does not admit."""
    spark = writer._spark
    jwriter = _jvm_package(spark).OutputWriter(
        _java_map(spark, cfg.source_options()),
        cfg.topics.alerts,
        cfg.topics.dlq,
        instance_name(cfg),
        max_request_bytes,
    )
    writer._jwrite = writer._jwrite.foreach(jwriter)
    return writer


def records_processed(spark: SparkSession, cfg: DetectorConfig) -> int:
    """Rule messages and transactions the JVM evaluator has processed so far (for tests and readiness)."""
    return int(_jvm_package(spark).EvaluatorMetrics.of(instance_name(cfg)).recordsProcessed())


class MetricsBridge:
    """Drains the JVM evaluator's observations into the detector's metrics and `progress`, every `interval_s`."""

    def __init__(self, spark: SparkSession, cfg: DetectorConfig, progress: Progress, interval_s: float = 0.25) -> None:
        self._source = _jvm_package(spark).EvaluatorMetrics.of(instance_name(cfg))
        self._progress = progress
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jvm-metrics", daemon=True)

    def start(self) -> MetricsBridge:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.drain()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.drain()

    def drain(self) -> None:
        """Applies one batch of observations (see EvaluatorMetrics.drain for the document)."""
        observed = json.loads(self._source.drain())
        metrics.record(observed)
        self._progress.update(observed["positions"], observed["newestEvaluatedTsMs"])
