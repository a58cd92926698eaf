"""The JVM evaluator seen from the PySpark driver: starting its Real-time Mode query, and its metrics.

The evaluation itself runs in the JVM (services/evaluator, package io.fraudstream.evaluator), because
Real-time Mode admits no Python operator. Python keeps the configuration, the process lifecycle and the
Prometheus endpoint: `MetricsBridge` drains what the JVM observed into the same metrics the Python evaluator
feeds (metrics.record), and its progress into the liveness `Progress`.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from py4j.java_collections import MapConverter
from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from . import metrics
from .config import DetectorConfig
from .job import QUERY_NAME
from .liveness import Progress


def _jvm_package(spark: SparkSession) -> Any:
    return spark._jvm.io.fraudstream.evaluator.spark  # type: ignore[union-attr]


def _java_map(spark: SparkSession, values: dict[str, str]) -> Any:
    return MapConverter().convert(values, spark.sparkContext._gateway._gateway_client)  # type: ignore[union-attr]


def instance_name(cfg: DetectorConfig) -> str:
    """What the JVM keys this detector's caches and metrics by: its checkpoint location."""
    return str(cfg.checkpoint_dir)


def build_jvm_query(spark: SparkSession, cfg: DetectorConfig, max_request_bytes: int) -> StreamingQuery:
    """Starts the detector query with the JVM evaluator under Real-time Mode (see RealTimeDetector.java);
    `max_request_bytes` is the largest record its producer sends (the output topics' max.message.bytes)."""
    settings = {
        "transactionsTopic": cfg.topics.transactions,
        "rulesTopic": cfg.topics.rules,
        "alertsTopic": cfg.topics.alerts,
        "dlqTopic": cfg.topics.dlq,
        "checkpointDir": instance_name(cfg),
        "startingOffsets": cfg.starting_offsets,
        "buckets": str(cfg.buckets),
        "latenessMs": str(cfg.lateness_ms),
        "futureSkewMs": str(cfg.future_skew_ms),
        "reorderWaitMs": str(cfg.reorder_wait_ms),
        "sweepIntervalMs": str(cfg.sweep_interval_ms),
        "rulesCatchUpTimeoutMs": str(cfg.rules_catch_up_timeout_ms),
        "maxRequestBytes": str(max_request_bytes),
        "queryName": QUERY_NAME,
        "trigger": f"realtime:{cfg.checkpoint_interval}",
    }
    jquery = _jvm_package(spark).RealTimeDetector.start(
        spark._jsparkSession, _java_map(spark, cfg.source_options()), _java_map(spark, settings)
    )
    return StreamingQuery(jquery)


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
