"""The operator as a component of the local stack (`make run` / `make up`).

`start` installs the FraudRule CRD, runs `python -m fraudstream_operator` watching all namespaces (one replica,
leader election on, its Lease in `default`; on a secured broker as its own Kafka principal), waits until its
liveness endpoint answers as the leader (so the Lease is held and the startup reconciliation done), applies
`examples/rules/` and waits until every example rule reports Ready=True for its current generation.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fraudstream_kafka.acls import Component

from .kube import wait_established
from .layout import BIN, ROOT, require
from .processes import ManagedProcess, free_port, wait_for

if TYPE_CHECKING:
    from .stack import LocalStack

CRD_PATH = ROOT / "crds" / "fraudrule.yaml"
EXAMPLES_DIR = ROOT / "examples" / "rules"
READY = "Ready"  # the FraudRule status condition (CONTRACT section 4); the stack runs the operator, never imports it


def kubectl(kubeconfig: Path, *args: str, timeout_s: float = 60) -> str:
    """Runs the cached kubectl against `kubeconfig`; raises RuntimeError with its stderr on failure."""
    argv = [str(require(BIN / "kubectl", "k8s")), f"--kubeconfig={kubeconfig}", *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def install_crd(kubeconfig: Path, timeout_s: float = 60) -> None:
    """Applies the FraudRule CRD and returns once the API server reports it Established."""
    kubectl(kubeconfig, "apply", "-f", str(CRD_PATH))
    wait_established(functools.partial(kubectl, kubeconfig), ["fraudrules.fraudstream.io"], timeout_s)


def is_ready(item: dict[str, Any]) -> bool:
    """Whether a FraudRule reports Ready=True for its current generation."""
    status = item.get("status") or {}
    ready = [c for c in status.get("conditions") or [] if c.get("type") == READY and c.get("status") == "True"]
    return bool(ready) and status.get("observedGeneration") == item["metadata"]["generation"]


def _leads(url: str) -> bool:
    """Whether the operator at `url` leads and is reconciled: kopf's answer counts the rules it manages, while a
    standby (waiting for the Lease, e.g. one a stopped stack left held) answers {"standby": true, ...}."""
    with urllib.request.urlopen(url, timeout=2) as response:
        return response.status == 200 and "rulesManaged" in json.loads(response.read())


class OperatorComponent:
    """Satisfies `fraudstream_localstack.stack.Component`."""

    name = "operator"

    def __init__(self, examples_dir: Path = EXAMPLES_DIR, timeout_s: float = 120) -> None:
        self.examples_dir = examples_dir
        self.timeout_s = timeout_s
        self._process: ManagedProcess | None = None

    def start(self, stack: LocalStack) -> None:
        kubeconfig = stack.kube.kubeconfig
        install_crd(kubeconfig)
        liveness = f"http://127.0.0.1:{free_port()}/healthz"
        env = {
            "KUBECONFIG": str(kubeconfig),
            **stack.client_settings(Component.OPERATOR).as_env(),
            "RULES_TOPIC": stack.config.topics.rules,
            "WATCH_NAMESPACES": "",
            "OPERATOR_METRICS_PORT": str(stack.config.operator_metrics_port),
            "OPERATOR_METRICS_ADDR": "127.0.0.1",
            "OPERATOR_LIVENESS_ENDPOINT": liveness,
        }
        argv = [sys.executable, "-m", "fraudstream_operator"]
        log_path = stack.config.data_dir / "operator" / "operator.log"
        self._process = process = ManagedProcess(self.name, argv, log_path, env=env).start()

        def live() -> bool:
            process.check_alive()
            return _leads(liveness)

        wait_for(live, self.timeout_s, f"operator leading, liveness at {liveness}", interval_s=0.5)
        kubectl(kubeconfig, "apply", "-f", str(self.examples_dir))

        def examples_ready() -> bool:
            process.check_alive()
            listed = json.loads(kubectl(kubeconfig, "get", "-f", str(self.examples_dir), "-o", "json"))
            items = listed["items"] if listed.get("kind") == "List" else [listed]
            return bool(items) and all(is_ready(item) for item in items)

        wait_for(examples_ready, self.timeout_s, f"example rules in {self.examples_dir} Ready", interval_s=0.5)

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None
