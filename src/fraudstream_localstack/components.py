"""The application components of the local stack, started after Kafka and the control plane."""

from __future__ import annotations

import sys
import threading
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from confluent_kafka import Consumer

from fraudstream_kafka.acls import Component

from .layout import LOCAL, ROOT, evaluator_to_run
from .processes import ManagedProcess, wait_for
from .stack import LocalStack, StackConfig


def metric_value(url: str, name: str) -> float | None:
    """The value of an unlabelled sample `name` on a Prometheus endpoint, or None when absent."""
    with urllib.request.urlopen(url, timeout=2) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return None


class PythonService:
    """`python -m MODULE ARGS` with the stack's environment, connecting to Kafka as `component` (its own principal
    on a secured broker, see LocalStack.component_env); ready when `ready(stack)` holds. `prepare`, when given, runs
    at each start before the process is launched (what the process needs built), and an error it raises ends the
    start."""

    def __init__(
        self,
        name: str,
        module: str,
        component: Component,
        args: Sequence[str] = (),
        ready: Callable[[LocalStack], bool] | None = None,
        timeout_s: float = 300,
        log_dir: Path = LOCAL / "logs",
        prepare: Callable[[], object] | None = None,
    ) -> None:
        self._log_dir = log_dir
        self._prepare = prepare
        self.name = name
        self.component = component
        self._argv = [sys.executable, "-m", module, *args]
        self._ready = ready
        self._timeout_s = timeout_s
        self._proc: ManagedProcess | None = None

    def start(self, stack: LocalStack) -> None:
        if self._prepare is not None:
            self._prepare()
        env = stack.component_env(self.component)
        proc = ManagedProcess(self.name, self._argv, self._log_dir / f"{self.name}.log", env=env, cwd=ROOT)
        self._proc = proc.start()
        if self._ready is not None:
            check = self._ready

            def ready() -> bool:
                proc.check_alive()
                return check(stack)

            wait_for(ready, self._timeout_s, self.name, interval_s=1.0)

    def stop(self) -> None:
        if self._proc:
            self._proc.stop(grace_s=30)
            self._proc = None

    @property
    def pid(self) -> int | None:
        """The service's process id while it runs; it leads its own process group (ManagedProcess)."""
        return self._proc.pid if self._proc else None


def detector(
    config: StackConfig,
    checkpoint_dir: Path = LOCAL / "checkpoints" / "detector",
    extra_args: Sequence[str] = (),
    log_dir: Path = LOCAL / "logs",
    prepare: Callable[[], Path] | None = None,
) -> PythonService:
    """The Spark detector on `config`'s metrics ports; ready once its Real-time Mode query runs (its `/readyz`: a new
    checkpoint is seeded first) and it has processed input (the rules the operator published first, so the rule set
    is loaded): a completed batch, or records seen by the evaluator. Starting it first builds the evaluator jar it
    will load, unless FRAUDSTREAM_EVALUATOR_JAR names another (layout.evaluator_to_run, or `prepare` in its place): a
    jar older than the checkout's sources would run old code under the new code's name."""

    def ready(stack: LocalStack) -> bool:
        env = stack.env()
        with urllib.request.urlopen(urllib.parse.urljoin(env["DETECTOR_METRICS_URL"], "/readyz"), timeout=2):
            pass  # a 503 (not ready) raises, which wait_for counts as not yet
        probes = (
            (env["DETECTOR_METRICS_URL"], "fraud_batch_duration_seconds_count"),
            (env["DETECTOR_EVALUATOR_METRICS_URL"], "fraud_input_rows_total"),
        )
        return any((value := metric_value(url, name)) is not None and value >= 1 for url, name in probes)

    # The JVM evaluator keeps recent windows decoded on the heap; 4 GiB keeps the benchmark's working set there.
    args = ["--metrics-port", str(config.detector_metrics_port), "--checkpoint-dir", str(checkpoint_dir)]
    args += ["--evaluator-metrics-port", str(config.detector_evaluator_metrics_port)]
    args += ["--driver-memory", "4g", *extra_args]
    return PythonService(
        "detector", "fraudstream_detector", Component.DETECTOR, args, ready, log_dir=log_dir,
        prepare=prepare or evaluator_to_run,
    )  # fmt: skip


def generator(rate: float = 20.0, log_dir: Path = LOCAL / "logs") -> PythonService:
    return PythonService(
        "generator",
        "fraudstream_generator",
        Component.GENERATOR,
        ["--rate", str(rate), "--payers", "200", "--beneficiaries", "50", "--fraud-share", "0.01"],
        log_dir=log_dir,
    )


class AlertTail:
    """Prints one line per alert arriving on the alerts topic (for `make run`)."""

    name = "alert-tail"

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, stack: LocalStack) -> None:
        consumer = Consumer(
            stack.kafka_settings.client_config(
                **{"group.id": f"alert-tail-{uuid.uuid4().hex[:8]}", "auto.offset.reset": "latest"}
            )
        )
        consumer.subscribe([stack.config.topics.alerts])

        def tail() -> None:
            try:
                while not self._stop.is_set():
                    msg = consumer.poll(0.5)
                    if msg is not None and msg.error() is None:
                        print(f"alert: {(msg.value() or b'').decode()[:300]}", flush=True)
            finally:
                consumer.close()

        self._thread = threading.Thread(target=tail, name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
