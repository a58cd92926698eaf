"""The chart's RBAC, installed for real on the session kube-apiserver and probed with
`kubectl auth can-i --as=system:serviceaccount:...`: the operator and the Spark driver can do what they need and
nothing more (no Secrets, no cluster-wide pods), and the executors can do nothing."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from fraudstream_localstack.layout import ROOT
from fraudstream_localstack.processes import wait_for
from tests.integration.chart.conftest import kubectl
from tests.unit.chart.rendering import Manifest, find, mode, render

pytestmark = pytest.mark.integration

RBAC_KINDS = {"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}
VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")


@dataclass(frozen=True)
class Install:
    """The RBAC objects of one rendered release, applied for real."""

    namespace: str
    objects: list[Manifest]

    def service_account(self, suffix: str) -> str:
        name = find(self.objects, "ServiceAccount", suffix)["metadata"]["name"]
        return f"system:serviceaccount:{self.namespace}:{name}"


def _apply_rbac(kubeconfig: Path, tmp_path: Path, objects: list[Manifest]) -> list[Manifest]:
    rbac = [o for o in objects if o["kind"] in RBAC_KINDS]
    path = tmp_path / f"rbac-{len(list(tmp_path.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump_all(rbac))
    kubectl(kubeconfig, "apply", "-f", str(path))
    return rbac


def can(kubeconfig: Path, user: str, verb: str, resource: str, namespace: str | None, subresource: str = "") -> bool:
    """`kubectl auth can-i` as `user`; namespace None asks about all namespaces."""
    scope = ["--all-namespaces"] if namespace is None else ["-n", namespace]
    extra = [f"--subresource={subresource}"] if subresource else []
    done = kubectl(kubeconfig, "auth", "can-i", verb, resource, f"--as={user}", *scope, *extra, check=False)
    answer = done.stdout.strip()
    assert answer in ("yes", "no"), f"can-i {verb} {resource}: {done.stdout} {done.stderr}"
    return answer == "yes"


@pytest.fixture(scope="module")
def installs(
    kubeconfig: Path, chart_crds: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Install]]:
    """Three releases: cluster-wide with executor pods (a k8s:// master: the driver creates them), one whose operator
    watches two namespaces, and the defaults (a local master: no executors)."""
    tmp = tmp_path_factory.mktemp("rbac")
    suffix = tmp.name.rsplit("-", 1)[-1][-6:]
    names = {key: f"rbac-{key}-{suffix}" for key in ("cw", "scoped", "local", "team-a", "team-b", "other")}
    for namespace in names.values():
        kubectl(kubeconfig, "create", "namespace", namespace)
    scoped_values = ["--set", f"operator.watchNamespaces={{{names['team-a']},{names['team-b']}}}"]
    rendered = {
        "cluster-wide": (names["cw"], render(mode("executors"), namespace=names["cw"], release=names["cw"])),
        "scoped": (
            names["scoped"],
            render(mode("default"), namespace=names["scoped"], release=names["scoped"], extra_args=scoped_values),
        ),
        "local": (names["local"], render(mode("default"), namespace=names["local"], release=names["local"])),
    }
    applied: list[Manifest] = []
    try:
        result: dict[str, Install] = {}
        for key, (namespace, objects) in rendered.items():
            applied += _apply_rbac(kubeconfig, tmp, objects)
            result[key] = Install(namespace, objects)
        result["names"] = Install(names["other"], [])
        # The authorizer sees new bindings through its informers: wait until the grants are in effect.
        probes = [
            (result["cluster-wide"].service_account("-operator"), "list", "fraudrules.fraudstream.io", None),
            (result["scoped"].service_account("-operator"), "list", "fraudrules.fraudstream.io", names["team-b"]),
            (result["cluster-wide"].service_account("-detector"), "create", "pods", names["cw"]),
            (result["scoped"].service_account("-operator"), "create", "leases.coordination.k8s.io", names["scoped"]),
        ]
        wait_for(lambda: all(can(kubeconfig, *probe) for probe in probes), 30, "RBAC bindings in effect", 0.2)
        yield result
    finally:
        cluster_scoped = [o for o in applied if o["kind"].startswith("Cluster")]
        for obj in cluster_scoped:
            kubectl(kubeconfig, "delete", obj["kind"].lower(), obj["metadata"]["name"], "--wait=false", check=False)
        for namespace in names.values():
            kubectl(kubeconfig, "delete", "namespace", namespace, "--wait=false", check=False)


def _operator_rbac_verbs() -> dict[str, set[str]]:
    """resource -> verbs granted by operator/rbac.yaml, the operator's single source of RBAC."""
    docs = [d for d in yaml.safe_load_all((ROOT / "operator" / "rbac.yaml").read_text()) if d]
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    granted: dict[str, set[str]] = {}
    for rule in role["rules"]:
        group = rule["apiGroups"][0]
        for resource in rule["resources"]:
            granted.setdefault(f"{resource}.{group}".rstrip("."), set()).update(rule["verbs"])
    return granted


def test_operator_can_exactly_what_operator_rbac_yaml_grants_in_every_namespace(
    kubeconfig: Path, installs: dict[str, Install]
) -> None:
    operator = installs["cluster-wide"].service_account("-operator")
    elsewhere = installs["names"].namespace
    granted = _operator_rbac_verbs()
    assert set(granted) == {"fraudrules.fraudstream.io", "fraudrules/status.fraudstream.io", "events"}
    for verb in VERBS:
        want = verb in granted["fraudrules.fraudstream.io"]
        assert can(kubeconfig, operator, verb, "fraudrules.fraudstream.io", elsewhere) is want, verb
    for verb in ("list", "watch", "patch", "get", "delete"):
        want = verb in granted["fraudrules.fraudstream.io"]
        assert can(kubeconfig, operator, verb, "fraudrules.fraudstream.io", None) is want, f"{verb} cluster-wide"
    for verb in ("patch", "update", "get"):
        want = verb in granted["fraudrules/status.fraudstream.io"]
        assert can(kubeconfig, operator, verb, "fraudrules.fraudstream.io", elsewhere, "status") is want, verb
    for verb in ("create", "list", "delete"):
        assert can(kubeconfig, operator, verb, "events", elsewhere) is (verb in granted["events"]), verb


def _lease_name(install: Install) -> str:
    container = find(install.objects, "Deployment", "-operator")["spec"]["template"]["spec"]["containers"][0]
    return str(next(e["value"] for e in container["env"] if e["name"] == "OPERATOR_LEASE_NAME"))


@pytest.mark.parametrize("key", ["cluster-wide", "scoped"])
def test_operator_may_hold_only_its_own_lease_in_its_own_namespace(
    kubeconfig: Path, installs: dict[str, Install], key: str
) -> None:
    release = installs[key]
    operator, here, elsewhere = release.service_account("-operator"), release.namespace, installs["names"].namespace
    lease = f"leases.coordination.k8s.io/{_lease_name(release)}"
    for verb in VERBS:
        assert can(kubeconfig, operator, verb, lease, here) is (verb in ("get", "update", "create")), f"{verb} lease"
    for verb in VERBS:
        assert can(kubeconfig, operator, verb, "leases.coordination.k8s.io/other", here) is (verb == "create"), verb
    for verb in ("create", "get", "update"):
        assert not can(kubeconfig, operator, verb, lease, elsewhere), f"{verb} lease elsewhere"
        assert not can(kubeconfig, operator, verb, "leases.coordination.k8s.io", None), f"{verb} leases cluster-wide"


@pytest.mark.parametrize(
    ("verb", "resource"),
    [
        ("get", "secrets"),
        ("list", "secrets"),
        ("list", "pods"),
        ("create", "pods"),
        ("get", "configmaps"),
        ("list", "namespaces"),
        ("patch", "customresourcedefinitions.apiextensions.k8s.io"),
        ("create", "fraudrules.fraudstream.io"),
        ("create", "clusterrolebindings.rbac.authorization.k8s.io"),
    ],
)
def test_operator_cannot_touch_anything_else(
    kubeconfig: Path, installs: dict[str, Install], verb: str, resource: str
) -> None:
    operator = installs["cluster-wide"].service_account("-operator")
    assert not can(kubeconfig, operator, verb, resource, installs["cluster-wide"].namespace)
    assert not can(kubeconfig, operator, verb, resource, None)


def test_operator_with_watch_namespaces_is_limited_to_them(kubeconfig: Path, installs: dict[str, Install]) -> None:
    scoped = installs["scoped"]
    operator = scoped.service_account("-operator")
    teams = [
        b["metadata"]["namespace"]
        for b in scoped.objects
        if b["kind"] == "RoleBinding" and b["roleRef"]["kind"] == "ClusterRole" and "-operator" in b["metadata"]["name"]
    ]
    assert len(teams) == 2
    for namespace in teams:
        assert can(kubeconfig, operator, "watch", "fraudrules.fraudstream.io", namespace)
        assert can(kubeconfig, operator, "patch", "fraudrules.fraudstream.io", namespace, "status")
        assert can(kubeconfig, operator, "create", "events", namespace)
    for namespace in (installs["names"].namespace, scoped.namespace):
        assert not can(kubeconfig, operator, "list", "fraudrules.fraudstream.io", namespace)
        assert not can(kubeconfig, operator, "create", "events", namespace)
    assert not can(kubeconfig, operator, "list", "fraudrules.fraudstream.io", None)


DRIVER_NEEDS = {
    "pods": {"get", "list", "watch", "create", "delete", "deletecollection", "patch"},
    "configmaps": {"get", "list", "watch", "create", "delete", "deletecollection"},
}


def test_driver_manages_executor_pods_and_configmaps_in_its_namespace_only(
    kubeconfig: Path, installs: dict[str, Install]
) -> None:
    release = installs["cluster-wide"]
    driver = release.service_account("-detector")
    for resource, verb in itertools.product(DRIVER_NEEDS, VERBS):
        want = verb in DRIVER_NEEDS[resource]
        assert can(kubeconfig, driver, verb, resource, release.namespace) is want, f"{verb} {resource}"
    for resource, verb in itertools.product(DRIVER_NEEDS, ("create", "list", "delete")):
        assert not can(kubeconfig, driver, verb, resource, installs["names"].namespace), f"{verb} {resource} elsewhere"
        assert not can(kubeconfig, driver, verb, resource, None), f"{verb} {resource} cluster-wide"


@pytest.mark.parametrize(
    ("verb", "resource", "subresource"),
    [
        ("get", "secrets", ""),
        ("list", "secrets", ""),
        ("create", "services", ""),
        ("create", "deployments.apps", ""),
        ("update", "configmaps", ""),
        ("create", "pods", "exec"),
        ("create", "persistentvolumeclaims", ""),
        ("list", "fraudrules.fraudstream.io", ""),
        ("create", "roles.rbac.authorization.k8s.io", ""),
    ],
)
def test_driver_cannot_touch_anything_else(
    kubeconfig: Path, installs: dict[str, Install], verb: str, resource: str, subresource: str
) -> None:
    release = installs["cluster-wide"]
    assert not can(kubeconfig, release.service_account("-detector"), verb, resource, release.namespace, subresource)


def test_executors_can_do_nothing(kubeconfig: Path, installs: dict[str, Install]) -> None:
    release = installs["cluster-wide"]
    executor = release.service_account("-executor")
    assert find(release.objects, "ServiceAccount", "-executor")["automountServiceAccountToken"] is False
    for verb, resource in itertools.product(("get", "list", "create"), ("pods", "configmaps", "secrets")):
        assert not can(kubeconfig, executor, verb, resource, release.namespace), f"{verb} {resource}"


def test_driver_on_a_local_master_can_do_nothing(kubeconfig: Path, installs: dict[str, Install]) -> None:
    release = installs["local"]
    assert not [o for o in release.objects if o["kind"] == "ServiceAccount" and "-executor" in o["metadata"]["name"]]
    driver_sa = find(release.objects, "ServiceAccount", "-detector")
    assert driver_sa["automountServiceAccountToken"] is False
    driver = release.service_account("-detector")
    for verb, resource in itertools.product(("get", "list", "create"), ("pods", "configmaps", "secrets")):
        assert not can(kubeconfig, driver, verb, resource, release.namespace), f"{verb} {resource}"


def test_service_account_names_follow_the_release(installs: dict[str, Install]) -> None:
    cw = installs["cluster-wide"]
    names = {o["metadata"]["name"] for o in cw.objects if o["kind"] == "ServiceAccount"}
    assert names == {f"{cw.namespace}-fraudstream-{c}" for c in ("operator", "detector", "executor")}
