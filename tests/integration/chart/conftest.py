"""Chart fixtures on the session kube-apiserver: the prometheus-operator CRDs (from the Go module the provisioning
fetches), the FraudRule CRD from the chart, and namespaces created for a test and deleted after it."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fraudstream_localstack.kube import wait_established
from fraudstream_localstack.layout import BIN, CACHE, require
from tests.unit.chart.rendering import CHART

MONITORING_CRDS = CACHE / "monitoring-crds"


def kubectl(
    kubeconfig: Path, *args: str, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """The cached kubectl against `kubeconfig`; with check=True a failure raises with kubectl's stderr."""
    argv = [str(require(BIN / "kubectl", "k8s")), f"--kubeconfig={kubeconfig}", *args]
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed:\n{done.stderr}")
    return done


def _reader(kubeconfig: Path) -> Callable[..., str]:
    """`kubectl` as `wait_established` calls it: arguments in, stdout out."""
    return lambda *args: kubectl(kubeconfig, *args).stdout


@pytest.fixture(scope="session")
def monitoring_crds(kubeconfig: Path) -> None:
    """The ServiceMonitor, PodMonitor and PrometheusRule CRDs of monitoring.coreos.com/v1, really installed
    (server-side: their schemas are too large for the last-applied annotation)."""
    kinds = ("servicemonitors", "podmonitors", "prometheusrules")
    files = [require(MONITORING_CRDS / f"monitoring.coreos.com_{kind}.yaml", "monitoring-crds") for kind in kinds]
    kubectl(kubeconfig, "apply", "--server-side", "--force-conflicts", *(f"--filename={f}" for f in files))
    wait_established(_reader(kubeconfig), [f"{kind}.monitoring.coreos.com" for kind in kinds])


@pytest.fixture(scope="session")
def chart_crds(kubeconfig: Path) -> None:
    """The FraudRule CRD exactly as the chart ships it."""
    kubectl(kubeconfig, "apply", "-f", str(CHART / "crds"))
    wait_established(_reader(kubeconfig), ["fraudrules.fraudstream.io"])


@pytest.fixture
def namespaces(kubeconfig: Path) -> Iterator[Callable[[str], str]]:
    """`make(prefix)` creates a namespace with a unique name; all are deleted after the test."""
    made: list[str] = []

    def make(prefix: str) -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:6]}"
        kubectl(kubeconfig, "create", "namespace", name)
        made.append(name)
        return name

    try:
        yield make
    finally:
        for name in made:
            kubectl(kubeconfig, "delete", "namespace", name, "--wait=false", check=False)
