"""The detector's Prometheus metrics (CONTRACT section 7) that the Spark driver serves, and `record`, which turns what
the Python evaluator observed into its evaluation metrics.

The driver always serves the query's metrics (up, restarts, batches, input lag and pending input, state). The
evaluation metrics (alerts and their latency, transactions by outcome, DLQ records, rule counters, active rules, input
rows) are served by whichever process evaluates: the JVM evaluator serves them from every JVM that runs its tasks
(EvaluatorMetrics.java, the same names, help and buckets); the Python evaluator's are registered here by
`serve_evaluator_metrics`, so that a driver whose JVM evaluates serves no second, idle copy of them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from prometheus_client import REGISTRY, Counter, Gauge, Histogram

# Fine up to 500 ms, where the budget is, so that quantiles interpolated from the buckets are close to the truth
# (make bench holds them within 20% of its independent measurement at p50 and p99).
LATENCY_BUCKETS_S = (
    0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.125, 0.15, 0.175, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45,
    0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0, 120.0,
)  # fmt: skip
OUTCOMES = ("evaluated", "invalid", "late", "future")
DLQ_ERRORS = ("unparseable", "invalid", "late", "future", "unwritable")
RULE_MESSAGE_REASONS = ("unparseable", "invalid", "key-mismatch", "unsupported-version")

ALERT_LATENCY = Histogram(
    "fraud_alert_latency_seconds",
    "Alert acknowledged by the alerts topic minus the transaction's Kafka timestamp",
    buckets=LATENCY_BUCKETS_S,
    registry=None,
)
ALERTS = Counter("fraud_alerts", "Alerts written to the alerts topic", ["rule_id"], registry=None)
TRANSACTIONS = Counter(
    "fraud_transactions",
    "Transactions by outcome: evaluated, invalid (dead-lettered as unparseable or invalid), future; late counts those "
    "late for at least one key group (other key groups may still have evaluated them)",
    ["outcome"],
    registry=None,
)
DLQ_RECORDS = Counter(
    "fraud_dlq_records",
    "Records written to the DLQ by error; unwritable: outputs Kafka refused for good",
    ["error"],
    registry=None,
)
RULE_APPLIED = Counter(
    "fraud_rule_applied", "Transactions each ACTIVE rule applied to (evaluated or skipped)", ["rule_id"], registry=None
)
RULE_SKIPPED = Counter(
    "fraud_rule_skipped",
    "Transactions a rule applied to but skipped: its aggregate field missing, non-numeric or out of range",
    ["rule_id", "reason"],
    registry=None,
)
RULE_MESSAGES_REJECTED = Counter(
    "fraud_rule_messages_rejected",
    "Rules-topic records the detector could not apply, by reason",
    ["reason"],
    registry=None,
)
OUT_OF_ORDER = Counter(
    "fraud_out_of_order",
    "Transactions evaluated after one of their group's transactions with a later ingestion time",
    registry=None,
)
QUERY_RESTARTS = Counter("fraud_query_restarts", "Times the streaming query failed and was restarted")
INPUT_LAG = Gauge(
    "fraud_input_lag_seconds", "Now minus the Kafka timestamp of the newest transaction evaluated (NaN before any)"
)
INPUT_PENDING = Gauge(
    "fraud_input_pending_records", "Transactions on the topic not yet evaluated (NaN while the topic cannot be read)"
)
QUERY_UP = Gauge("fraud_query_up", "1 while the streaming query runs, 0 while it is down")
ACTIVE_RULES = Gauge("fraud_active_rules", "ACTIVE rules in the detector's rule set", registry=None)
BATCH_DURATION = Histogram(
    "fraud_batch_duration_seconds",
    "Micro-batch trigger execution time",
    buckets=(0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0),
)
BATCH_PHASE = Gauge("fraud_batch_phase_seconds", "Duration of each phase of the last micro-batch", ["phase"])
INPUT_ROWS = Counter("fraud_input_rows", "Kafka records read (transactions and rule messages)", registry=None)
STATE_ROWS = Gauge("fraud_state_rows", "Rows in the state store (every stateful operator) after the last micro-batch")
STATE_MEMORY = Gauge("fraud_state_memory_used_bytes", "Memory the state store used after the last micro-batch")

for _outcome in OUTCOMES:
    TRANSACTIONS.labels(outcome=_outcome)
for _error in DLQ_ERRORS:
    DLQ_RECORDS.labels(error=_error)
for _reason in RULE_MESSAGE_REASONS:
    RULE_MESSAGES_REJECTED.labels(reason=_reason)
_EVALUATOR_METRICS = (
    ALERT_LATENCY, ALERTS, TRANSACTIONS, DLQ_RECORDS, RULE_APPLIED, RULE_SKIPPED, RULE_MESSAGES_REJECTED, OUT_OF_ORDER,
    ACTIVE_RULES, INPUT_ROWS,
)  # fmt: skip
_registration = threading.Lock()
_registered = False


def serve_evaluator_metrics() -> None:
    """Adds the Python evaluator's metrics to what the driver serves (idempotent)."""
    global _registered
    with _registration:
        if not _registered:
            for metric in _EVALUATOR_METRICS:
                REGISTRY.register(metric)
            _registered = True


INPUT_LAG.set(float("nan"))
INPUT_PENDING.set(float("nan"))


def record(observed: Mapping[str, Any]) -> None:
    """Applies one batch of the Python evaluator's observations (`{"alerts": [[ruleId, latencyMs]...],
    "transactions": {outcome: n}, "outOfOrder": n, "dlq": {error: n}, "applied": {ruleId: n}, "skipped": [[ruleId,
    reason, n]...], "ruleMessagesRejected": {reason: n}, "records": n, "activeRules": n or -1 if unknown}`, every key
    optional; counts are deltas)."""
    for rule_id, latency_ms in observed.get("alerts", ()):
        ALERT_LATENCY.observe(latency_ms / 1000)
        ALERTS.labels(rule_id=rule_id).inc()
    for outcome, count in observed.get("transactions", {}).items():
        TRANSACTIONS.labels(outcome=outcome).inc(count)
    OUT_OF_ORDER.inc(observed.get("outOfOrder", 0))
    for error, count in observed.get("dlq", {}).items():
        DLQ_RECORDS.labels(error=error).inc(count)
    for rule_id, count in observed.get("applied", {}).items():
        RULE_APPLIED.labels(rule_id=rule_id).inc(count)
    for rule_id, reason, count in observed.get("skipped", ()):
        RULE_SKIPPED.labels(rule_id=rule_id, reason=reason).inc(count)
    for reason, count in observed.get("ruleMessagesRejected", {}).items():
        RULE_MESSAGES_REJECTED.labels(reason=reason).inc(count)
    INPUT_ROWS.inc(observed.get("records", 0))
    if observed.get("activeRules", -1) >= 0:
        ACTIVE_RULES.set(observed["activeRules"])
