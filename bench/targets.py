"""What `make bench` measures: the local stack it starts itself, or the chart deployed by `make k8s-deploy`.

Either way the benchmark's own generator sends the load and its own consumer times the alerts, from this machine;
only where Kafka and the detector run differs. A target is started, read, and stopped:
- `kafka` and `topics`: where the generator writes and the measuring consumer reads;
- `generator_env()`: the environment of the benchmark's generator process;
- `metrics_urls()`: every endpoint serving the detector's metrics (the driver's query metrics and each JVM that runs
  the evaluator's tasks), scraped before and after the window;
- `detector_pid` and `checkpoint_dir`: for watchers that look at the detector's process (the local stack only);
- `runnable`: what the detector ran, the evaluator jar or the image (bench/provenance.py), once started.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import provenance
from fraudstream_kafka.acls import Component
from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_localstack.components import detector
from fraudstream_localstack.deploy import (
    Cluster,
    Release,
    apply_rules,
    deploy,
    executor_pods,
    read_env_file,
)
from fraudstream_localstack.kafka_security import KafkaSecurity
from fraudstream_localstack.layout import evaluator_to_run
from fraudstream_localstack.operator_component import OperatorComponent
from fraudstream_localstack.stack import LocalStack, StackConfig

# bench.rules writes its FraudRules into this namespace (the chart's operator watches every namespace).
RULES_NAMESPACE = "default"
# Set in the benchmark's own mount namespace, whose /etc/resolv.conf is the cluster's DNS (see in_cluster_dns).
CLUSTER_DNS_MARKER = "FRAUDSTREAM_BENCH_CLUSTER_DNS"


class LocalTarget:
    """The local stack on free ports under `work`: Kafka, the control plane, the operator with the benchmark's rules,
    and the detector (its evaluator on local[N] in one JVM)."""

    label = "local stack"

    def __init__(self, work: Path, rules_dir: Path, detector_args: Sequence[str], security: KafkaSecurity) -> None:
        self.config = StackConfig.isolated(work, kafka_security=security)
        self.checkpoint_dir: Path | None = work / "checkpoint"
        self.runnable = provenance.runnable()
        self._detector = detector(
            self.config, self.checkpoint_dir, list(detector_args), log_dir=work, prepare=self._evaluator_to_run
        )
        self._stack = LocalStack(
            self.config, [OperatorComponent(examples_dir=rules_dir, timeout_s=300), self._detector]
        )
        self.topics = self.config.topics

    def start(self) -> None:
        self._stack.start()

    def stop(self) -> None:
        self._stack.stop()

    @property
    def kafka(self) -> KafkaSettings:
        return self._stack.kafka_settings

    @property
    def detector_pid(self) -> int | None:
        return self._detector.pid

    def _evaluator_to_run(self) -> Path:
        """layout.evaluator_to_run, its jar recorded as `runnable` before the detector's JVM opens it."""
        jar = evaluator_to_run()
        self.runnable = provenance.runnable(jar, env=os.environ)  # the detector inherits this environment
        return jar

    def stored_data(self) -> list[Path]:
        """What the run stored that only this stack, started again, could read: the detector's checkpoint, Kafka's
        log segments and etcd's data (gigabytes after a soak). The logs beside them are not among them."""
        assert self.checkpoint_dir is not None
        return [self.checkpoint_dir, self._stack.kafka.log_dir, self._stack.kube.etcd_dir]

    def generator_env(self) -> dict[str, str]:
        return self._stack.component_env(Component.GENERATOR)

    def metrics_urls(self) -> list[str]:
        env = self._stack.env()
        return [env["DETECTOR_METRICS_URL"], env["DETECTOR_EVALUATOR_METRICS_URL"]]


def in_cluster_dns(env_file: Path, argv: Sequence[str]) -> None:
    """Re-runs this benchmark (`python -m bench.run argv`) in a mount namespace of its own whose /etc/resolv.conf
    names the node's cluster DNS, unless it already runs there. The deployed Kafka advertises its in-cluster name,
    which only the cluster's DNS resolves; this machine routes the node's Service and pod ranges, so the rest of
    the benchmark works unchanged. Nothing outside the benchmark's processes sees the change (needs root, as
    `make k8s-up` does)."""
    node = read_env_file(env_file)
    if os.environ.get(CLUSTER_DNS_MARKER) == node["K8S_DNS_IP"]:
        return
    unshare = shutil.which("unshare")
    if unshare is None:
        raise SystemExit("bench: --k8s-env needs util-linux's unshare")
    # Next to the env file, under .local/ (overwritten by each run, gone with `make clean`): no temporary to clean up.
    resolv = env_file.resolve().parent / "bench-resolv.conf"
    resolv.write_text(f"nameserver {node['K8S_DNS_IP']}\nsearch cluster.local\noptions ndots:5\n")
    script = 'mount --bind "$0" /etc/resolv.conf && exec "$@"'
    env = {**os.environ, CLUSTER_DNS_MARKER: node["K8S_DNS_IP"]}
    os.execve(unshare, [unshare, "--mount", "--propagation", "private", "--", "sh", "-c", script, str(resolv),
                        sys.executable, "-m", "bench.run", *argv], env)  # fmt: skip


class DeployedTarget:
    """The chart on the node of `env_file`, as `make k8s-deploy` installs it, upgraded for the benchmark: its
    in-cluster generator off (the benchmark sends the load), `settings` (helm `--set`) on top, every FraudRule
    replaced by the benchmark's rules. The release stays installed afterwards, with the benchmark's rules and
    values."""

    label = "k8s-deploy (local node: driver + executor pods)"
    checkpoint_dir: Path | None = None
    detector_pid: int | None = None

    def __init__(self, env_file: Path, rules_dir: Path, settings: Sequence[str] = ()) -> None:
        node = read_env_file(env_file)
        self.cluster = Cluster(Path(node["KUBECONFIG"]), log=lambda line: print(f"bench: {line}", flush=True))
        self.release = Release(settings=("generator.enabled=false", *settings))
        self.rules_dir = rules_dir
        self.runnable = provenance.runnable()
        self.topics = Topics()
        self.kafka = KafkaSettings(
            bootstrap=f"{self.release.name}-kafka.{self.release.namespace}.svc.cluster.local:9092"
        )

    def start(self) -> None:
        deploy(self.cluster, self.release)
        images = {c["image"] for pod in self._detector_pods() for c in pod["spec"]["containers"]}
        self.runnable = provenance.runnable(image=", ".join(sorted(images)) or None)  # as running, --set included
        self.cluster.kubectl("delete", "fraudrules", "--all", "--all-namespaces", "--wait=true", "--timeout=300s")
        apply_rules(self.cluster, RULES_NAMESPACE, timeout_s=300, directory=self.rules_dir)

    def stop(self) -> None:
        """Nothing to stop: the release stays as `make k8s-deploy` left it, with the benchmark's rules."""

    def stored_data(self) -> list[Path]:
        """Nothing: the release's data is the cluster's."""
        return []

    def generator_env(self) -> dict[str, str]:
        return {**os.environ, **self.kafka.as_env(), **self.topics.as_env()}

    def metrics_urls(self) -> list[str]:
        pods = self._detector_pods()
        driver = [f"http://{p['status']['podIP']}:9108/metrics" for p in pods if p["status"].get("podIP")]
        executors = executor_pods(self.cluster, self.release.namespace)
        return driver + [f"http://{p['status']['podIP']}:9111/metrics" for p in executors if p["status"].get("podIP")]

    def _detector_pods(self) -> list[dict[str, Any]]:
        """The pods labelled as the release's detector component: its driver (executor_pods finds its executors)."""
        pods = self.cluster.get("pods", "-n", self.release.namespace, "-l", "app.kubernetes.io/component=detector")
        return list(pods["items"])
