"""The local Kubernetes node for real: `make k8s-up` brings a Ready node whose pods run, reach each other through
Services by DNS name, and go when their namespace goes; `make k8s-down` leaves nothing of it on the machine, also
after its supervisor was killed.

The node runs in a state directory of the test's own, so a developer's `make k8s-up` node is not touched. The
before/after comparisons cover the whole machine (host iptables and nftables rules, links, mount points, except
what other nodes mount below their own state directories): another job changing those at the same moment would
show up here too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fraudstream_localstack import node_host as host
from fraudstream_localstack.layout import ROOT, versions
from fraudstream_localstack.node import LocalNode, container_nofile
from fraudstream_localstack.node_config import MACHINE_DIR, NodeLayout, image_name
from fraudstream_localstack.node_manifests import echo_objects, namespace, service_url
from fraudstream_localstack.node_storage import STORAGE_CLASS
from fraudstream_localstack.processes import wait_for

pytestmark = pytest.mark.integration

# Paths the node's components would create outside the state directory if they were not configured (or cleaned)
# properly; none may exist afterwards unless it existed before.
SYSTEM_PATHS = [
    Path(p)
    for p in (
        "/run/containerd", "/var/lib/containerd", "/opt/containerd", "/var/lib/kubelet", "/var/log/pods",
        "/var/log/containers", "/var/lib/cni", "/etc/cni", "/run/netns", "/var/run/kubernetes",
        "/usr/libexec/kubernetes", "/run/runc",
    )
]  # fmt: skip


@dataclass(frozen=True)
class MachineState:
    """What of the machine a node could change, read from the host's side."""

    rules: dict[str, str]
    links: frozenset[str]
    mountpoints: frozenset[str]
    sysctls: dict[str, str]
    system_paths: frozenset[str]

    @staticmethod
    def read() -> MachineState:
        rules = {}
        for tool in ("iptables-save", "ip6tables-save", "iptables-legacy-save", "ip6tables-legacy-save"):
            out = subprocess.run([tool], capture_output=True, text=True, check=False).stdout
            rules[tool] = "\n".join(line for line in out.splitlines() if not line.startswith("#"))
        rules["nft"] = subprocess.run(["nft", "list", "ruleset"], capture_output=True, text=True, check=False).stdout
        links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
        mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
        # Other nodes on this machine (a developer's `make k8s-up`) mount and unmount below their own state
        # directories as their pods come and go; those are theirs, not ours to compare.
        others = [f"{Path(p.read_text().strip())}/" for p in MACHINE_DIR.glob("node-*.owner")]
        return MachineState(
            rules=rules,
            links=frozenset(line.split(":")[1].strip().split("@")[0] for line in links.splitlines()),
            mountpoints=frozenset(m for m in mounts if not any(f"{m}/".startswith(o) for o in others)),
            sysctls={key: Path("/proc/sys", key).read_text().strip() for key in host.KUBELET_SYSCTLS},
            system_paths=frozenset(str(p) for p in SYSTEM_PATHS if p.exists()),
        )


def make(target: str, state_dir: Path, timeout_s: float = 900) -> tuple[str, float]:
    """`make <target> K8S_STATE=<state_dir>` from the repository root; its output and how long it took."""
    start = time.monotonic()
    proc = subprocess.run(["make", "-s", target, f"K8S_STATE={state_dir}"], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=timeout_s)  # fmt: skip
    assert proc.returncode == 0, f"make {target} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout, time.monotonic() - start


@dataclass
class Node:
    layout: NodeLayout
    api: LocalNode
    before: MachineState
    up_output: str


def layout_of(state_dir: Path) -> NodeLayout:
    return NodeLayout(state_dir, int(json.loads((state_dir / "node.json").read_text())["index"]))


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Node]:
    state_dir = tmp_path_factory.mktemp("k8s")
    before = MachineState.read()
    output, took_s = make("k8s-up", state_dir)
    print(f"make k8s-up: {took_s:.1f} s")
    layout = layout_of(state_dir)
    try:
        yield Node(layout, LocalNode(layout), before, output)
    finally:
        make("k8s-down", state_dir)  # idempotent: the last test has normally done it


def wait_available(node: Node, ns: str, name: str, timeout_s: float = 120) -> None:
    wait_for(lambda: node.api.deployment_available(ns, name), timeout_s, f"deployment {ns}/{name} available")


def create_namespace(node: Node) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    node.api.apply([namespace(name)])
    wait_for(lambda: node.api.get(f"/api/v1/namespaces/{name}/serviceaccounts/default"), 60, f"{name}'s default SA")
    return name


def pause_deployment(ns: str, name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    container = {"name": "pause", "image": image_name("pause"), "imagePullPolicy": "Never"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }


def gone(node: Node, path: str) -> bool:
    """The API object at `path` no longer exists."""
    try:
        node.api.get(path)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return True
        raise
    return False


def pods(node: Node, ns: str, selector: str = "") -> list[dict[str, Any]]:
    query = f"?labelSelector={selector}" if selector else ""
    items: list[dict[str, Any]] = node.api.get(f"/api/v1/namespaces/{ns}/pods{query}")["items"]
    return items


def test_k8s_up_brings_a_ready_node_with_dns(node: Node) -> None:
    env_file = node.layout.state_dir / "k8s.env"
    assert f"export KUBECONFIG={node.layout.kubeconfig}" in env_file.read_text()
    assert f"export KUBECONFIG={node.layout.kubeconfig}" in node.up_output
    info = node.api.get(f"/api/v1/nodes/{node.layout.node_name}")["status"]["nodeInfo"]
    assert info["kubeletVersion"] == versions()["KUBERNETES_VERSION"]
    assert info["containerRuntimeVersion"].startswith("containerd://1.6.")
    assert node.api.node_ready()
    assert node.api.deployment_available("kube-system", "coredns")
    assert node.api.dns_answers()  # from the host, through kube-proxy's rules for the kube-dns Service
    kubectl = node.api.kubectl("get", "nodes", "-o", "name")
    assert kubectl.split() == [f"node/{node.layout.node_name}"]


def test_k8s_up_again_returns_the_running_node(node: Node) -> None:
    output, took_s = make("k8s-up", node.layout.state_dir)
    assert output.strip().endswith(f"export K8S_STATE_DIR={node.layout.state_dir}")
    assert layout_of(node.layout.state_dir) == node.layout
    assert took_s < 60


def test_a_deployment_of_the_pause_image_becomes_available_on_cgroupfs(node: Node) -> None:
    ns = create_namespace(node)
    node.api.apply([pause_deployment(ns, "sleepers", replicas=2)])
    wait_available(node, ns, "sleepers")

    running = pods(node, ns, "app=sleepers")
    assert len(running) == 2 and all(p["status"]["phase"] == "Running" for p in running)
    # cgroupfs driver: every pod is a cgroup below the node's own cgroup root, in every hierarchy
    for pod in running:
        uid = pod["metadata"]["uid"]
        assert any(path.name == f"pod{uid}" for path in host.cgroup_dirs(node.layout)), uid
    # the containers run with the open-files limit the node gives them (containerd's own, not the default 1024)
    limits = [Path(f"/proc/{pid}/limits").read_text() for pid in host.cgroup_pids(node.layout)]
    nofile = {line.split()[3] for text in limits for line in text.splitlines() if line.startswith("Max open files")}
    assert nofile == {str(container_nofile())}


def test_a_service_routes_to_its_pods_by_dns_name_from_another_pod(node: Node) -> None:
    ns = create_namespace(node)
    node.api.apply(echo_objects(ns, name="echo", replicas=2))
    wait_available(node, ns, "echo")
    url = service_url("echo", ns)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "fetch", "namespace": ns},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "get",
                            "image": image_name("probe"),
                            "imagePullPolicy": "Never",
                            "args": ["get", "-timeout", "30s", url],
                        }
                    ],
                }
            },
        },
    }
    node.api.apply([job])

    def finished() -> str | None:
        conditions = node.api.get(f"/apis/batch/v1/namespaces/{ns}/jobs/fetch").get("status", {}).get("conditions", [])
        done = [c["type"] for c in conditions if c["type"] in ("Complete", "Failed") and c["status"] == "True"]
        return done[0] if done else None

    assert wait_for(finished, 120, "job fetch") == "Complete"
    (fetcher,) = pods(node, ns, "job-name=fetch")
    answer = node.api.request("GET", f"/api/v1/namespaces/{ns}/pods/{fetcher['metadata']['name']}/log").decode()
    echo_pods = {p["metadata"]["name"] for p in pods(node, ns, "app=echo")}
    assert answer.strip().splitlines()[-1] in echo_pods  # the last line; retries before it say why on stderr
    # and by exec, from inside an echo pod: the short name resolves through the pod's DNS search path
    resolved = node.api.kubectl("-n", ns, "exec", "deploy/echo", "--", "/probe", "resolve", "echo").split()
    service_ip = node.api.get(f"/api/v1/namespaces/{ns}/services/echo")["spec"]["clusterIP"]
    assert resolved == [service_ip]


def test_deleting_a_namespace_or_an_owner_garbage_collects_what_it_held(node: Node) -> None:
    ns = create_namespace(node)
    node.api.apply([pause_deployment(ns, "owned", replicas=1), pause_deployment(ns, "doomed", replicas=1)])
    wait_available(node, ns, "owned")
    wait_available(node, ns, "doomed")
    doomed_pod = pods(node, ns, "app=doomed")[0]["metadata"]["uid"]

    # deleting a Deployment: the garbage collector takes its ReplicaSet and then its Pod
    node.api.request("DELETE", f"/apis/apps/v1/namespaces/{ns}/deployments/doomed")
    wait_for(lambda: not pods(node, ns, "app=doomed"), 120, "the doomed deployment's pods to go")
    assert not [rs for rs in node.api.get(f"/apis/apps/v1/namespaces/{ns}/replicasets")["items"]
                if rs["metadata"]["name"].startswith("doomed-")]  # fmt: skip
    wait_for(lambda: not any(p.name == f"pod{doomed_pod}" for p in host.cgroup_dirs(node.layout)), 60,
             "the doomed pod's cgroup to go")  # fmt: skip

    # deleting the namespace: everything in it goes, and its pods stop on the node
    owned_pod = pods(node, ns, "app=owned")[0]["metadata"]["uid"]
    node.api.request("DELETE", f"/api/v1/namespaces/{ns}")
    wait_for(lambda: gone(node, f"/api/v1/namespaces/{ns}"), 180, f"namespace {ns} to be deleted")
    wait_for(lambda: not any(p.name == f"pod{owned_pod}" for p in host.cgroup_dirs(node.layout)), 60,
             "the namespace's pod to stop on the node")  # fmt: skip


def test_a_claim_binds_a_provisioned_volume_that_goes_with_the_claim(node: Node) -> None:
    ns = create_namespace(node)
    claim_path = f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data"
    # no storageClassName: the API server's DefaultStorageClass admission gives it the node's default class
    claim_spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    meta = {"name": "data", "namespace": ns}
    node.api.apply([{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": claim_spec}])

    def bound() -> dict[str, Any] | None:
        claim = node.api.get(claim_path)
        return claim if claim.get("status", {}).get("phase") == "Bound" else None

    claim = wait_for(bound, 60, f"claim {ns}/data bound")
    assert claim["spec"]["storageClassName"] == STORAGE_CLASS
    volume = node.api.get(f"/api/v1/persistentvolumes/{claim['spec']['volumeName']}")
    directory = Path(volume["spec"]["hostPath"]["path"])
    assert directory.parent == node.layout.volumes_dir
    assert volume["spec"]["capacity"] == {"storage": "1Gi"}

    # a pod that is not root writes to it
    writer = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "writer", "namespace": ns},
        "spec": {
            "restartPolicy": "Never",
            "securityContext": {"runAsUser": 65534, "runAsGroup": 65534},
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
            "containers": [
                {
                    "name": "write",
                    "image": image_name("probe"),
                    "imagePullPolicy": "Never",
                    "args": ["write", "/data/hello", f"hello from {ns}"],
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                }
            ],
        },
    }
    node.api.apply([writer])
    phase = wait_for(lambda: node.api.pod_finished(ns, "writer"), 120, "the writer pod to finish")
    assert phase == "Succeeded", node.api.request("GET", f"/api/v1/namespaces/{ns}/pods/writer/log")
    assert (directory / "hello").read_text() == f"hello from {ns}\n"
    assert (directory / "hello").stat().st_uid == 65534

    # the claim goes (after its pod: a claim in use is kept while a pod uses it), then its volume and directory
    node.api.request("DELETE", f"/api/v1/namespaces/{ns}/pods/writer")
    wait_for(lambda: gone(node, f"/api/v1/namespaces/{ns}/pods/writer"), 60, "the writer pod to go")
    node.api.request("DELETE", claim_path)
    wait_for(lambda: gone(node, claim_path), 60, "the claim to go")
    wait_for(lambda: gone(node, f"/api/v1/persistentvolumes/{volume['metadata']['name']}"), 60, "the volume to go")
    assert not directory.exists()


def test_k8s_down_leaves_nothing_behind(node: Node) -> None:
    layout = node.layout
    running = host.NodeFootprint.of(layout)
    assert running.processes and running.mounts and running.cgroups and running.host_link and running.files
    netns_rules = subprocess.run(host.in_node(layout, ["iptables-save"]), capture_output=True, text=True, check=True)
    assert "KUBE-SERVICES" in netns_rules.stdout and "CNI-" in netns_rules.stdout  # kube-proxy's and the bridge's

    _, took_s = make("k8s-down", layout.state_dir)
    print(f"make k8s-down: {took_s:.1f} s")

    assert not [p for p in running.processes if p.alive()]
    after = host.NodeFootprint.of(layout)
    assert after.empty(), after
    assert not [f for f in running.files if f.exists() or f.is_symlink()]
    assert not processes_naming(layout.state_dir)
    assert [p.name for p in layout.state_dir.iterdir()] == ["logs"]
    assert not layout.owner_file.exists()  # of the machine-wide records, only the index's lock file stays
    now = MachineState.read()
    assert now.rules == node.before.rules
    assert now.links == node.before.links
    assert now.mountpoints == node.before.mountpoints
    assert now.sysctls == node.before.sysctls
    assert now.system_paths == node.before.system_paths


def processes_naming(path: Path) -> list[host.ProcessInfo]:
    """Live processes (other than this one) whose command line names `path`."""
    infos = [host.process_info(int(e.name)) for e in os.scandir("/proc") if e.name.isdigit()]
    return [i for i in infos if i and i.pid != os.getpid() and i.alive() and str(path) in i.cmdline]


def test_k8s_down_cleans_up_after_a_killed_supervisor(tmp_path: Path) -> None:
    before = MachineState.read()
    make("k8s-up", tmp_path)
    layout = layout_of(tmp_path)
    api = LocalNode(layout)
    ns = create_namespace(Node(layout, api, before, ""))
    api.apply(echo_objects(ns))
    wait_for(lambda: api.deployment_available(ns, "echo"), 120, "echo available")
    supervisor = host.process_info(int((tmp_path / "supervisor.pid").read_text()))
    assert supervisor is not None and supervisor.alive()

    os.kill(supervisor.pid, signal.SIGKILL)  # its components die with it; pods, shims, mounts and the network stay
    wait_for(lambda: not supervisor.alive(), 30, "the supervisor to die")
    left = host.NodeFootprint.of(layout)
    assert left.mounts and left.host_link and left.cgroups

    make("k8s-down", tmp_path)

    assert host.NodeFootprint.of(layout).empty()
    assert not [p for p in left.processes if p.alive()]
    assert not processes_naming(tmp_path)
    assert not layout.owner_file.exists()
    assert not [f for f in left.files if f.exists() or f.is_symlink()]
    now = MachineState.read()
    assert (now.rules, now.links, now.mountpoints, now.sysctls, now.system_paths) == (
        before.rules, before.links, before.mountpoints, before.sysctls, before.system_paths,
    )  # fmt: skip
