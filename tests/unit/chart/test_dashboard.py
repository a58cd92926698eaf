"""The Grafana dashboard shows what the issue asks for, every query is valid PromQL over the project's metric names,
and it works with any Prometheus data source (kube-prometheus-stack's included)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fraudstream_dashboard.overview import render
from tests.unit.chart.rendering import DASHBOARD_FILE, RULES_FILE, dashboard, dashboard_exprs

# Grafana variables as the integration test substitutes them for a real Prometheus.
TEST_SUBSTITUTIONS = {"$__rate_interval": "15s", "$namespace": "fraudstream-test"}


def substitute(expr: str, values: dict[str, str] = TEST_SUBSTITUTIONS) -> str:
    for variable, value in values.items():
        expr = expr.replace(variable, value)
    assert "$" not in expr, f"unsubstituted variable in {expr}"
    return expr


def panel(title_part: str) -> dict[str, Any]:
    hits = [p for p in dashboard()["panels"] if title_part.lower() in p["title"].lower()]
    assert len(hits) == 1, f"expected one panel titled *{title_part}*, got {[p['title'] for p in hits]}"
    hit: dict[str, Any] = hits[0]
    return hit


def test_the_committed_json_is_what_the_sdk_code_renders() -> None:
    """The chart ships exactly what src/fraudstream_dashboard builds with grafana-foundation-sdk."""
    assert DASHBOARD_FILE.read_text() == render(), "charts/fraudstream/files/dashboard.json is stale: `make dashboard`"


def test_dashboard_identity_and_variables() -> None:
    d = dashboard()
    assert d["uid"] == "fraudstream-overview"
    variables = {v["name"]: v for v in d["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    assert variables["namespace"]["includeAll"] is True
    for p in d["panels"]:
        assert p["datasource"]["uid"] == "${datasource}", p["title"]
        for t in p["targets"]:
            assert t["datasource"]["uid"] == "${datasource}", p["title"]
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))


def test_latency_panel_has_p50_p95_p99_with_300_and_500_ms_lines() -> None:
    latency = panel("latency (p50")
    exprs = [t["expr"] for t in latency["targets"]]
    for quantile in ("0.50", "0.95", "0.99"):
        assert any(f"histogram_quantile({quantile}," in e and "fraud_alert_latency_seconds_bucket" in e for e in exprs)
    defaults = latency["fieldConfig"]["defaults"]
    assert defaults["unit"] == "s"
    assert [s["value"] for s in defaults["thresholds"]["steps"]][1:] == [0.3, 0.5]
    assert defaults["custom"]["thresholdsStyle"]["mode"] == "line"


@pytest.mark.parametrize(
    ("title_part", "metrics"),
    [
        ("alerts per second by rule", ["fraud_alerts_total", "rule_id"]),
        ("input and processing", ["fraud_input_rows_total", "fraud_transactions_total"]),
        ("batch duration", ["fraud_batch_duration_seconds_bucket", "fraud_batch_phase_seconds"]),
        ("active rules", ["fraud_active_rules", "fraudstream_operator_rules_managed"]),
        ("dlq and late", ["fraud_dlq_records_total", 'outcome="late"']),
        ("state size", ["fraud_state_rows", "fraud_state_memory_used_bytes"]),
        ("operator publishes", ["fraudstream_operator_publishes_total", "result"]),
        ("input lag", ["fraud_input_lag_seconds", "fraud_input_pending_records"]),
        ("streaming query", ["fraud_query_up", "fraud_query_restarts_total"]),
        ("rule skips by rule", ["fraud_rule_skipped_total", "rule_id, reason"]),
        ("skip ratio", ["fraud_rule_skipped_total", "fraud_rule_applied_total", "by (rule_id)"]),
        ("rejected rule messages", ["fraud_rule_messages_rejected_total", "by (reason)"]),
        ("out-of-order", ["fraud_out_of_order_total", 'outcome="evaluated"']),
        (
            "window cache",
            ["fraud_window_cache_bytes", "fraud_window_cache_budget_bytes", "fraud_window_cache_reads_total"],
        ),
        ("cache admission", ["fraud_window_cache_dropping_key_groups", "by (bucket)"]),
    ],
)
def test_panel_shows(title_part: str, metrics: list[str]) -> None:
    text = " ".join(t["expr"] for t in panel(title_part)["targets"])
    for metric in metrics:
        assert metric in text, f"{title_part}: {metric} missing"


@pytest.mark.parametrize(
    ("title_part", "alert", "threshold"),
    [("input lag", "FraudDetectorLagging", 60), ("skip ratio", "FraudRuleSkippingMost", 0.5)],
)
def test_red_line_is_the_alert_threshold(title_part: str, alert: str, threshold: float) -> None:
    defaults = panel(title_part)["fieldConfig"]["defaults"]
    assert defaults["custom"]["thresholdsStyle"]["mode"] == "line"
    assert defaults["thresholds"]["steps"][-1] == {"color": "red", "value": threshold}
    rules = {r.get("alert"): r for g in yaml.safe_load(RULES_FILE.read_text())["groups"] for r in g["rules"]}
    assert f"> {threshold}" in rules[alert]["expr"]


def test_rate_queries_use_the_rate_interval_and_every_query_the_namespace_variable() -> None:
    for title, expr in dashboard_exprs():
        for window in re.findall(r"\[([^\]]+)\]", expr):
            assert window == "$__rate_interval", f"{title}: fixed range [{window}]"
        assert 'namespace=~"$namespace"' in expr, f"{title}: not filtered by $namespace"


def test_every_query_parses_as_promql(tmp_path: Path) -> None:
    """promtool parses each query (as a recording rule); the real-Prometheus test checks they return data."""
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: run `make install`"
    rules = ["groups:", "  - name: dashboard", "    rules:"]
    for i, (_, expr) in enumerate(dashboard_exprs()):
        rules += [
            f"      - record: dashboard:query_{i}",
            f"        expr: '{substitute(expr).replace(chr(39), chr(39) * 2)}'",
        ]
    path = tmp_path / "dashboard-queries.yaml"
    path.write_text("\n".join(rules) + "\n")
    done = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
