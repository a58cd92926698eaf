"""Every PromQL query of the Grafana dashboard returns data from a real Prometheus (Debian's package) scraping the
running local stack: Kafka, kube-apiserver, the operator with the example rules, the Spark detector and the
generator, all on free ports. The chart's alert rules are loaded into the same Prometheus and must evaluate cleanly.

Grafana's variables are substituted the way Grafana would: $__rate_interval by a window of a few scrapes (the
scrape interval here is 1 s), $namespace by the namespace label the scrape configuration attaches.

Some series exist only once something goes wrong, so the test provokes it once Prometheus scrapes: a FraudRule whose
aggregate field the generator's transactions lack (per-rule skips), a record on the rules topic that is not JSON (a
rejected rule message) and malformed transactions (dead letters). The alerts for the first two must then be raised
by the real rule evaluation, for exactly what was provoked."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fraudstream_localstack.components import detector, generator
from fraudstream_localstack.operator_component import OperatorComponent, is_ready, kubectl
from fraudstream_localstack.processes import ManagedProcess, free_port, wait_for
from fraudstream_localstack.stack import Component, LocalStack, StackConfig
from tests.kafka_helpers import produce
from tests.prometheus_api import PrometheusApi
from tests.unit.chart.rendering import RULES_FILE, dashboard_exprs
from tests.unit.chart.test_dashboard import TEST_SUBSTITUTIONS, substitute

pytestmark = pytest.mark.integration

NAMESPACE = TEST_SUBSTITUTIONS["$namespace"]
QUERY_DEADLINE_S = 180
ALERT_DEADLINE_S = 120
# A rule that applies to every generated transaction and skips each one: the generator sends no feeAmount.
MISTAKEN_RULE = """
apiVersion: fraudstream.io/v1alpha1
kind: FraudRule
metadata:
  name: fee-sum-missing-field
  namespace: default
spec:
  groupingKeyNames: [payerId]
  aggregatorFunctionType: SUM
  aggregateFieldName: feeAmount
  limitOperatorType: GREATER
  limit: 100
  windowMinutes: 60
"""
MISTAKEN_RULE_ID = "default/fee-sum-missing-field"
# Alerts that must stay silent on the healthy stack (the latency SLO depends on this machine's load).
QUIET_ALERTS = {
    "FraudDetectorDown",
    "FraudDetectorAbsent",
    "FraudOperatorDown",
    "FraudRulesNotReady",
    "FraudDetectorQueryDown",
    "FraudDetectorQueryRestarting",
    "FraudOutputUnwritable",
    "FraudDetectorLagging",
}


class Prometheus(PrometheusApi):
    """Debian's prometheus binary on a free port, a temporary TSDB, a 1 s scrape interval."""

    def __init__(self, work_dir: Path, targets: dict[str, list[str]]) -> None:
        binary = shutil.which("prometheus")
        assert binary, "the prometheus server is missing: run `make install` (scripts/provision.sh monitoring)"
        port = free_port()
        super().__init__(f"http://127.0.0.1:{port}")
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(RULES_FILE)],
            "scrape_configs": [
                {
                    "job_name": job,
                    "static_configs": [{"targets": hosts, "labels": {"namespace": NAMESPACE, "pod": job}}],
                }
                for job, hosts in targets.items()
            ],
        }
        config_file = work_dir / "prometheus.yml"
        config_file.write_text(yaml.safe_dump(config))
        argv = [
            binary,
            f"--config.file={config_file}",
            f"--storage.tsdb.path={work_dir / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ]
        self._proc = ManagedProcess("prometheus", argv, work_dir / "prometheus.log")

    def start(self) -> Prometheus:
        self._proc.start()
        wait_for(lambda: not self._proc.alive() or self.ready(), 60, "prometheus", interval_s=0.3)
        self._proc.check_alive()
        return self

    def stop(self) -> None:
        self._proc.stop()


@pytest.fixture(scope="module")
def running_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """The local stack on free ports, with its kubeconfig and logs in a temporary directory."""
    work = tmp_path_factory.mktemp("stack")
    # Its kubeconfig is never `make up`'s .local/kubeconfig: a developer's stack may be running.
    config = StackConfig.isolated(work)
    components: list[Component] = [
        OperatorComponent(),
        # Short Real-time Mode batches, so that the batch-duration panels have data within the test's deadline.
        detector(config, work / "checkpoint", ["--checkpoint-interval", "10 seconds"], log_dir=work),
        generator(rate=50, log_dir=work),
    ]
    stack = LocalStack(config, components)
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()


def provoke_failures(stack: LocalStack, work: Path) -> None:
    """The failures whose series appear only once they happen: rule skips, a rejected rule message, dead letters."""
    kubeconfig = stack.kube.kubeconfig
    manifest = work / "mistaken-rule.yaml"
    manifest.write_text(MISTAKEN_RULE)
    kubectl(kubeconfig, "apply", "-f", str(manifest))
    wait_for(
        lambda: is_ready(json.loads(kubectl(kubeconfig, "get", "-f", str(manifest), "-o", "json"))),
        60,
        "the mistaken FraudRule Ready",
        interval_s=0.5,
    )
    produce(stack.kafka_settings, stack.config.topics.rules, [(b"default/not-a-rule", b"not json")])
    produce(stack.kafka_settings, stack.config.topics.transactions, [(b"bad", b"not json")] * 3)


def host(metrics_url: str) -> str:
    """host:port of a /metrics URL, as a scrape target."""
    return metrics_url.removeprefix("http://").removesuffix("/metrics")


@pytest.fixture(scope="module")
def prometheus(running_stack: LocalStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    """Prometheus scraping the stack with the chart's rules; failures provoked once it has scraped every target
    (so that counters are seen at zero before they rise)."""
    env = running_stack.env()
    targets = {
        # The driver's query metrics and the evaluation metrics its JVM serves (its tasks run in it here).
        "fraudstream-detector": [host(env["DETECTOR_METRICS_URL"]), host(env["DETECTOR_EVALUATOR_METRICS_URL"])],
        "fraudstream-operator": [host(env["OPERATOR_METRICS_URL"])],
    }
    work = tmp_path_factory.mktemp("prometheus")
    server = Prometheus(work, targets).start()
    try:
        wait_for(server.targets_up, 30, "every scrape target up", interval_s=0.5)
        provoke_failures(running_stack, work)
        yield server
    finally:
        server.stop()


def test_every_dashboard_query_returns_data_from_a_real_prometheus(prometheus: Prometheus) -> None:
    queries = {substitute(expr): title for title, expr in dashboard_exprs()}
    assert len(queries) >= 26
    prometheus.wait_answered(queries, QUERY_DEADLINE_S, interval_s=1.0)

    rules = prometheus.rules()
    assert len(rules) == sum(len(g["rules"]) for g in yaml.safe_load(RULES_FILE.read_text())["groups"])
    unhealthy = [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
    assert not unhealthy, unhealthy
    assert not prometheus.firing() & QUIET_ALERTS


def test_alerts_see_the_mistaken_rule_and_the_rejected_rule_message(prometheus: Prometheus) -> None:
    # No `for`: fires as soon as the rejection is counted.
    rejected = wait_for(
        lambda: prometheus.alerts("FraudRuleMessagesRejected", "firing") or None,
        ALERT_DEADLINE_S,
        "FraudRuleMessagesRejected firing",
        interval_s=1.0,
    )
    assert [(a["namespace"], a["reason"]) for a in rejected] == [(NAMESPACE, "unparseable")]
    # `for: 5m` keeps it pending within this test; pending means its expression selects the rule.
    skipping = wait_for(
        lambda: prometheus.alerts("FraudRuleSkippingMost", "pending", "firing") or None,
        ALERT_DEADLINE_S,
        "FraudRuleSkippingMost pending",
        interval_s=1.0,
    )
    assert [(a["namespace"], a["rule_id"]) for a in skipping] == [(NAMESPACE, MISTAKEN_RULE_ID)]
    by_reason = f'sum by (reason) (fraud_rule_skipped_total{{rule_id="{MISTAKEN_RULE_ID}"}})'
    skipped = prometheus.api("query", query=by_reason)
    assert [series["metric"]["reason"] for series in skipped["result"]] == ["missing"]
    assert not prometheus.firing() & QUIET_ALERTS
