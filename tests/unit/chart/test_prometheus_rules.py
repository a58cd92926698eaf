"""The alert rules the chart ships pass `promtool check rules`, and `promtool test rules` with series that fire each
alert and series that must not (Debian's prometheus package, installed by `make install`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from tests.unit.chart.rendering import RULES_FILE

RULE_TESTS = Path(__file__).with_name("prometheus-rules.test.yaml")


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
    rules = {
        r.get("alert", r.get("record")): r for g in yaml.safe_load(RULES_FILE.read_text())["groups"] for r in g["rules"]
    }
    p99 = rules["FraudAlertLatencyP99High"]
    assert p99["for"] == "5m"
    assert p99["expr"].endswith("> 0.5")
    assert "histogram_quantile(0.99" in rules[p99["expr"].split()[0]]["expr"]
