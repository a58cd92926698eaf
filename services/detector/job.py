"""The streaming query: transactions and rule messages in, one stateful step, alerts and DLQ records out."""

from __future__ import annotations

import logging

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.listener import StreamingQueryListener
from pyspark.sql.streaming.query import StreamingQuery

from . import metrics
from .config import DetectorConfig
from .processor import OUTPUT_SCHEMA, RuleEngineProcessor
from .records import RecordKind
from .sink import BatchSink

QUERY_NAME = "fraudstream-detector"
log = logging.getLogger(__name__)


def _kafka_records(spark: SparkSession, cfg: DetectorConfig, topic: str, kind: RecordKind, start: str) -> DataFrame:
    reader = (
        spark.readStream.format("kafka")
        .options(**cfg.source_options())
        .option("subscribe", topic)
        .option("startingOffsets", start)
        .option("failOnDataLoss", "false")
    )
    if kind is RecordKind.TRANSACTION and cfg.max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", str(cfg.max_offsets_per_trigger))
    return reader.load().select(
        F.lit(kind.value).alias("kind"),
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        F.unix_millis("timestamp").alias("timestamp_ms"),
    )


def build_query(spark: SparkSession, cfg: DetectorConfig, sink: BatchSink) -> StreamingQuery:
    """Starts the detector query. Rules are read from the beginning of their compacted topic."""
    transactions = _kafka_records(spark, cfg, cfg.topics.transactions, RecordKind.TRANSACTION, cfg.starting_offsets)
    rules = _kafka_records(spark, cfg, cfg.topics.rules, RecordKind.RULE, "earliest")
    # Every bucket gets every record: rules must reach all state, and only the owner of a key group acts on it.
    fanned = transactions.unionByName(rules).withColumn(
        "bucket", F.explode(F.sequence(F.lit(0), F.lit(cfg.buckets - 1)))
    )
    evaluated = fanned.groupBy("bucket").transformWithState(
        statefulProcessor=RuleEngineProcessor(
            cfg.buckets, cfg.lateness_ms, cfg.sweep_interval_ms, cfg.future_skew_ms, instance=str(cfg.checkpoint_dir)
        ),
        outputStructType=OUTPUT_SCHEMA,
        outputMode="Update",
        timeMode="ProcessingTime",
    )
    return (
        evaluated.writeStream.queryName(QUERY_NAME)
        .foreachBatch(sink.write_batch)
        .option("checkpointLocation", str(cfg.checkpoint_dir))
        .trigger(processingTime=cfg.trigger_interval)
        .start()
    )


class ProgressMetrics(StreamingQueryListener):
    """Exports each micro-batch's duration and its phases (and, unless `count_input_rows` is False because
    another source counts them, the input rows)."""

    def __init__(self, count_input_rows: bool = True) -> None:
        self.count_input_rows = count_input_rows

    def onQueryStarted(self, event: object) -> None:
        pass

    def onQueryProgress(self, event: StreamingQueryListener.QueryProgressEvent) -> None:  # type: ignore[name-defined]
        progress = event.progress
        durations = progress.durationMs
        if "triggerExecution" in durations:
            metrics.BATCH_DURATION.observe(durations["triggerExecution"] / 1000)
        for phase, ms in durations.items():
            metrics.BATCH_PHASE.labels(phase=phase).set(ms / 1000)
        if self.count_input_rows:
            metrics.INPUT_ROWS.inc(progress.numInputRows)
        operators = progress.stateOperators
        metrics.BATCH_PHASE.labels(phase="stateCommit").set(sum(op.commitTimeMs for op in operators) / 1000)
        log.info(
            "batch %s: %s rows, durations %s, state %s",
            progress.batchId,
            progress.numInputRows,
            dict(durations),
            [(op.numRowsTotal, op.commitTimeMs, dict(op.customMetrics)) for op in operators],
        )
        metrics.STATE_ROWS.set(sum(op.numRowsTotal for op in operators))
        metrics.STATE_MEMORY.set(sum(op.memoryUsedBytes for op in operators))

    def onQueryIdle(self, event: object) -> None:
        pass

    def onQueryTerminated(self, event: object) -> None:
        pass
