"""Prometheus' HTTP API, as the integration tests read it: a Prometheus they run themselves (Debian's, on the host)
or the local node's (make k8s-deploy)."""

from __future__ import annotations

import json
import math
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from fraudstream_localstack.processes import wait_for


class PrometheusApi:
    """The API of the Prometheus at `base_url` (http://host:port)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    def ready(self) -> bool:
        with urllib.request.urlopen(f"{self.base_url}/-/ready", timeout=2) as resp:
            return bool(resp.status == 200)

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.base_url}/api/v1/{path}?{query}", timeout=10) as resp:
            body = json.loads(resp.read())
        assert body["status"] == "success", body
        return body["data"]

    def active_targets(self) -> list[dict[str, Any]]:
        targets: list[dict[str, Any]] = self.api("targets")["activeTargets"]
        return targets

    def targets_up(self) -> bool:
        active = self.active_targets()
        return bool(active) and all(t["health"] == "up" for t in active)

    def query(self, expr: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self.api("query", query=expr)["result"]
        return result

    def has_data(self, expr: str) -> bool:
        """True when `expr` returns at least one series with a number (not NaN) right now."""
        return any(not math.isnan(float(series["value"][1])) for series in self.query(expr))

    def wait_answered(self, queries: Mapping[str, str], deadline_s: float, interval_s: float) -> None:
        """Returns once every query of `queries` (expression -> the title it is shown under) has had data at least
        once; raises AssertionError naming, with their titles, those that had none within `deadline_s`."""
        pending = dict(queries)

        def all_answered() -> bool:
            for expr in list(pending):
                if self.has_data(expr):
                    del pending[expr]
            return not pending

        try:
            wait_for(all_answered, deadline_s, "every query returning data", interval_s=interval_s)
        except TimeoutError as exc:
            missing = "\n".join(f"  [{title}] {expr}" for expr, title in pending.items())
            raise AssertionError(f"queries without data after {deadline_s}s:\n{missing}") from exc

    def alerts(self, name: str, *states: str) -> list[dict[str, str]]:
        """The labels of every alert `name` in one of `states` (pending, firing)."""
        found = self.api("alerts")["alerts"]
        return [a["labels"] for a in found if a["labels"]["alertname"] == name and a["state"] in states]

    def firing(self) -> set[str]:
        """The names of the alerts firing now."""
        return {a["labels"]["alertname"] for a in self.api("alerts")["alerts"] if a["state"] == "firing"}

    def rules(self) -> list[dict[str, Any]]:
        """Every loaded rule with its health."""
        return [rule for group in self.api("rules")["groups"] for rule in group["rules"]]
