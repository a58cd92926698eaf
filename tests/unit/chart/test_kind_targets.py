"""`make kind-up` and `make kind-deploy`, run with stand-ins for docker, kind, helm and kubectl (this machine has no
Docker engine): the commands they issue, in order, and the clear failure without a running Docker engine."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from fraudstream_localstack.layout import ROOT, versions

IMAGE_ID = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"


def stub(path: Path, log: Path, body: str = "") -> Path:
    """An executable that appends its name and arguments to `log`, then runs `body`."""
    path.write_text(f'#!/bin/bash\nprintf "%s\\n" "$(basename "$0") $*" >>"{log}"\n{body}\n')
    path.chmod(0o755)
    return path


def make(target: str, tools: dict[str, Path]) -> subprocess.CompletedProcess[str]:
    overrides = [f"{name}={path}" for name, path in tools.items()]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    return subprocess.run(
        ["make", "--no-print-directory", target, *overrides],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def tools(tmp_path: Path) -> dict[str, Path]:
    log = tmp_path / "calls.log"
    docker_body = f"""case "$1" in
  image) echo {IMAGE_ID} ;;
esac"""
    kind_body = 'if [ "$1" = get ]; then echo other-cluster; fi'
    return {
        "DOCKER": stub(tmp_path / "docker", log, docker_body),
        "KIND": stub(tmp_path / "kind", log, kind_body),
        "HELM": stub(tmp_path / "helm", log),
        "KUBECTL": stub(tmp_path / "kubectl", log),
    }


def calls(tools: dict[str, Path]) -> list[list[str]]:
    log = tools["DOCKER"].parent / "calls.log"
    return [shlex.split(line) for line in log.read_text().splitlines()]


def test_without_a_running_docker_engine_both_targets_stop_at_once_and_say_why(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    no_engine = {
        "DOCKER": stub(tmp_path / "docker", log, "exit 1"),
        "KIND": stub(tmp_path / "kind", log),
        "HELM": stub(tmp_path / "helm", log),
        "KUBECTL": stub(tmp_path / "kubectl", log),
    }
    for target in ("kind-up", "kind-deploy"):
        done = make(target, no_engine)
        assert done.returncode != 0
        assert "need a running Docker engine" in done.stderr
    assert [line.split()[0] for line in log.read_text().splitlines()] == ["docker", "docker"]


def test_kind_up_creates_the_cluster_and_installs_kube_prometheus_stack(tools: dict[str, Path]) -> None:
    done = make("kind-up", tools)
    assert done.returncode == 0, done.stderr
    issued = calls(tools)
    assert issued[0] == ["docker", "info"]
    assert ["kind", "get", "clusters"] in issued
    assert ["kind", "create", "cluster", "--name", "fraudstream", "--wait", "180s"] in issued
    helm = next(c for c in issued if c[0] == "helm")
    assert helm[1:4] == ["upgrade", "--install", "kube-prometheus-stack"]
    assert helm[helm.index("--version") + 1] == versions()["KUBE_PROMETHEUS_STACK_VERSION"]
    assert helm[helm.index("--kube-context") + 1] == "kind-fraudstream"
    assert "grafana.sidecar.dashboards.searchNamespace=ALL" in helm


def test_kind_deploy_builds_loads_installs_and_applies_the_example_rules(tools: dict[str, Path]) -> None:
    done = make("kind-deploy", tools)
    assert done.returncode == 0, done.stderr
    issued = calls(tools)
    pins = versions()
    builds = [c for c in issued if c[:2] == ["docker", "build"]]
    assert [b[b.index("--target") + 1] for b in builds] == ["app", "kafka"]
    for build in builds:
        for arg in ("DEBIAN_IMAGE", "PYTHON_PACKAGE", "JRE_PACKAGE", "JDK_PACKAGE"):
            assert f"{arg}={pins[arg]}" in build, arg
    tag = IMAGE_ID.split(":")[1][:12]
    assert [
        "kind",
        "load",
        "docker-image",
        f"fraudstream:{tag}",
        f"fraudstream-kafka:{tag}",
        "--name",
        "fraudstream",
    ] in issued
    helm = next(c for c in issued if c[0] == "helm")
    assert helm[1:5] == ["upgrade", "--install", "fraudstream", "charts/fraudstream"]
    assert helm[helm.index("-f") + 1] == "charts/fraudstream/ci/kind-values.yaml"
    assert f"image.tag={tag}" in helm and f"kafka.dev.image.tag={tag}" in helm
    assert "--wait" in helm
    kubectl = [c for c in issued if c[0] == "kubectl"]
    assert kubectl[0][-3:] == ["apply", "-f", "examples/rules/"]
    assert "--for=condition=Ready" in kubectl[1]
    # Order: images before the install, the install before the rules.
    order = [c[0] + (" " + c[1] if c[0] in ("docker", "kind") else "") for c in issued]
    assert order.index("kind load") < order.index("helm") < order.index("kubectl")
    assert "port-forward svc/kube-prometheus-stack-grafana 3000:80" in done.stdout
    assert "/d/fraudstream-overview" in done.stdout


def test_kind_values_and_examples_exist() -> None:
    assert (ROOT / "charts" / "fraudstream" / "ci" / "kind-values.yaml").is_file()
    assert list((ROOT / "examples" / "rules").glob("*.yaml"))
