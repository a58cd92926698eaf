"""operator/rbac.yaml grants what the operator needs and nothing more: checked with `kubectl auth can-i`, and by
running the operator over all namespaces as that service account on an API server of its own."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_localstack.kube import KubeControlPlane
from fraudstream_localstack.layout import BIN
from fraudstream_localstack.operator_component import install_crd, kubectl
from fraudstream_localstack.processes import wait_for
from tests.integration.operator.conftest import StartReplica, configure_operator
from tests.integration.operator.harness import BASE_SPEC, FraudRules, OperatorHarness, latest_by_key, read_records
from tests.kube_helpers import api_client

pytestmark = pytest.mark.integration

RBAC_PATH = Path(__file__).resolve().parents[3] / "operator" / "rbac.yaml"
SERVICE_ACCOUNT = "system:serviceaccount:fraudstream:fraudstream-operator"
SERVICE_ACCOUNT_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:fraudstream", "system:authenticated"]


def refused(text: str) -> bool:
    """Whether `text` reports a refusal by the API server, in any of the forms it takes: the kubernetes client's
    `Reason: Forbidden`, kopf's `APIForbiddenError`, the Status message `... is forbidden: ...`. Not a bare `403`,
    which a log line's timestamp holds whenever its milliseconds are 403."""
    return "forbidden" in text.lower()


def install_rbac(kubeconfig: Path) -> None:
    namespaces = kubectl(kubeconfig, "get", "namespaces", "-o", "name")
    if "namespace/fraudstream\n" not in namespaces:
        kubectl(kubeconfig, "create", "namespace", "fraudstream")
    kubectl(kubeconfig, "apply", "-f", str(RBAC_PATH))


def can_i(kubeconfig: Path, verb: str, resource: str, *scope: str) -> bool:
    argv = [str(BIN / "kubectl"), f"--kubeconfig={kubeconfig}", "auth", "can-i", verb, resource, *scope]
    done = subprocess.run([*argv, f"--as={SERVICE_ACCOUNT}"], capture_output=True, text=True, check=False)
    assert done.stdout.strip() in ("yes", "no"), done.stderr
    return done.stdout.strip() == "yes"


ALLOWED = [
    ("list", "fraudrules.fraudstream.io", "--all-namespaces"),
    ("watch", "fraudrules.fraudstream.io", "--all-namespaces"),
    ("patch", "fraudrules.fraudstream.io", "-n", "payments"),
    ("patch", "fraudrules.fraudstream.io/status", "-n", "payments"),
    ("create", "events", "-n", "payments"),
    ("create", "leases.coordination.k8s.io", "-n", "fraudstream"),
    ("get", "leases.coordination.k8s.io/fraudstream-operator", "-n", "fraudstream"),
    ("update", "leases.coordination.k8s.io/fraudstream-operator", "-n", "fraudstream"),
]
DENIED = [
    ("get", "secrets", "-n", "fraudstream"),
    ("list", "secrets", "--all-namespaces"),
    ("delete", "fraudrules.fraudstream.io", "-n", "payments"),
    ("create", "fraudrules.fraudstream.io", "-n", "payments"),
    ("update", "fraudrules.fraudstream.io", "-n", "payments"),
    ("update", "fraudrules.fraudstream.io/status", "-n", "payments"),
    ("list", "namespaces"),
    ("list", "customresourcedefinitions.apiextensions.k8s.io"),
    ("create", "pods", "-n", "payments"),
    ("delete", "events", "-n", "payments"),
    ("create", "clusterrolebindings.rbac.authorization.k8s.io"),
    ("get", "leases.coordination.k8s.io/kube-scheduler", "-n", "fraudstream"),
    ("update", "leases.coordination.k8s.io/kube-scheduler", "-n", "fraudstream"),
    ("list", "leases.coordination.k8s.io", "-n", "fraudstream"),
    ("delete", "leases.coordination.k8s.io/fraudstream-operator", "-n", "fraudstream"),
    ("patch", "leases.coordination.k8s.io/fraudstream-operator", "-n", "fraudstream"),
    ("create", "leases.coordination.k8s.io", "-n", "payments"),
    ("get", "leases.coordination.k8s.io/fraudstream-operator", "-n", "payments"),
]


@pytest.fixture(scope="module")
def rbac_installed(kubeconfig: Path, fraudrule_crd: None) -> Iterator[Path]:
    """operator/rbac.yaml on the session API server, removed afterwards: its cluster-scoped names are those of a
    Helm release called fraudstream, which the chart tests install later in the same session."""
    install_rbac(kubeconfig)
    try:
        yield kubeconfig
    finally:
        kubectl(kubeconfig, "delete", "--ignore-not-found", "--wait=false", "-f", str(RBAC_PATH))


@pytest.mark.parametrize("check", ALLOWED, ids=lambda c: " ".join(c))
def test_the_operator_may_do_what_it_needs(rbac_installed: Path, check: tuple[str, ...]) -> None:
    assert can_i(rbac_installed, *check)


@pytest.mark.parametrize("check", DENIED, ids=lambda c: " ".join(c))
def test_the_operator_may_not_do_more(rbac_installed: Path, check: tuple[str, ...]) -> None:
    assert not can_i(rbac_installed, *check)


@pytest.fixture
def service_account_cluster(tmp_path: Path) -> Iterator[tuple[KubeControlPlane, Path]]:
    """An API server of its own, where the operator's service account has a token, and its kubeconfig."""
    plane = KubeControlPlane(tmp_path / "kube")
    token = plane.token_for(SERVICE_ACCOUNT, SERVICE_ACCOUNT_GROUPS)
    plane.start()
    try:
        install_crd(plane.kubeconfig)
        install_rbac(plane.kubeconfig)
        kubectl(plane.kubeconfig, "create", "namespace", "payments")
        yield plane, plane.write_kubeconfig(tmp_path / "operator-kubeconfig", token, user="fraudstream-operator")
    finally:
        plane.stop()


def test_the_operator_runs_as_its_service_account_over_all_namespaces(
    service_account_cluster: tuple[KubeControlPlane, Path],
    monkeypatch: pytest.MonkeyPatch,
    kafka_settings: KafkaSettings,
    unique_topics: Topics,
    caplog: pytest.LogCaptureFixture,
) -> None:
    plane, operator_kubeconfig = service_account_cluster
    liveness, metrics = configure_operator(monkeypatch, operator_kubeconfig, kafka_settings, unique_topics.rules, "")
    operator = OperatorHarness(None, unique_topics.rules, kafka_settings, liveness, metrics)
    admin = api_client(plane.kubeconfig)
    rules = FraudRules(admin, "payments")
    caplog.set_level(logging.INFO)
    try:
        with operator.running():
            rules.create("least-privilege", BASE_SPEC)
            rules.wait_ready("least-privilege", generation=1)
            rules.patch("least-privilege", {"spec": {"state": "PAUSE"}})
            rules.wait_ready("least-privilege", generation=2)
            rules.delete("least-privilege")
            rules.wait_gone("least-privilege")
            rules.wait_events("least-privilege", "Published", "Tombstoned")
    finally:
        admin.close()

    records = [r for r in read_records(kafka_settings, unique_topics.rules) if r.key == "payments/least-privilege"]
    assert [r.rule["generation"] if r.rule else None for r in records] == [1, 2, None]
    assert latest_by_key(records)["payments/least-privilege"].value is None
    refusals = [r.getMessage() for r in caplog.records if refused(r.getMessage()) or "permission" in r.getMessage()]
    assert refusals == []


def test_replicas_elect_a_leader_as_the_service_account(
    service_account_cluster: tuple[KubeControlPlane, Path], start_replica: StartReplica
) -> None:
    plane, operator_kubeconfig = service_account_cluster
    scope = {"KUBECONFIG": str(operator_kubeconfig), "WATCH_NAMESPACES": "", "OPERATOR_LEASE_NAMESPACE": "fraudstream"}
    leader, standby = start_replica("replica-a", **scope), start_replica("replica-b", **scope)
    admin = api_client(plane.kubeconfig)
    rules = FraudRules(admin, "payments")
    try:
        wait_for(lambda: leader.leads() or standby.leads(), 60, "a replica leading")
        if standby.leads():
            leader, standby = standby, leader
        wait_for(standby.standby, 30, "the other replica answering as a standby")
        rules.create("elected", BASE_SPEC)
        rules.wait_ready("elected", generation=1)
        lease = client.CoordinationV1Api(admin).read_namespaced_lease("fraudstream-operator", "fraudstream")
    finally:
        admin.close()

    assert lease.spec is not None and lease.spec.holder_identity == leader.identity
    for replica in (leader, standby):
        log = replica.process.log_tail(200)
        assert not refused(log), log
