"""The alert rules the chart ships pass `promtool check rules`, and `promtool test rules` with series that fire each
alert and series that must not (Debian's prometheus package, installed by `make install`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.chart.rendering import RULES_FILE

RULE_TESTS = Path(__file__).with_name("prometheus-rules.test.yaml")

# The alerts that notice a detector that runs but detects nothing: (`for`, what the expression compares, what the
# description states), so that a changed threshold cannot leave the text an operator reads behind.
SILENCE_ALERTS = {
    "FraudRuleSkippingMost": ("5m", ["> 0.5", ">= 10"], ["more than 50%", "at least 10 skipped", "for 5 minutes"]),
    "FraudDetectorLagging": ("5m", ["> 60", "pending_records) > 0"], ["more than 60 s behind", "for 5 minutes"]),
    "FraudDetectorQueryRestarting": (None, ["[15m])) >= 3"], ["3 or more", "last 15 minutes"]),
    "FraudDetectorQueryDown": ("2m", ["fraud_query_up) == 0"], ["for 2 minutes"]),
    "FraudRuleMessagesRejected": (None, ["[10m])) > 0"], ["last 10 minutes", "alert: any"]),
    "FraudOutputUnwritable": (None, ['{error="unwritable"}[10m])) > 0'], ["last 10 minutes", "alert: any"]),
}


def promtool() -> str:
    found = shutil.which("promtool")
    assert found, (
        "promtool is missing: run `make install` (scripts/provision.sh monitoring installs Debian's prometheus)"
    )
    return found


def run(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run([promtool(), *args], capture_output=True, text=True, timeout=120, cwd=cwd, check=False)
    assert done.returncode == 0, f"promtool {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def test_promtool_check_rules() -> None:
    out = run("check", "rules", str(RULES_FILE))
    assert "SUCCESS" in out


def test_promtool_test_rules() -> None:
    out = run("test", "rules", RULE_TESTS.name, cwd=RULE_TESTS.parent)
    assert "SUCCESS" in out


def test_every_alert_has_a_firing_case_and_a_silent_case() -> None:
    alerts = {r["alert"] for g in yaml.safe_load(RULES_FILE.read_text())["groups"] for r in g["rules"] if "alert" in r}
    assert alerts >= {
        "FraudAlertLatencyP99High",
        "FraudAlertLatencyBudgetBurnFast",
        "FraudAlertLatencyBudgetBurnSlow",
        "FraudDetectorDown",
        "FraudRulesNotReady",
        "FraudDLQRateHigh",
        *SILENCE_ALERTS,
    }
    firing: set[str] = set()
    silent: set[str] = set()
    tests = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    for case in tests:
        for check in case.get("alert_rule_test", []):
            (firing if check["exp_alerts"] else silent).add(check["alertname"])
    assert firing == alerts, f"alerts never tested firing: {alerts - firing}"
    # A fired alert lists exactly the series it fires for, so every firing case also proves the others silent;
    # each alert also has an evaluation where nothing fires (pending or healthy).
    assert silent | {"FraudAlertLatencyBudgetBurnFast", "FraudAlertLatencyBudgetBurnSlow"} >= alerts


def test_latency_alert_is_p99_above_500_ms_for_5_minutes() -> None:
    rules = _rules_by_name()
    p99 = rules["FraudAlertLatencyP99High"]
    assert p99["for"] == "5m"
    assert p99["expr"].endswith("> 0.5")
    assert "histogram_quantile(0.99" in rules[p99["expr"].split()[0]]["expr"]


def _rules_by_name() -> dict[str, dict[str, Any]]:
    groups = yaml.safe_load(RULES_FILE.read_text())["groups"]
    return {r.get("alert", r.get("record")): r for g in groups for r in g["rules"]}


@pytest.mark.parametrize("name", sorted(SILENCE_ALERTS))
def test_silence_alert_thresholds_are_the_ones_its_description_states(name: str) -> None:
    for_, comparisons, stated = SILENCE_ALERTS[name]
    rule = _rules_by_name()[name]
    assert rule.get("for") == for_
    expr = " ".join(rule["expr"].split())
    for comparison in comparisons:
        assert comparison in expr, f"{name}: {comparison!r} not in {expr!r}"
    description = " ".join(rule["annotations"]["description"].split())
    for text in stated:
        assert text in description, f"{name}: the description does not state {text!r}"
    # Aggregated by namespace, so that a detector on several pods raises one alert, not one per pod.
    recorded = [_rules_by_name()[r]["expr"] for r in set(expr.split()) if r.startswith("fraudstream:")]
    assert all("by (namespace" in e for e in [expr, *recorded] if "fraud_" in e), name
