"""The chart on a real Kubernetes node, end to end: `make k8s-up && make k8s-deploy` in a state directory of the
test's own, then everything a user of the chart would check.

- Every pod Running and Ready: the operator, the development Kafka, the generator, the detector's driver and the
  executor pods it creates, and the node's Prometheus.
- A FraudRule applied with kubectl goes Ready=True, and the in-cluster generator's transactions raise its alerts on
  the alerts topic.
- Prometheus (configured from the chart's PodMonitor/ServiceMonitor) scrapes fraud_alert_latency_seconds from the
  executor pods, and every query of the dashboard and of the PrometheusRule returns data.
- `helm upgrade` with a changed value rolls the detector's pods, keeps every rule Ready, and loses no alert:
  transactions sent before, during and after the upgrade each raise theirs.
- `helm uninstall` leaves only what docs/kubernetes.md says stays.
- `make k8s-down` leaves nothing of the node behind (test_k8s_node checks that in depth; here, the node is gone).

Kafka is reached from a client pod of the test's own (kubectl exec of Python scripts with confluent-kafka, in the
fraudstream image), as a user of the cluster would: the broker's advertised name resolves only in the cluster.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from fraudstream_localstack.deploy import (
    IMAGES_ENV,
    Cluster,
    executor_pods,
    fraudrules_ready,
    pod_ready,
    read_env_file,
)
from fraudstream_localstack.layout import ROOT
from fraudstream_localstack.node_monitoring import DISCOVERY_ROLE
from fraudstream_localstack.processes import wait_for
from tests.prometheus_api import PrometheusApi
from tests.unit.chart.rendering import RULES_FILE, dashboard_exprs
from tests.unit.chart.test_dashboard import substitute

pytestmark = pytest.mark.integration

NAMESPACE = "fraudstream"
BOOTSTRAP = f"fraudstream-kafka.{NAMESPACE}.svc:9092"
CLIENT_NAMESPACE = "fraudstream-e2e"
CLIENT_POD = "kafka-client"
DEPLOY_TIMEOUT_S = 1800
ALERT_DEADLINE_S = 240
QUERY_DEADLINE_S = 300
EXECUTORS = 2
# Fires for each sentinel transaction (an amount of 2e12, beyond anything the generator sends), and for nothing else.
SENTINEL_AMOUNT = "2000000000000"
SENTINEL_RULE = """
apiVersion: fraudstream.io/v1alpha1
kind: FraudRule
metadata:
  name: e2e-sentinel-count
spec:
  groupingKeyNames: [payerId]
  aggregatorFunctionType: MAX
  aggregateFieldName: paymentAmount
  limitOperatorType: GREATER
  limit: 1000000000000
  windowMinutes: 5
"""
SENTINEL_RULE_ID = f"{NAMESPACE}/e2e-sentinel-count"
# Applies to every generated transaction and skips each one (the generator sends no feeAmount).
MISTAKEN_RULE = """
apiVersion: fraudstream.io/v1alpha1
kind: FraudRule
metadata:
  name: e2e-fee-sum-missing-field
spec:
  groupingKeyNames: [payerId]
  aggregatorFunctionType: SUM
  aggregateFieldName: feeAmount
  limitOperatorType: GREATER
  limit: 100
  windowMinutes: 60
"""
# A generated transaction above this amount alerts under the example rule beneficiary-max-7d (MAX > 5 000 000 of a
# beneficiary); the generator's fraud share sends such payments.
GENERATED_RULE_ID = f"{NAMESPACE}/beneficiary-max-7d"


def make(target: str, state_dir: Path, *extra: str, timeout_s: float = 900) -> str:
    """`make <target> K8S_STATE=<state_dir>` from the repository root; its output (a failure shows all of it)."""
    start = time.monotonic()
    proc = subprocess.run(["make", "-s", target, f"K8S_STATE={state_dir}", *extra], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=timeout_s)  # fmt: skip
    assert proc.returncode == 0, f"make {target} failed:\n{proc.stdout}\n{proc.stderr}"
    print(f"make {target}: {time.monotonic() - start:.0f} s")
    return proc.stdout


@dataclass(frozen=True)
class Deployed:
    state_dir: Path
    cluster: Cluster
    prometheus: PrometheusApi
    deploy_output: str


# Run by the client pod's Python (the fraudstream image has confluent-kafka): send `key|value` records; print the
# transaction ids of one rule's alerts, reading the alerts topic from its start to its end as of the call.
PRODUCE = """
import sys
from confluent_kafka import Producer
producer = Producer({"bootstrap.servers": sys.argv[1]})
for record in sys.argv[3:]:
    key, _, value = record.partition("|")
    producer.produce(sys.argv[2], key=key.encode(), value=value.encode())
sys.exit(producer.flush(30))
"""
READ_ALERTS = """
import json, sys
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
bootstrap, topic, rule_id = sys.argv[1:4]
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "e2e-reader", "enable.auto.commit": False})
partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions}
pending = {p for p, end in ends.items() if end > 0}
consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in pending])
while pending:
    message = consumer.poll(10)
    if message is None:
        sys.exit(f"no record within 10 s; still reading {sorted(pending)}")
    if message.error():
        continue
    if message.offset() >= ends[message.partition()] - 1:
        pending.discard(message.partition())
    alert = json.loads(message.value())
    if alert.get("ruleId") == rule_id:
        print(alert["transactionId"])
consumer.close()
"""


def client_python(cluster: Cluster, script: str, *args: str) -> str:
    """`script` run by Python in the test's client pod with `args` (bootstrap first)."""
    argv = ["python", "-c", script, BOOTSTRAP, *args]
    return cluster.kubectl("exec", "-n", CLIENT_NAMESPACE, CLIENT_POD, "--", *argv, timeout_s=120)


def client_pod(image: str) -> list[dict[str, Any]]:
    """A pod of the fraudstream image (Python with confluent-kafka) that idles, for `kubectl exec` of the scripts
    above; in a namespace of its own, so that the release's namespace holds only the release."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": CLIENT_NAMESPACE}},
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": CLIENT_POD, "namespace": CLIENT_NAMESPACE},
            "spec": {
                "containers": [{
                    "name": "client", "image": image, "imagePullPolicy": "Never", "command": ["sleep", "infinity"],
                    "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "512Mi"}},
                }],
                "terminationGracePeriodSeconds": 0,
            },
        },
    ]  # fmt: skip


def produce(cluster: Cluster, topic: str, records: list[tuple[str, str]]) -> None:
    client_python(cluster, PRODUCE, topic, *[f"{key}|{value}" for key, value in records])


def alerted_transactions(cluster: Cluster, rule_id: str) -> set[str]:
    """The transaction ids of every alert of `rule_id` on the alerts topic so far."""
    return set(client_python(cluster, READ_ALERTS, "alerts", rule_id).split())


def transaction(tx_id: str, payer: str) -> tuple[str, str]:
    value = {"transactionId": tx_id, "eventTime": int(time.time() * 1000), "payerId": payer,
             "beneficiaryId": "e2e-beneficiary", "paymentAmount": SENTINEL_AMOUNT, "paymentType": "CRD"}  # fmt: skip
    return payer, json.dumps(value)


def apply_manifest(cluster: Cluster, manifest: str) -> None:
    cluster.kubectl("apply", "-n", NAMESPACE, "-f", "-", stdin=manifest)


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    state_dir = tmp_path_factory.mktemp("k8s-deploy")
    make("k8s-up", state_dir)
    try:
        output = make("k8s-deploy", state_dir, timeout_s=DEPLOY_TIMEOUT_S)
        cluster = Cluster(Path(read_env_file(state_dir / "k8s.env")["KUBECONFIG"]), log=print)
        cluster.apply(client_pod(read_env_file(IMAGES_ENV)["FRAUDSTREAM_IMAGE"]))
        cluster.kubectl("wait", "-n", CLIENT_NAMESPACE, f"pod/{CLIENT_POD}", "--for=condition=Ready", "--timeout=120s")
        url = output.strip().splitlines()[-1].split("Prometheus: ")[-1]
        yield Deployed(state_dir, cluster, PrometheusApi(url), output)
    finally:
        make("k8s-down", state_dir)
    assert not (state_dir / "k8s.env").exists() or "KUBECONFIG" not in (state_dir / "k8s.env").read_text()


def test_every_pod_of_the_release_and_prometheus_is_running_and_ready(deployed: Deployed) -> None:
    pods = deployed.cluster.get("pods", "-n", NAMESPACE)["items"]
    components = {p["metadata"]["labels"].get("app.kubernetes.io/component") for p in pods}
    assert {"operator", "detector", "executor", "generator", "kafka"} <= components, components
    assert all(pod_ready(p) for p in pods), [p["metadata"]["name"] for p in pods if not pod_ready(p)]
    executors = executor_pods(deployed.cluster, NAMESPACE)
    assert len(executors) == EXECUTORS and all(pod_ready(p) for p in executors)
    prometheus = deployed.cluster.get("pods", "-n", "monitoring", "-l", "app.kubernetes.io/name=prometheus")["items"]
    assert len(prometheus) == 1 and pod_ready(prometheus[0])
    assert not fraudrules_ready(deployed.cluster, NAMESPACE)
    assert deployed.prometheus.ready(), deployed.deploy_output


def test_a_fraudrule_applied_with_kubectl_goes_ready_and_raises_alerts(deployed: Deployed) -> None:
    cluster = deployed.cluster
    apply_manifest(cluster, SENTINEL_RULE)
    wait_for(lambda: "e2e-sentinel-count" not in fraudrules_ready(cluster, NAMESPACE), 120, "sentinel rule Ready")
    # The rule reaches the detector through the rules topic; transactions sent until it alerts.
    payer = f"e2e-{uuid.uuid4().hex[:8]}"
    sent: list[str] = []

    def alerted() -> bool:
        sent.append(f"{payer}-{len(sent)}")
        produce(cluster, "transactions", [transaction(sent[-1], payer)])
        return bool(alerted_transactions(cluster, SENTINEL_RULE_ID) & set(sent))

    wait_for(alerted, ALERT_DEADLINE_S, "an alert of the kubectl-applied rule", interval_s=1)
    # ...and the in-cluster generator's own transactions raise alerts of the example rules.
    wait_for(lambda: alerted_transactions(cluster, GENERATED_RULE_ID), ALERT_DEADLINE_S,
             f"an alert of {GENERATED_RULE_ID} from the generator's transactions", interval_s=5)  # fmt: skip


def test_prometheus_scrapes_alert_latency_from_the_executor_pods(deployed: Deployed) -> None:
    prometheus = deployed.prometheus
    wait_for(prometheus.targets_up, 120, "every Prometheus target up", interval_s=2)
    jobs = {t["labels"]["job"] for t in prometheus.active_targets()}
    assert jobs == {"fraudstream-detector", "fraudstream-operator"}
    executor_names = {p["metadata"]["name"] for p in executor_pods(deployed.cluster, NAMESPACE)}
    expr = 'sum by (pod) (fraud_alert_latency_seconds_count{job="fraudstream-detector"})'

    def from_executors() -> set[str]:
        return {s["metric"]["pod"] for s in prometheus.query(expr) if float(s["value"][1]) > 0} & executor_names

    wait_for(lambda: from_executors() or None, QUERY_DEADLINE_S, "alert latency from an executor pod", interval_s=2)


def provoke_failures(cluster: Cluster) -> None:
    """The failures whose series appear only once they happen: rule skips, a rejected rule message, dead letters."""
    apply_manifest(cluster, MISTAKEN_RULE)
    wait_for(lambda: "e2e-fee-sum-missing-field" not in fraudrules_ready(cluster, NAMESPACE), 120, "mistaken rule")
    produce(cluster, "rules", [(f"{NAMESPACE}/not-a-rule", "not json")])
    produce(cluster, "transactions", [("bad", "not json")] * 3)


def test_every_dashboard_and_alert_rule_query_returns_data(deployed: Deployed) -> None:
    prometheus = deployed.prometheus
    provoke_failures(deployed.cluster)
    # Grafana's variables as Grafana would substitute them: the namespace label is the release's.
    values = {"$__rate_interval": "30s", "$namespace": NAMESPACE}  # $__rate_interval: a few of the 5 s scrapes
    queries = {substitute(expr, values): title for title, expr in dashboard_exprs()}
    assert len(queries) >= 26
    prometheus.wait_answered(queries, QUERY_DEADLINE_S, interval_s=2)
    rules = prometheus.rules()
    assert len(rules) == sum(len(g["rules"]) for g in yaml.safe_load(RULES_FILE.read_text())["groups"])
    assert not [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
    # Every recording rule has data; the alerts provoked above are raised by the real rule evaluation.
    recorded = [r["name"] for r in rules if r["type"] == "recording"]
    wait_for(lambda: all(prometheus.has_data(name) for name in recorded), QUERY_DEADLINE_S, "recording rules")
    wait_for(lambda: prometheus.alerts("FraudRuleMessagesRejected", "firing") or None, 180,
             "FraudRuleMessagesRejected firing", interval_s=2)  # fmt: skip
    skipping = wait_for(lambda: prometheus.alerts("FraudRuleSkippingMost", "pending", "firing") or None, 180,
                        "FraudRuleSkippingMost pending", interval_s=2)  # fmt: skip
    assert {a["rule_id"] for a in skipping} == {f"{NAMESPACE}/e2e-fee-sum-missing-field"}


def test_helm_upgrade_rolls_the_detector_keeps_rules_ready_and_loses_no_alert(deployed: Deployed) -> None:
    cluster = deployed.cluster
    apply_manifest(cluster, SENTINEL_RULE)
    before = {p["metadata"]["uid"] for p in cluster.get("pods", "-n", NAMESPACE)["items"]
              if p["metadata"]["labels"].get("app.kubernetes.io/component") in ("detector", "executor")}  # fmt: skip
    payer = f"e2e-upgrade-{uuid.uuid4().hex[:8]}"
    sent: list[str] = []

    def send(batch: str, n: int) -> None:
        ids = [f"{payer}-{batch}-{i}" for i in range(n)]
        produce(cluster, "transactions", [transaction(tx, payer) for tx in ids])
        sent.extend(ids)

    send("before", 3)
    upgrade = subprocess.Popen(
        ["make", "-s", "k8s-deploy", f"K8S_STATE={deployed.state_dir}",
         "K8S_DEPLOY_ARGS=--set detector.livenessTimeoutSeconds=150"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        # During the roll: the old driver stops, the new one starts and creates new executors.
        def rolled() -> bool:
            pods = cluster.get("pods", "-n", NAMESPACE, "-l", "app.kubernetes.io/component=detector")["items"]
            return any(p["metadata"]["uid"] not in before for p in pods)

        wait_for(rolled, 600, "a new detector driver pod", interval_s=2)
        send("during", 3)
        out, _ = upgrade.communicate(timeout=DEPLOY_TIMEOUT_S)
    finally:
        if upgrade.poll() is None:
            upgrade.kill()
            upgrade.wait()
    assert upgrade.returncode == 0, out
    after = {p["metadata"]["uid"] for p in cluster.get("pods", "-n", NAMESPACE)["items"]
             if p["metadata"]["labels"].get("app.kubernetes.io/component") in ("detector", "executor")}  # fmt: skip
    assert not before & after, "the detector's driver and executors were replaced"
    assert len(executor_pods(cluster, NAMESPACE)) == EXECUTORS
    assert not fraudrules_ready(cluster, NAMESPACE), "every FraudRule Ready after the upgrade"
    send("after", 3)

    def every_alert() -> set[str]:
        return set(sent) - alerted_transactions(cluster, SENTINEL_RULE_ID)

    wait_for(lambda: not every_alert(), ALERT_DEADLINE_S, "an alert for every sentinel transaction", interval_s=5)


def test_helm_uninstall_leaves_only_what_the_docs_say_stays(deployed: Deployed) -> None:
    cluster = deployed.cluster
    # docs/kubernetes.md: delete the FraudRules while the operator runs (it removes their finalizers), then uninstall.
    cluster.kubectl("delete", "fraudrules", "--all", "-n", NAMESPACE, "--wait=true", "--timeout=120s")
    cluster.helm("uninstall", "fraudstream", "-n", NAMESPACE, "--wait", "--timeout", "5m")
    wait_for(lambda: not cluster.get("pods", "-n", NAMESPACE)["items"], 300, "every pod of the release gone")
    left = {(o["kind"], o["metadata"]["name"]) for o in cluster.get(
        "all,configmaps,secrets,persistentvolumeclaims,serviceaccounts,roles,rolebindings,networkpolicies,"
        "leases,podmonitors,servicemonitors,prometheusrules,fraudrules", "-n", NAMESPACE)["items"]}  # fmt: skip
    kept = {
        ("Secret", "fraudstream-spark-auth"),  # helm.sh/resource-policy: keep, so a reinstall keeps its executors' key
        ("PersistentVolumeClaim", "fraudstream-checkpoint"),  # keep: the detector's progress and state
        ("PersistentVolumeClaim", "data-fraudstream-kafka-0"),  # a StatefulSet's claims outlive it
        ("ConfigMap", "kube-root-ca.crt"),  # Kubernetes' own, in every namespace
        ("ServiceAccount", "default"),
        ("Lease", "fraudstream-operator"),  # the operator's leader election: nothing deletes a Lease
        # make k8s-deploy's Prometheus (not the chart's) may read this namespace's pods, Services and Endpoints.
        ("Role", DISCOVERY_ROLE),
        ("RoleBinding", DISCOVERY_ROLE),
    }
    assert left <= kept, left - kept
    assert ("Secret", "fraudstream-spark-auth") in left
    crd = cluster.get("crd", "fraudrules.fraudstream.io")
    assert crd["metadata"]["name"] == "fraudrules.fraudstream.io"  # Helm never deletes a chart's CRDs
    assert not [p for p in cluster.get("validatingadmissionpolicies")["items"] if p["metadata"]["name"].startswith(
        f"{NAMESPACE}-fraudstream")]  # fmt: skip
