"""The detector's streaming query, from the Kafka topics to the alerts and the DLQ, and its progress metrics.

    transactions topic (from cfg.starting_offsets) ──┐
                                                     ├─ union ─ route to buckets ─ evaluate ─ publish
    rules topic (compacted, from its beginning) ─────┘

The sources, the union, the fan-out, the triggers, the sink options and the query's start are here; on a new
checkpoint the same query first runs as micro-batches of the rules (`start_seeding`). Real-time Mode
(`trigger(realTime=...)`, the checkpoint interval) admits no Python operator, so both stateful stages
(jvm_evaluator.evaluate) and the writer (jvm_evaluator.publish_to_kafka) are JVM code; each record flows through as
it arrives.

Every bucket gets every rule message: rules must reach all state. A transaction goes to the buckets that own one of
its groups and to the one that reports it (Router.java; to every bucket when cfg.routes_transactions is false).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from py4j.java_gateway import JavaObject
from pyspark.java_gateway import ensure_callback_server_started
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery
from pyspark.sql.streaming.readwriter import DataStreamWriter

from . import jvm_evaluator, metrics
from .config import DetectorConfig

QUERY_NAME = "fraudstream-detector"
log = logging.getLogger(__name__)


def _kafka_records(
    spark: SparkSession, cfg: DetectorConfig, topic: str, start: str, *, rule: bool, per_batch: int | None = None
) -> DataFrame:
    """The records of `topic` from `start` (when the checkpoint has no offsets yet) in the columns rule (the given
    constant: whether these are rule messages), key, value, topic, partition, offset, timestamp_ms (Kafka's); a
    micro-batch reads at most `per_batch` offsets of it when given."""
    reader = (
        spark.readStream.format("kafka")
        .options(**cfg.source_options())
        .option("subscribe", topic)
        .option("startingOffsets", start)
        .option("failOnDataLoss", "false")
    )
    if per_batch is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(per_batch))
    return reader.load().select(
        F.lit(rule).alias("rule"),
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        F.unix_millis("timestamp").alias("timestamp_ms"),
    )


def input_records(spark: SparkSession, cfg: DetectorConfig, rules_per_batch: int | None = None) -> DataFrame:
    """Rule messages, each once per bucket, and transactions, each once per bucket it goes to: the columns rule,
    key, value, topic, partition, offset, timestamp_ms, bucket (Evaluation.INPUT_COLUMNS in the JVM); a
    micro-batch reads at most `rules_per_batch` offsets of the rules topic when given."""
    transactions = _kafka_records(spark, cfg, cfg.topics.transactions, cfg.starting_offsets, rule=False)
    rules = _kafka_records(spark, cfg, cfg.topics.rules, "earliest", rule=True, per_batch=rules_per_batch)
    return jvm_evaluator.with_buckets(transactions.union(rules), cfg)


def _query(
    spark: SparkSession, cfg: DetectorConfig, max_request_bytes: int, rules_per_batch: int | None = None
) -> DataStreamWriter:
    """The whole query on cfg.checkpoint_dir, without its trigger; `max_request_bytes` is the largest record the
    writer's producer sends (the output topics' max.message.bytes), `rules_per_batch` as in `input_records`."""
    reported = jvm_evaluator.evaluate(input_records(spark, cfg, rules_per_batch), cfg)
    return (
        jvm_evaluator.publish_to_kafka(reported.writeStream, cfg, max_request_bytes)
        .queryName(QUERY_NAME)
        .option("checkpointLocation", str(cfg.checkpoint_dir))
        .outputMode("update")
    )


def start_query(spark: SparkSession, cfg: DetectorConfig, max_request_bytes: int) -> StreamingQuery:
    """Starts the query under Real-time Mode, checkpointing every cfg.checkpoint_interval (see `_query`)."""
    # PySpark 4.3.0's trigger takes realTime=, but none of its typing overloads names it.
    real_time: DataStreamWriter = _query(spark, cfg, max_request_bytes).trigger(  # type: ignore[call-overload]
        realTime=cfg.checkpoint_interval
    )
    return real_time.start()


def start_seeding(
    spark: SparkSession, cfg: DetectorConfig, max_request_bytes: int, rules_per_batch: int | None
) -> StreamingQuery:
    """Starts the same query as micro-batches over what the topics hold now (Trigger.AvailableNow), which end by
    themselves: before `start_query`, on a checkpoint that checkpoint.seeds chose, each micro-batch reading at most
    `rules_per_batch` offsets of the rules topic when given (checkpoint.seeding_rules_per_batch).

    Contract: the transactions start at `latest`, so the micro-batches read the rules topic and next to no
    transaction (those that arrive while Spark reads the topic's start and end offsets); they evaluate and publish
    what they read, commit the rules into every bucket's state (the rules catch-up holds what a batch reads until
    the last has read the topic's end), and the query that follows starts after the offsets they committed. With
    nothing on the topics they commit nothing. What they buy: the stores' column families (the processors' state
    variables) are created, and the snapshot Spark forces in the commit of the batch that creates them is written,
    while the state holds only the rules; under Real-time Mode that snapshot came in the first checkpoint's commit,
    after a whole interval of windows (a median 1.5 s of its first transition, docs/BENCHMARKS.md). And each batch
    runs the steps of a batch transition (planning, the stateful tasks' start and their state commit) once more
    before Real-time Mode's first: its first transitions were the slowest by their number, not by the detector's
    age.
    """
    return _query(spark, cfg, max_request_bytes, rules_per_batch).trigger(availableNow=True).start()


def record_progress(progress: Mapping[str, Any]) -> None:
    """Exports one batch's progress (a StreamingQueryProgress as its JSON): the batch's duration, each phase of it,
    the stateful operators' commit time, rows and memory; and logs it in one line, which bench.soak reads."""
    durations: dict[str, int] = progress.get("durationMs", {})
    if "triggerExecution" in durations:
        metrics.BATCH_DURATION.observe(durations["triggerExecution"] / 1000)
    for phase, ms in durations.items():
        metrics.BATCH_PHASE.labels(phase=phase).set(ms / 1000)
    operators: list[dict[str, Any]] = progress.get("stateOperators", [])
    metrics.BATCH_PHASE.labels(phase="stateCommit").set(sum(op["commitTimeMs"] for op in operators) / 1000)
    log.info(
        "batch %s: %s rows, durations %s, state %s",
        progress.get("batchId"),
        progress.get("numInputRows"),
        durations,
        [(op["numRowsTotal"], op["commitTimeMs"], op.get("customMetrics", {})) for op in operators],
    )
    rows = [op["numRowsTotal"] for op in operators]
    # A RocksDB store reports -1 when it does not count its rows (session.CHECKPOINT_DEFAULTS): unknown, not zero.
    metrics.STATE_ROWS.set(float("nan") if any(n < 0 for n in rows) else sum(rows))
    metrics.STATE_MEMORY.set(sum(op["memoryUsedBytes"] for op in operators))


class ProgressListener:
    """Spark's listener for the query's progress events, as a py4j proxy of its PythonStreamingQueryListener
    (registered by `listen`): each batch's progress goes to `record_progress`.

    It reads an event in two calls into the JVM, the progress as JSON. pyspark's StreamingQueryListener converts the
    event field by field through py4j instead, and at every batch transition that kept Spark's listener thread busy
    for 1.2-1.7 s, on the cores that plan the next batch (docs/BENCHMARKS.md).
    """

    def onQueryStarted(self, jevent: JavaObject) -> None:
        pass

    def onQueryProgress(self, jevent: JavaObject) -> None:
        record_progress(json.loads(jevent.progress().json()))

    def onQueryIdle(self, jevent: JavaObject) -> None:
        pass

    def onQueryTerminated(self, jevent: JavaObject) -> None:
        pass

    class Java:
        implements: ClassVar[list[str]] = ["org.apache.spark.sql.streaming.PythonStreamingQueryListener"]


def listen(spark: SparkSession) -> None:
    """Sends the progress of `spark`'s streaming queries to `record_progress` from now on."""
    # As pyspark's own StreamingQueryManager.addListener registers a Python listener, minus its event conversion.
    gateway = spark.sparkContext._gateway
    assert gateway is not None, "a classic SparkSession has a py4j gateway"
    ensure_callback_server_started(gateway)  # type: ignore[no-untyped-call]
    wrapper = gateway.jvm.org.apache.spark.sql.streaming.PythonStreamingQueryListenerWrapper(ProgressListener())
    spark._jsparkSession.streams().addListener(wrapper)
