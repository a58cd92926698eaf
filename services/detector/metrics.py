"""The detector driver's Prometheus metrics (CONTRACT section 7): the query's (up, restarts, batches, input lag and
pending input, state). The evaluation metrics (alerts and their latency, transactions by outcome, DLQ records, rule
counters, active rules, input rows) are served by every JVM that runs the evaluator's tasks (EvaluatorMetrics.java).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

QUERY_RESTARTS = Counter("fraud_query_restarts", "Times the streaming query failed and was restarted")
INPUT_LAG = Gauge(
    "fraud_input_lag_seconds", "Now minus the Kafka timestamp of the newest transaction evaluated (NaN before any)"
)
INPUT_PENDING = Gauge(
    "fraud_input_pending_records", "Transactions on the topic not yet evaluated (NaN while the topic cannot be read)"
)
QUERY_UP = Gauge("fraud_query_up", "1 while the streaming query runs, 0 while it is down")
BATCH_DURATION = Histogram(
    "fraud_batch_duration_seconds",
    "Execution time of each batch: a Real-time Mode batch is one checkpoint interval from its first record; a new "
    "checkpoint's seeding runs micro-batches of the rules before them",
    buckets=(0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0),
)
BATCH_PHASE = Gauge("fraud_batch_phase_seconds", "Duration of each phase of the last batch", ["phase"])
STATE_ROWS = Gauge(
    "fraud_state_rows",
    "Rows in the state store (every stateful operator) after the last batch; NaN while Spark does not count them "
    "(spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows=false, the detector's default)",
)
STATE_MEMORY = Gauge("fraud_state_memory_used_bytes", "Memory the state store used after the last batch")

INPUT_LAG.set(float("nan"))
INPUT_PENDING.set(float("nan"))
