"""Every documented mode of the chart, rendered with and without the monitoring API, is accepted by a real
kube-apiserver (`kubectl apply --dry-run=server`) with the prometheus-operator CRDs installed first; so are the pod
templates Spark fills in (the executor template, and the SparkApplication's driver and executor templates)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.integration.chart.conftest import kubectl
from tests.unit.chart.rendering import (
    CHART,
    EXECUTOR_MODES,
    MODES,
    Manifest,
    Mode,
    helm_bin,
    mode,
    pod_specs,
    render,
)

pytestmark = pytest.mark.integration


def _spark_image(objects: list[Manifest]) -> str:
    for obj in objects:
        if obj["kind"] == "SparkApplication":
            return str(obj["spec"]["sparkConf"]["spark.kubernetes.container.image"])
        if obj["kind"] == "ConfigMap" and "spark-defaults.conf" in obj.get("data", {}):
            for line in obj["data"]["spark-defaults.conf"].splitlines():
                if line.startswith("spark.kubernetes.container.image "):
                    return str(line.split(" ", 1)[1])
    raise AssertionError("no spark.kubernetes.container.image rendered")


def _spark_pod_templates(objects: list[Manifest], namespace: str) -> list[Manifest]:
    """The pod templates Spark completes (with the image of spark.kubernetes.container.image), as PodTemplates.
    A detector on a local[N] master has none."""
    templates: list[Manifest] = []
    for where, spec in pod_specs(objects):
        if ":" not in where:
            continue
        image = _spark_image(objects)
        filled = copy.deepcopy(spec)
        for container in filled["containers"]:
            container.setdefault("image", image)
        name = where.split(":")[1].lower().replace("spec", "").replace("-pod-template", "")
        templates.append(
            {
                "apiVersion": "v1",
                "kind": "PodTemplate",
                "metadata": {"name": f"spark-{name}", "namespace": namespace},
                "template": {"metadata": {"labels": {"app": "spark"}}, "spec": filled},
            }
        )
    return templates


def _dry_run(kubeconfig: Path, tmp_path: Path, objects: list[Manifest]) -> list[str]:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    done = kubectl(kubeconfig, "apply", "--dry-run=server", "-f", str(path))
    lines = done.stdout.splitlines()
    assert len(lines) == len(objects), done.stdout
    assert all(line.endswith("(server dry run)") for line in lines), done.stdout
    return lines


# Every mode with the monitoring API (its objects are a superset of the render without it), and the defaults without.
CASES = [pytest.param(m, True, id=f"{m.name}-with-monitoring-api") for m in MODES]
CASES.append(pytest.param(mode("default"), False, id="default-without-monitoring-api"))


@pytest.mark.parametrize(("m", "monitoring"), CASES)
def test_rendered_mode_passes_server_side_dry_run(
    m: Mode,
    monitoring: bool,
    kubeconfig: Path,
    monitoring_crds: None,
    chart_crds: None,
    namespaces: Callable[[str], str],
    tmp_path: Path,
) -> None:
    namespace = namespaces("chart")
    extra: list[str] = []
    if m.name == "watch-namespaces":
        extra = ["--set", f"operator.watchNamespaces={{{namespaces('team-a')},{namespaces('team-b')}}}"]
    objects = render(m, namespace=namespace, monitoring=monitoring, extra_args=extra, include_crds=True)
    # The SparkApplication kind belongs to the Apache Spark Kubernetes Operator, whose CRD no registry reachable
    # here publishes; its pod templates are dry-run below as PodTemplates, its other fields by the unit tests.
    plain = [o for o in objects if o["kind"] != "SparkApplication"]
    templates = _spark_pod_templates(objects, namespace)
    # The SparkApplication's driver and executor templates; the executor template of a k8s:// master (the executors
    # and local-node modes); none for a local master.
    assert len(templates) == (2 if m.name == "spark-application" else int(m.name in EXECUTOR_MODES))
    lines = _dry_run(kubeconfig, tmp_path, plain + templates)
    monitored = [line for line in lines if ".monitoring.coreos.com/" in line]
    # ServiceMonitor, PrometheusRule and the driver's PodMonitor; the executors' too wherever there are executor pods.
    expected = 3 + (m.name in EXECUTOR_MODES)
    assert len(monitored) == (expected if monitoring else 0), lines
    assert any(line.startswith("customresourcedefinition.apiextensions.k8s.io/fraudrules") for line in lines)
    assert len([line for line in lines if line.startswith("podtemplate/spark-")]) == len(templates)


def test_helm_install_dry_run_prints_ready_to_paste_kubectl_commands(
    kubeconfig: Path, monitoring_crds: None, chart_crds: None, namespaces: Callable[[str], str]
) -> None:
    import subprocess

    namespace = namespaces("notes")
    argv = [str(helm_bin()), "install", "fraudstream", str(CHART), "--dry-run=server", "--namespace", namespace]
    argv += ["--kubeconfig", str(kubeconfig), "-f", str(mode("dev-kafka").values)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    notes = done.stdout.split("NOTES:", 1)[1]
    commands = [line.strip() for line in notes.splitlines() if line.strip().startswith(("kubectl", "curl"))]
    assert len(commands) >= 5, notes
    assert f"kubectl -n {namespace} apply -f examples/rules/" in commands
    assert f"kubectl -n {namespace} get fraudrules" in commands
    assert any(c.startswith(f"kubectl -n {namespace} logs deploy/fraudstream-detector") for c in commands)
    assert "{{" not in notes
    # How to start a new checkpoint when an upgrade cannot resume from the old one.
    assert "checkpoint is /var/lib/fraudstream/checkpoint/detector." in notes
    assert "--set detector.checkpoint.directory=" in notes
    # The monitoring API exists on this server, so the release includes the monitors and no warning about them.
    assert "kind: PodMonitor" in done.stdout
    assert "monitoring.coreos.com/v1 API is absent" not in notes
