"""The JVM evaluator's observations become the detector's Prometheus metrics (pure part of the bridge)."""

from __future__ import annotations

from prometheus_client import REGISTRY

from fraudstream_detector.jvm_evaluator import apply_observations


def _sample(name: str, labels: dict[str, str] | None = None) -> float:
    value = REGISTRY.get_sample_value(name, labels or {})
    return 0.0 if value is None else value


def test_observations_feed_the_same_metrics_as_the_python_evaluator() -> None:
    before = {
        "count": _sample("fraud_alert_latency_seconds_count"),
        "le_0.1": _sample("fraud_alert_latency_seconds_bucket", {"le": "0.1"}),
        "alerts": _sample("fraud_alerts_total", {"rule_id": "ns/bridge"}),
        "evaluated": _sample("fraud_transactions_total", {"outcome": "evaluated"}),
        "late": _sample("fraud_transactions_total", {"outcome": "late"}),
        "dlq": _sample("fraud_dlq_records_total", {"error": "non-numeric paymentAmount"}),
        "rows": _sample("fraud_input_rows_total"),
    }
    apply_observations(
        {
            "alerts": [["ns/bridge", 40], ["ns/bridge", 250]],
            "evaluated": 7,
            "invalid": 1,
            "late": 2,
            "dlq": {"non-numeric paymentAmount": 1},
            "records": 9,
            "activeRules": 3,
        }
    )
    assert _sample("fraud_alert_latency_seconds_count") - before["count"] == 2
    assert _sample("fraud_alert_latency_seconds_bucket", {"le": "0.1"}) - before["le_0.1"] == 1
    assert _sample("fraud_alerts_total", {"rule_id": "ns/bridge"}) - before["alerts"] == 2
    assert _sample("fraud_transactions_total", {"outcome": "evaluated"}) - before["evaluated"] == 7
    assert _sample("fraud_transactions_total", {"outcome": "late"}) - before["late"] == 2
    assert _sample("fraud_dlq_records_total", {"error": "non-numeric paymentAmount"}) - before["dlq"] == 1
    assert _sample("fraud_input_rows_total") - before["rows"] == 9
    assert _sample("fraud_active_rules") == 3


def test_an_unknown_rule_count_leaves_the_gauge_alone() -> None:
    apply_observations(
        {"alerts": [], "evaluated": 0, "invalid": 0, "late": 0, "dlq": {}, "records": 0, "activeRules": 5}
    )
    apply_observations(
        {"alerts": [], "evaluated": 0, "invalid": 0, "late": 0, "dlq": {}, "records": 0, "activeRules": -1}
    )
    assert _sample("fraud_active_rules") == 5
