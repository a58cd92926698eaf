"""The driver's pod creation is narrowed to its own executors, on a real kube-apiserver: RBAC lets the driver's
ServiceAccount create any pod in its namespace (`kubectl auth can-i` says yes, as RBAC cannot look inside a pod),
and the chart's ValidatingAdmissionPolicy refuses every pod but an executor of the release, and every change or
deletion of another pod, and ConfigMaps other than Spark's own."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from fraudstream_localstack.processes import wait_for
from tests.integration.chart.conftest import kubectl
from tests.integration.chart.test_rbac import can
from tests.unit.chart.rendering import Manifest, find, mode, render

pytestmark = pytest.mark.integration

APPLIED_KINDS = {
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}


@dataclass(frozen=True)
class Release:
    namespace: str
    objects: list[Manifest]

    @property
    def driver(self) -> str:
        name = find(self.objects, "ServiceAccount", "-detector")["metadata"]["name"]
        return f"system:serviceaccount:{self.namespace}:{name}"

    def executor_pod(self, name: str) -> Manifest:
        """A pod as Spark makes an executor from the chart's template: the template, the chart's image, the volumes
        Spark adds (its local dir and its configuration ConfigMap)."""
        conf = find(self.objects, "ConfigMap", "-spark-conf")["data"]
        template = yaml.safe_load(conf["executor-pod-template.yaml"])
        image = next(line.split(" ", 1)[1] for line in conf["spark-defaults.conf"].splitlines()
                     if line.startswith("spark.kubernetes.container.image "))  # fmt: skip
        pod: Manifest = {"apiVersion": "v1", "kind": "Pod", **copy.deepcopy(template)}
        pod["metadata"] = {**pod["metadata"], "name": name, "namespace": self.namespace}
        pod["metadata"]["labels"] = {**pod["metadata"]["labels"], "spark-role": "executor", "spark-exec-id": "1"}
        pod["spec"]["containers"][0]["image"] = image
        pod["spec"]["volumes"] += [
            {"name": "spark-local-dir-1", "emptyDir": {}},
            {"name": "spark-conf-volume-exec", "configMap": {"name": "spark-exec-1-conf-map"}},
        ]
        return pod


@pytest.fixture(scope="module")
def release(kubeconfig: Path, chart_crds: None) -> Iterator[Release]:
    """The executors mode's RBAC and admission policy installed in a namespace of its own."""
    namespace = f"vap-{uuid.uuid4().hex[:6]}"
    kubectl(kubeconfig, "create", "namespace", namespace)
    objects = render(mode("executors"), namespace=namespace, release=namespace)
    applied = [o for o in objects if o["kind"] in APPLIED_KINDS]
    kubectl(kubeconfig, "apply", "-f", "-", stdin=yaml.safe_dump_all(applied))
    try:
        release = Release(namespace, objects)
        # The authorizer sees new bindings through its informers (as test_rbac polls for).
        wait_for(
            lambda: can(kubeconfig, release.driver, "create", "pods", namespace), 60, "the driver's RBAC in effect"
        )
        yield release
    finally:
        for obj in applied:
            if obj["kind"].startswith("ValidatingAdmissionPolicy"):
                kubectl(kubeconfig, "delete", obj["kind"].lower(), obj["metadata"]["name"], "--wait=false", check=False)
        kubectl(kubeconfig, "delete", "namespace", namespace, "--wait=false", check=False)


def as_driver(kubeconfig: Path, release: Release, *args: str, manifest: Manifest | None = None) -> tuple[bool, str]:
    """(accepted, kubectl's stderr) of a request made as the driver's ServiceAccount."""
    stdin = json.dumps(manifest) if manifest is not None else None
    done = kubectl(kubeconfig, *args, f"--as={release.driver}", "-n", release.namespace, stdin=stdin, check=False)
    return done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def policy_in_effect(kubeconfig: Path, release: Release) -> None:
    """The API server applies a new policy once its informers saw it: poll until a foreign pod is refused."""
    probe = release.executor_pod("probe")
    probe["spec"]["serviceAccountName"] = "default"

    def refused() -> bool:
        accepted, stderr = as_driver(kubeconfig, release, "create", "--dry-run=server", "-f", "-", manifest=probe)
        return not accepted and "ValidatingAdmissionPolicy" in stderr and "run as ServiceAccount" in stderr

    wait_for(refused, 60, "the executor pod policy in effect", interval_s=0.5)


def mutate(change: Callable[[Manifest], None]) -> Callable[[Manifest], Manifest]:
    def apply(pod: Manifest) -> Manifest:
        changed = copy.deepcopy(pod)
        change(changed)
        return changed

    return apply


def _set(path: str, value: Any) -> Callable[[Manifest], None]:
    def change(pod: Manifest) -> None:
        *parents, last = path.split(".")
        node = pod
        for key in parents:
            node = node[key][0] if key == "containers" else node[key]
        node[last] = value

    return change


FOREIGN_PODS = {
    "the operator's ServiceAccount": (_set("spec.serviceAccountName", "OPERATOR"), "run as ServiceAccount"),
    "an API token": (_set("spec.automountServiceAccountToken", True), "mount no API token"),
    "the host network": (_set("spec.hostNetwork", True), "no host namespace"),
    "another image": (_set("spec.containers.image", "attacker/tools:latest"), "the chart's image"),
    "a privileged container": (_set("spec.containers.securityContext", {"privileged": True}), "unprivileged"),
    "a hostPath volume": (
        lambda pod: pod["spec"]["volumes"].append({"name": "root", "hostPath": {"path": "/"}}),
        "mount only",
    ),
    "another Secret": (
        lambda pod: pod["spec"]["volumes"].append({"name": "s", "secret": {"secretName": "operator-token"}}),
        "mount only",
    ),
    "another component's labels": (
        _set("metadata.labels", {"app.kubernetes.io/name": "fraudstream-operator"}),
        "only its own executor pods",
    ),
}


def test_rbac_alone_would_let_the_driver_create_any_pod(kubeconfig: Path, release: Release) -> None:
    assert can(kubeconfig, release.driver, "create", "pods", release.namespace)


def test_the_driver_may_create_and_delete_its_executor_pods(
    kubeconfig: Path, release: Release, policy_in_effect: None
) -> None:
    accepted, stderr = as_driver(kubeconfig, release, "create", "-f", "-", manifest=release.executor_pod("exec-1"))
    assert accepted, stderr
    accepted, stderr = as_driver(kubeconfig, release, "label", "pod", "exec-1", "spark-exec-inactive=true")
    assert accepted, stderr
    accepted, stderr = as_driver(kubeconfig, release, "delete", "pod", "exec-1", "--wait=false")
    assert accepted, stderr


@pytest.mark.parametrize("what", list(FOREIGN_PODS))
def test_the_driver_may_not_create_any_other_pod(
    kubeconfig: Path, release: Release, policy_in_effect: None, what: str
) -> None:
    change, message = FOREIGN_PODS[what]
    pod = mutate(change)(release.executor_pod(f"foreign-{uuid.uuid4().hex[:6]}"))
    if pod["spec"]["serviceAccountName"] == "OPERATOR":
        pod["spec"]["serviceAccountName"] = find(release.objects, "ServiceAccount", "-operator")["metadata"]["name"]

    accepted, stderr = as_driver(kubeconfig, release, "create", "-f", "-", manifest=pod)

    assert not accepted
    assert "ValidatingAdmissionPolicy" in stderr and message in stderr, stderr


def test_the_driver_may_neither_change_nor_delete_another_pod(
    kubeconfig: Path, release: Release, policy_in_effect: None
) -> None:
    other = release.executor_pod("operator-like")
    other["metadata"]["labels"] = {"app.kubernetes.io/name": "fraudstream-operator", "app.kubernetes.io/instance": "x"}
    other["spec"]["serviceAccountName"] = find(release.objects, "ServiceAccount", "-operator")["metadata"]["name"]
    kubectl(kubeconfig, "create", "-n", release.namespace, "-f", "-", stdin=json.dumps(other))  # as the admin

    relabelled, stderr_label = as_driver(kubeconfig, release, "label", "pod", "operator-like", "hijacked=true")
    deleted, stderr_delete = as_driver(kubeconfig, release, "delete", "pod", "operator-like", "--wait=false")

    assert not relabelled and "only its own executor pods" in stderr_label, stderr_label
    assert not deleted and "only its own executor pods" in stderr_delete, stderr_delete


def test_the_driver_may_manage_only_sparks_own_configmaps(
    kubeconfig: Path, release: Release, policy_in_effect: None
) -> None:
    create = ("create", "configmap", "--from-literal=a=b")
    accepted, stderr = as_driver(kubeconfig, release, *create, "spark-exec-7-conf-map")
    assert accepted, stderr
    accepted, stderr = as_driver(kubeconfig, release, *create, "fraudstream-spark-conf")
    assert not accepted and "Spark's own ConfigMaps" in stderr, stderr
