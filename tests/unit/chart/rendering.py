"""Rendering charts/fraudstream with the cached helm, for the chart's unit and integration tests.

Every documented mode has a values file in charts/fraudstream/ci/; each is rendered with and without the
monitoring.coreos.com/v1 API. A missing helm is a failure that names `make install`, never a skip.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fraudstream_localstack.layout import BIN, ROOT, require, versions

CHART = ROOT / "charts" / "fraudstream"
CI_VALUES = CHART / "ci"
RULES_FILE = CHART / "files" / "prometheus-rules.yaml"
DASHBOARD_FILE = CHART / "files" / "dashboard.json"
KAFKA_DEV_SCRIPT = CHART / "files" / "kafka-dev-start.sh"
MONITORING_API = "monitoring.coreos.com/v1"
SPARK_API = "spark.apache.org/v1"
RELEASE = "fraudstream"

Manifest = dict[str, Any]


@dataclass(frozen=True)
class Mode:
    """A documented way to install the chart: a values file of charts/fraudstream/ci/."""

    name: str

    @property
    def values(self) -> Path:
        return CI_VALUES / f"{self.name}-values.yaml"

    @property
    def api_versions(self) -> tuple[str, ...]:
        """The APIs the mode needs from the cluster (the SparkApplication mode needs the Spark operator's)."""
        return (SPARK_API,) if self.name == "spark-application" else ()


MODES = tuple(Mode(p.name.removesuffix("-values.yaml")) for p in sorted(CI_VALUES.glob("*-values.yaml")))
# The modes whose detector runs executor pods (the evaluator's tasks there, each serving eval-metrics): the driver
# Deployment with a k8s:// master, and the SparkApplication. Every other mode runs its tasks in the driver pod
# (a local master). test_render checks that this list is exactly the modes that render an executor pod template.
EXECUTOR_MODES = ("executors", "local-node", "spark-application")


def helm_bin() -> Path:
    return require(BIN / "helm", "k8s")


def kube_version() -> str:
    """The Kubernetes version helm renders for: the one the tests' kube-apiserver is built from."""
    return versions()["KUBERNETES_VERSION"]


def helm(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(helm_bin()), *args], capture_output=True, text=True, timeout=120, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} failed:\n{done.stderr}")
    return done


def render_text(
    mode: Mode,
    namespace: str = "fraudstream",
    monitoring: bool = False,
    extra_args: Sequence[str] = (),
    include_crds: bool = False,
    release: str = RELEASE,
) -> str:
    """`helm template` of one mode; with monitoring=True as if the monitoring.coreos.com/v1 API existed."""
    apis = [*mode.api_versions, *([MONITORING_API] if monitoring else [])]
    args = ["template", release, str(CHART), "--namespace", namespace, "--kube-version", kube_version()]
    args += ["-f", str(mode.values)]
    for api in apis:
        args += ["--api-versions", api]
    if include_crds:
        args.append("--include-crds")
    return helm(*args, *extra_args).stdout


def render(
    mode: Mode,
    namespace: str = "fraudstream",
    monitoring: bool = False,
    extra_args: Sequence[str] = (),
    include_crds: bool = False,
    release: str = RELEASE,
) -> list[Manifest]:
    """The rendered objects of one mode, empty documents dropped."""
    text = render_text(mode, namespace, monitoring, extra_args, include_crds, release)
    return [doc for doc in yaml.safe_load_all(text) if doc]


def mode(name: str) -> Mode:
    found = [m for m in MODES if m.name == name]
    assert found, f"no values file charts/fraudstream/ci/{name}-values.yaml"
    return found[0]


def find(objects: list[Manifest], kind: str, name_suffix: str = "") -> Manifest:
    """The one object of `kind` whose name ends with `name_suffix`."""
    hits = [o for o in objects if o["kind"] == kind and o["metadata"]["name"].endswith(name_suffix)]
    assert len(hits) == 1, f"expected one {kind} named *{name_suffix}, got {[o['metadata']['name'] for o in hits]}"
    return hits[0]


def kind_set(objects: list[Manifest]) -> set[str]:
    return {o["kind"] for o in objects}


def pod_specs(objects: list[Manifest]) -> list[tuple[str, Manifest]]:
    """Every pod spec the chart defines, with where it comes from: workloads, the executor pod template in the
    Spark ConfigMap, and the SparkApplication's driver and executor pod templates."""
    specs: list[tuple[str, Manifest]] = []
    for obj in objects:
        where = f"{obj['kind']}/{obj['metadata']['name']}"
        if obj["kind"] in ("Deployment", "StatefulSet"):
            specs.append((where, obj["spec"]["template"]["spec"]))
        elif obj["kind"] == "ConfigMap" and "executor-pod-template.yaml" in obj.get("data", {}):
            specs.append(
                (f"{where}:executor-pod-template", yaml.safe_load(obj["data"]["executor-pod-template.yaml"])["spec"])
            )
        elif obj["kind"] == "SparkApplication":
            for role in ("driverSpec", "executorSpec"):
                specs.append((f"{where}:{role}", obj["spec"][role]["podTemplateSpec"]["spec"]))
    return specs


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD_FILE.read_text())
    return loaded


def dashboard_exprs() -> list[tuple[str, str]]:
    """(panel title, PromQL) of every query of the dashboard."""
    return [(panel["title"], target["expr"]) for panel in dashboard()["panels"] for target in panel.get("targets", [])]
