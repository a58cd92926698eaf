"""The detector's Prometheus metrics (CONTRACT section 7), served from the Spark driver."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

# Fine up to 500 ms, where the budget is, so that quantiles interpolated from the buckets are close to the truth
# (make bench holds them within 20% of its independent measurement at p50 and p99).
LATENCY_BUCKETS_S = (
    0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.125, 0.15, 0.175, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45,
    0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0, 120.0,
)  # fmt: skip

ALERT_LATENCY = Histogram(
    "fraud_alert_latency_seconds",
    "Alert acknowledged by the alerts topic minus the transaction's Kafka timestamp",
    buckets=LATENCY_BUCKETS_S,
)
ALERTS = Counter("fraud_alerts", "Alerts written to the alerts topic", ["rule_id"])
TRANSACTIONS = Counter("fraud_transactions", "Transactions by outcome", ["outcome"])
DLQ_RECORDS = Counter("fraud_dlq_records", "Records written to the DLQ", ["error"])
ACTIVE_RULES = Gauge("fraud_active_rules", "ACTIVE rules in the detector's rule set")
BATCH_DURATION = Histogram(
    "fraud_batch_duration_seconds",
    "Micro-batch trigger execution time",
    buckets=(0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0),
)
BATCH_PHASE = Gauge("fraud_batch_phase_seconds", "Duration of each phase of the last micro-batch", ["phase"])
INPUT_ROWS = Counter("fraud_input_rows", "Kafka records read (transactions and rule messages)")
STATE_ROWS = Gauge("fraud_state_rows", "Rows in the state store (every stateful operator) after the last micro-batch")
STATE_MEMORY = Gauge("fraud_state_memory_used_bytes", "Memory the state store used after the last micro-batch")

for _outcome in ("evaluated", "invalid", "late"):
    TRANSACTIONS.labels(outcome=_outcome)
