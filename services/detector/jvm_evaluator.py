"""The JVM evaluator seen from the PySpark driver: its stages and its writer in the query, and its progress.

The evaluation itself runs in the JVM (services/evaluator, package io.fraudstream.evaluator), because Real-time Mode
admits no Python operator; pipeline.py builds the query around its stages and its writer. The stages run inside
whichever JVMs run the query's tasks: the Spark executors, or the driver with a local[N] master. Each such JVM
serves the evaluation metrics itself (EvaluatorMetrics.java) on the port that `evaluator_conf` puts in the Spark
configuration; `EvaluatorProgress` reads the evaluated positions from all of them into the liveness `Progress`, so
the driver's liveness works wherever the tasks run.
"""

from __future__ import annotations

import logging
import urllib.request
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from py4j.java_collections import MapConverter
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.readwriter import DataStreamWriter

from .config import DetectorConfig
from .liveness import Progress

PORT_CONF = "spark.fraudstream.evaluatorMetrics.port"
log = logging.getLogger(__name__)


def _jvm_package(spark: SparkSession) -> Any:
    return spark._jvm.io.fraudstream.evaluator.spark  # type: ignore[union-attr]


def _java_map(spark: SparkSession, values: dict[str, str]) -> Any:
    return MapConverter().convert(values, spark.sparkContext._gateway._gateway_client)  # type: ignore[union-attr]


def instance_name(cfg: DetectorConfig) -> str:
    """What the JVM keys this detector's caches and metrics by: its checkpoint location."""
    return str(cfg.checkpoint_dir)


def with_buckets(records: DataFrame, cfg: DetectorConfig) -> DataFrame:
    """`records` (Kafka records of both topics in the columns of Evaluation.INPUT_COLUMNS but `bucket`) with the
    `bucket` column: each rule message once per bucket, each transaction once per bucket it goes to (Router.java)."""
    spark = records.sparkSession
    settings = {
        "checkpointDir": instance_name(cfg),
        "buckets": str(cfg.buckets),
        "routeTransactions": str(cfg.routes_transactions).lower(),
    }
    return DataFrame(_jvm_package(spark).Evaluation.withBuckets(records._jdf, _java_map(spark, settings)), spark)


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
        "stateCacheBytes": str(cfg.state_cache_mb * 1024 * 1024),
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


def evaluator_conf(cfg: DetectorConfig) -> dict[str, str]:
    """The Spark configuration that makes every JVM running the evaluator's tasks serve its metrics on
    `cfg.evaluator_metrics_port`, on every interface (EvaluatorMetrics.PORT_CONF)."""
    return {PORT_CONF: str(cfg.evaluator_metrics_port)}


def evaluated_positions(exposition: str) -> tuple[dict[int, int], int | None]:
    """The evaluated positions in one evaluator JVM's metrics: the last offset evaluated per transactions partition,
    and the Kafka timestamp (ms) of the newest transaction evaluated, None before any."""
    positions: dict[int, int] = {}
    newest_ms: int | None = None
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            if sample.name == "fraud_evaluated_offset":
                positions[int(sample.labels["partition"])] = int(sample.value)
            elif sample.name == "fraud_newest_evaluated_timestamp_seconds" and sample.value > 0:
                newest_ms = round(sample.value * 1000)
    return positions, newest_ms


class EvaluatorProgress:
    """Reads the evaluated positions that every JVM of the application serves (the executors, and the driver, which
    serves them only when its JVM runs tasks) into `progress`."""

    def __init__(self, spark: SparkSession, port: int, progress: Progress, timeout_s: float = 2.0) -> None:
        self._context = spark.sparkContext._jsc.sc()
        self._port = port
        self._progress = progress
        self._timeout_s = timeout_s

    def hosts(self) -> list[str]:
        """The hosts of the application's JVMs (the executors and the driver)."""
        return sorted({str(info.host()) for info in self._context.statusTracker().getExecutorInfos()})

    def poll(self) -> None:
        """One read of every JVM's positions; a JVM that serves none (the driver of a cluster) or cannot be reached
        just adds nothing: the liveness check reports input that waits without progress."""
        for host in self.hosts():
            url = f"http://{host}:{self._port}/metrics"
            try:
                with urllib.request.urlopen(url, timeout=self._timeout_s) as response:
                    exposition = response.read().decode()
            except OSError as exc:
                log.debug("no evaluator metrics at %s: %s", url, exc)
                continue
            self._progress.update(*evaluated_positions(exposition))
