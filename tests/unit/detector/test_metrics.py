"""The Python evaluator's observations become the detector's evaluation metrics, which the driver serves only when it
evaluates in Python (the JVM evaluator serves its own from every JVM that runs its tasks)."""

from __future__ import annotations

from prometheus_client import REGISTRY

from fraudstream_detector import metrics

metrics.serve_evaluator_metrics()
metrics.serve_evaluator_metrics()  # idempotent


def _sample(name: str, labels: dict[str, str] | None = None) -> float:
    value = REGISTRY.get_sample_value(name, labels or {})
    return 0.0 if value is None else value


def test_observations_feed_every_metric() -> None:
    probes = {
        "count": ("fraud_alert_latency_seconds_count", None),
        "le_0.1": ("fraud_alert_latency_seconds_bucket", {"le": "0.1"}),
        "alerts": ("fraud_alerts_total", {"rule_id": "ns/bridge"}),
        "evaluated": ("fraud_transactions_total", {"outcome": "evaluated"}),
        "future": ("fraud_transactions_total", {"outcome": "future"}),
        "late": ("fraud_transactions_total", {"outcome": "late"}),
        "dlq": ("fraud_dlq_records_total", {"error": "unwritable"}),
        "applied": ("fraud_rule_applied_total", {"rule_id": "ns/bridge"}),
        "skipped": ("fraud_rule_skipped_total", {"rule_id": "ns/bridge", "reason": "missing"}),
        "rejected": ("fraud_rule_messages_rejected_total", {"reason": "unsupported-version"}),
        "ooo": ("fraud_out_of_order_total", None),
        "rows": ("fraud_input_rows_total", None),
    }
    before = {key: _sample(name, labels) for key, (name, labels) in probes.items()}
    metrics.record(
        {
            "alerts": [["ns/bridge", 40], ["ns/bridge", 250]],
            "transactions": {"evaluated": 7, "invalid": 1, "future": 3, "late": 2},
            "outOfOrder": 4,
            "dlq": {"unwritable": 1},
            "applied": {"ns/bridge": 5},
            "skipped": [["ns/bridge", "missing", 2]],
            "ruleMessagesRejected": {"unsupported-version": 1},
            "records": 9,
            "activeRules": 3,
        }
    )
    deltas = {key: _sample(name, labels) - before[key] for key, (name, labels) in probes.items()}
    assert deltas == {
        "count": 2, "le_0.1": 1, "alerts": 2, "evaluated": 7, "future": 3, "late": 2, "dlq": 1, "applied": 5,
        "skipped": 2, "rejected": 1, "ooo": 4, "rows": 9,
    }  # fmt: skip
    assert _sample("fraud_active_rules") == 3


def test_an_unknown_rule_count_leaves_the_gauge_alone() -> None:
    metrics.record({"activeRules": 5})
    metrics.record({"activeRules": -1})
    assert _sample("fraud_active_rules") == 5


def test_every_outcome_error_and_reason_is_exported_before_it_happens() -> None:
    for outcome in metrics.OUTCOMES:
        assert REGISTRY.get_sample_value("fraud_transactions_total", {"outcome": outcome}) is not None
    for error in metrics.DLQ_ERRORS:
        assert REGISTRY.get_sample_value("fraud_dlq_records_total", {"error": error}) is not None
    for reason in metrics.RULE_MESSAGE_REASONS:
        assert REGISTRY.get_sample_value("fraud_rule_messages_rejected_total", {"reason": reason}) is not None
