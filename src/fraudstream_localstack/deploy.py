"""`make k8s-deploy`: the chart installed on the local node of `make k8s-up`, with its Prometheus.

    python -m fraudstream_localstack.deploy [--env-file .local/k8s.env] [--namespace fraudstream] [--set k=v ...]

Run after `make image` has imported the images into the node's containerd (the Makefile target does both). In order:
1. the Prometheus Operator's CRDs (ServiceMonitor, PodMonitor, PrometheusRule), so that the chart renders its
   monitors and rules as it does on a cluster with kube-prometheus-stack;
2. `helm upgrade --install` of charts/fraudstream with ci/local-node-values.yaml and the images' content tags: the
   operator, the development Kafka, the generator and the detector's driver, which creates its executor pods;
3. every pod of the release Running and Ready, the executors included;
4. the example FraudRules applied with kubectl and each Ready=True;
5. the node's Prometheus (node_monitoring), configured from the chart's monitors and rules as read back from the API
   server (monitoring_config), Ready.
Idempotent: a second run upgrades the release in place. Exits non-zero, naming the step, when a step fails.
`helm uninstall` (docs/kubernetes.md) or `make k8s-down` removes it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import monitoring_config, node_monitoring
from .kube import wait_established
from .layout import BIN, CACHE, LOCAL, ROOT, require
from .node_manifests import object_list
from .processes import wait_for

CHART = ROOT / "charts" / "fraudstream"
VALUES = CHART / "ci" / "local-node-values.yaml"
RULES = ROOT / "examples" / "rules"
IMAGES_ENV = CACHE / "image" / "images.env"
MONITORING_CRDS = [
    CACHE / "monitoring-crds" / f"monitoring.coreos.com_{kind}.yaml"
    for kind in ("servicemonitors", "podmonitors", "prometheusrules")
]
MONITOR_KINDS = ("servicemonitors", "podmonitors")


class DeployError(RuntimeError):
    """A step of the deployment failed; the message names it and what to look at."""


def read_env_file(path: Path) -> dict[str, str]:
    """`KEY=value` and `export KEY=value` lines of an env file (k8s.env, images.env)."""
    env: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip().removeprefix("export ").strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            env[key] = value.strip().strip("'\"")
    return env


@dataclass(frozen=True)
class Cluster:
    """A running cluster reached with `kubeconfig` as its admin."""

    kubeconfig: Path
    log: Callable[[str], None] = field(default=print, compare=False)

    def run(self, tool: str, *args: str, stdin: str | None = None, timeout_s: float = 900) -> str:
        argv = [str(require(BIN / tool, "k8s")), f"--kubeconfig={self.kubeconfig}", *args]
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout_s, check=False)
        if done.returncode != 0:
            raise DeployError(f"{tool} {' '.join(args)} failed:\n{done.stderr.strip()}")
        return done.stdout

    def kubectl(self, *args: str, stdin: str | None = None, timeout_s: float = 300) -> str:
        return self.run("kubectl", *args, stdin=stdin, timeout_s=timeout_s)

    def helm(self, *args: str, timeout_s: float = 1200) -> str:
        return self.run("helm", *args, timeout_s=timeout_s)

    def get(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json"))

    def apply(self, objects: Sequence[dict[str, Any]]) -> None:
        self.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", stdin=object_list(objects))


def pod_ready(pod: dict[str, Any]) -> bool:
    conditions = pod.get("status", {}).get("conditions") or []
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
    return pod.get("status", {}).get("phase") == "Running" and ready


def unready_pods(cluster: Cluster, namespace: str) -> list[str]:
    """Pods of `namespace` that are not Running and Ready, as `name (phase)`; finished pods do not count."""
    pods = cluster.get("pods", "-n", namespace)["items"]
    live = [p for p in pods if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]
    return [f"{p['metadata']['name']} ({p['status'].get('phase')})" for p in live if not pod_ready(p)]


def executor_pods(cluster: Cluster, namespace: str) -> list[dict[str, Any]]:
    """The detector's live executor pods (Spark labels them spark-role=executor)."""
    pods = cluster.get("pods", "-n", namespace, "-l", "spark-role=executor")["items"]
    return [p for p in pods if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]


def fraudrules_ready(cluster: Cluster, namespace: str) -> list[str]:
    """The names of `namespace`'s FraudRules whose Ready condition is not True (and whose status is current)."""
    waiting = []
    for rule in cluster.get("fraudrules", "-n", namespace)["items"]:
        status = rule.get("status") or {}
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or [])
        current = status.get("observedGeneration") == rule["metadata"].get("generation")
        if not (ready and current):
            waiting.append(rule["metadata"]["name"])
    return waiting


@dataclass(frozen=True)
class Release:
    """The chart release this deploys: where, under which name, and with which extra `--set` values."""

    namespace: str = "fraudstream"
    name: str = "fraudstream"
    settings: tuple[str, ...] = ()

    def helm_args(self, images: dict[str, str]) -> list[str]:
        args = ["upgrade", "--install", self.name, str(CHART), "--namespace", self.namespace, "--create-namespace"]
        args += ["-f", str(VALUES)]
        args += ["--set", f"image.tag={images['FRAUDSTREAM_IMAGE_TAG']}"]
        args += ["--set", f"kafka.dev.image.tag={images['FRAUDSTREAM_KAFKA_IMAGE_TAG']}"]
        for setting in self.settings:
            args += ["--set", setting]
        return [*args, "--wait", "--timeout", "15m"]

    def executor_instances(self) -> int:
        """detector.executor.instances as this release sets it."""
        for setting in reversed(self.settings):
            if setting.startswith("detector.executor.instances="):
                return int(setting.split("=", 1)[1])
        return int(yaml.safe_load(VALUES.read_text())["detector"]["executor"]["instances"])


def install_monitoring_crds(cluster: Cluster) -> None:
    for crd in MONITORING_CRDS:
        cluster.kubectl("apply", "--server-side", "-f", str(require(crd, "monitoring-crds")))
    wait_established(cluster.kubectl, [f"{kind}.monitoring.coreos.com" for kind in (*MONITOR_KINDS, "prometheusrules")])


def wait_release_ready(cluster: Cluster, release: Release, timeout_s: float) -> None:
    """Every pod of the release Running and Ready, with as many Ready executors as the release asks for."""
    instances = release.executor_instances()

    def ready() -> bool:
        executors = [p for p in executor_pods(cluster, release.namespace) if pod_ready(p)]
        return len(executors) >= instances and not unready_pods(cluster, release.namespace)

    try:
        wait_for(ready, timeout_s, "every pod Running and Ready", interval_s=2)
    except TimeoutError as exc:
        raise DeployError(
            f"pods not Ready after {timeout_s:.0f}s: {unready_pods(cluster, release.namespace)}; executors Ready: "
            f"{sum(pod_ready(p) for p in executor_pods(cluster, release.namespace))}/{instances} "
            f"(kubectl -n {release.namespace} describe pods)"
        ) from exc


def apply_rules(cluster: Cluster, namespace: str, timeout_s: float, directory: Path = RULES) -> None:
    """The FraudRules of `directory` applied in `namespace`, each Ready=True for its current generation."""
    cluster.kubectl("apply", "-n", namespace, "-f", str(directory))
    try:
        wait_for(lambda: not fraudrules_ready(cluster, namespace), timeout_s, "FraudRules Ready", interval_s=1)
    except TimeoutError as exc:
        raise DeployError(f"FraudRules not Ready: {fraudrules_ready(cluster, namespace)}") from exc


def deploy_prometheus(cluster: Cluster, timeout_s: float) -> None:
    """The node's Prometheus, configured from every monitor and rule the cluster holds."""
    monitors = [m for kind in MONITOR_KINDS for m in cluster.get(kind, "--all-namespaces")["items"]]
    rules = cluster.get("prometheusrules", "--all-namespaces")["items"]
    config = monitoring_config.server_config(monitors, node_monitoring.RULE_DIR, "15s")
    files = monitoring_config.rule_files(rules)
    cluster.apply(node_monitoring.prometheus_objects(config, files, monitoring_config.discovery_namespaces(monitors)))
    cluster.kubectl("-n", node_monitoring.NAMESPACE, "rollout", "status", f"deployment/{node_monitoring.NAME}",
                    f"--timeout={int(timeout_s)}s", timeout_s=timeout_s + 30)  # fmt: skip


def prometheus_url(cluster: Cluster) -> str:
    """Prometheus' Service, reachable from this machine (the host routes the node's Service range)."""
    service = cluster.get("service", "-n", node_monitoring.NAMESPACE, node_monitoring.NAME)
    return f"http://{service['spec']['clusterIP']}:{node_monitoring.PORT}"


def deploy(cluster: Cluster, release: Release, timeout_s: float = 900) -> str:
    """Every step of the module docstring; returns Prometheus' URL."""
    started = time.monotonic()
    if not IMAGES_ENV.exists():
        raise DeployError(f"no images: {IMAGES_ENV} is missing; run `make image` (or `make k8s-deploy`)")
    images = read_env_file(IMAGES_ENV)
    cluster.log("k8s-deploy: the monitoring CRDs")
    install_monitoring_crds(cluster)
    cluster.log(f"k8s-deploy: helm upgrade --install {release.name} (images {images['FRAUDSTREAM_IMAGE']}, "
                f"{images['FRAUDSTREAM_KAFKA_IMAGE']})")  # fmt: skip
    cluster.helm(*release.helm_args(images))
    cluster.log("k8s-deploy: waiting for every pod, the executors included")
    wait_release_ready(cluster, release, timeout_s)
    cluster.log(f"k8s-deploy: FraudRules from {RULES.relative_to(ROOT)}")
    apply_rules(cluster, release.namespace, timeout_s=300)
    cluster.log("k8s-deploy: Prometheus")
    deploy_prometheus(cluster, timeout_s=300)
    url = prometheus_url(cluster)
    cluster.log(f"k8s-deploy: done in {time.monotonic() - started:.0f}s; Prometheus: {url}")
    return url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fraudstream_localstack.deploy", description=__doc__.split("\n")[0],
                                     allow_abbrev=False)  # fmt: skip
    parser.add_argument("--env-file", type=Path, default=LOCAL / "k8s.env", help="the node's env file (make k8s-up)")
    parser.add_argument("--namespace", default=Release.namespace)
    parser.add_argument("--release", default=Release.name)
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                        help="a chart value over ci/local-node-values.yaml (repeatable)")  # fmt: skip
    parser.add_argument("--timeout-s", type=float, default=900)
    args = parser.parse_args(argv)
    if not args.env_file.exists():
        print(f"k8s-deploy: {args.env_file} is missing: start the node first (make k8s-up)", file=sys.stderr)
        return 1
    node = read_env_file(args.env_file)
    cluster = Cluster(Path(node["KUBECONFIG"]), log=lambda line: print(line, flush=True))
    try:
        deploy(cluster, Release(args.namespace, args.release, tuple(args.settings)), args.timeout_s)
    except DeployError as exc:
        print(f"k8s-deploy: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
