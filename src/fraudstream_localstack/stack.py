"""The whole local stack as one supervised unit: `make run` (foreground), `make up` / `make down` (background).

Components start in dependency order and stop in reverse. `run` writes `.local/stack.env` once everything is
ready and stops everything on SIGINT/SIGTERM. `up` starts `run` detached and returns when it is ready; `down`
signals it and waits until every process is gone. Both are idempotent.

`--kafka-security sasl_ssl` or `mtls` (`make run KAFKA_SECURITY=...`) runs a secured broker (fraudstream_localstack
.kafka): the credentials are made once under `.local/kafka-security/`, the admin creates the contract's topics and
each component's ACLs (fraudstream_kafka.acls), and each component connects as its own principal. `.local/stack.env`
(readable by its owner only) then carries the admin's client settings, for the user's own clients and tools.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fraudstream_kafka.acls import Component as KafkaComponent
from fraudstream_kafka.acls import all_acls, create_acls
from fraudstream_kafka.settings import CLIENT_PREFIX, KafkaSettings, Topics
from fraudstream_kafka.topics import ensure_contract_topics

from .kafka import KafkaBroker, KafkaPorts
from .kafka_security import ADMIN, COMPONENT_USERS, KafkaSecurity, SecurityFiles
from .kube import KubeControlPlane, KubePorts
from .layout import LOCAL, write_env_file
from .processes import StopSignals, free_port, wait_for

STACK_ENV = LOCAL / "stack.env"
PID_FILE = LOCAL / "stack.pid"
LOG_FILE = LOCAL / "stack.log"


@dataclass
class StackConfig:
    """Ports and names for the developer stack; fixed defaults so that `make up` gives stable addresses."""

    data_dir: Path = LOCAL / "data"
    kafka_ports: KafkaPorts = field(default_factory=lambda: KafkaPorts(broker=9092, controller=9093, mtls=9094))
    kube_ports: KubePorts = field(default_factory=lambda: KubePorts(apiserver=6443, etcd_client=2379, etcd_peer=2380))
    topics: Topics = field(default_factory=Topics.from_env)
    detector_metrics_port: int = 9108
    operator_metrics_port: int = 9109
    detector_evaluator_metrics_port: int = 9111
    kubeconfig: Path = LOCAL / "kubeconfig"
    kafka_security: KafkaSecurity = KafkaSecurity.PLAINTEXT
    security_dir: Path = LOCAL / "kafka-security"

    @classmethod
    def isolated(cls, root: Path, **settings: Any) -> StackConfig:
        """A stack whose files are under `root` and whose ports are free ones, so it runs beside any other on the
        machine (tests, benchmarks); `settings` override fields."""
        defaults: dict[str, Any] = {
            "data_dir": root / "data",
            "kafka_ports": KafkaPorts.free(),
            "kube_ports": KubePorts.free(),
            "detector_metrics_port": free_port(),
            "operator_metrics_port": free_port(),
            "detector_evaluator_metrics_port": free_port(),
            "kubeconfig": root / "kubeconfig",
            "security_dir": root / "kafka-security",
        }
        return cls(**{**defaults, **settings})


class Component(Protocol):
    """Something the stack starts after the infrastructure (operator, detector, generator)."""

    name: str

    def start(self, stack: LocalStack) -> None: ...

    def stop(self) -> None: ...


class LocalStack:
    """Kafka + kube control plane (+ application components) with the contract's topics created."""

    def __init__(self, config: StackConfig, components: list[Component] | None = None) -> None:
        self.config = config
        security = SecurityFiles(config.security_dir) if config.kafka_security.secured else None
        self.kafka = KafkaBroker(config.data_dir / "kafka", config.kafka_ports, security=security)
        self.kube = KubeControlPlane(config.data_dir / "kube", config.kube_ports, kubeconfig=config.kubeconfig)
        self.components = components or []
        self._started: list[Callable[[], None]] = []

    @property
    def kafka_settings(self) -> KafkaSettings:
        """The stack user's own client settings: the admin's, on the listener of the configured security mode."""
        return self.kafka.settings(ADMIN, self.config.kafka_security)

    def client_settings(self, component: KafkaComponent) -> KafkaSettings:
        """What `component` connects with: its own principal on a secured broker."""
        return self.kafka.settings(COMPONENT_USERS[component], self.config.kafka_security)

    def env(self) -> dict[str, str]:
        """The `.local/stack.env` variables (CONTRACT section 1); on a secured broker also the admin's KAFKA_CLIENT_*
        and KAFKA_COMMAND_CONFIG, the same as a properties file for Kafka's command-line tools."""
        extra: dict[str, str] = {}
        if self.kafka.security is not None:
            command_config = self.kafka.security.java_command_config(ADMIN, self.config.kafka_security)
            extra = {"KAFKA_COMMAND_CONFIG": str(command_config)}
        return {
            **self.kafka_settings.as_env(),
            "KAFKA_SECURITY": self.config.kafka_security.value,
            **extra,
            "KUBECONFIG": str(self.kube.kubeconfig),
            "DETECTOR_METRICS_URL": f"http://127.0.0.1:{self.config.detector_metrics_port}/metrics",
            "DETECTOR_EVALUATOR_METRICS_URL": f"http://127.0.0.1:{self.config.detector_evaluator_metrics_port}/metrics",
            "OPERATOR_METRICS_URL": f"http://127.0.0.1:{self.config.operator_metrics_port}/metrics",
            **self.config.topics.as_env(),
        }

    def component_env(self, component: KafkaComponent) -> dict[str, str]:
        """The environment a component process gets: `env()` with the component's Kafka settings instead of the
        admin's (no KAFKA_COMMAND_CONFIG)."""
        env = {k: v for k, v in self.env().items() if not k.startswith(CLIENT_PREFIX) and k != "KAFKA_COMMAND_CONFIG"}
        return {**env, **self.client_settings(component).as_env()}

    def start(self) -> None:
        try:
            self.kafka.start()
            self._started.append(self.kafka.stop)
            self.kube.start()
            self._started.append(self.kube.stop)
            ensure_contract_topics(self.kafka_settings, self.config.topics)
            if self.kafka.security is not None:
                principals = {component: f"User:{user}" for component, user in COMPONENT_USERS.items()}
                create_acls(self.kafka_settings, all_acls(principals, self.config.topics))
            for component in self.components:
                component.start(self)
                self._started.append(component.stop)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        while self._started:
            with contextlib.suppress(Exception):
                self._started.pop()()


def run(components: list[Component], kafka_security: KafkaSecurity = KafkaSecurity.PLAINTEXT) -> int:
    """Foreground: start everything, print where things are, block until SIGINT/SIGTERM, stop everything."""
    signals = StopSignals()  # a signal while starting aborts the start (stack.start() stops what it started)
    STACK_ENV.unlink(missing_ok=True)
    # The stack gives each component its own Kafka settings; none may leak in from a shell that sourced an earlier
    # stack.env (a component would otherwise connect with the admin's credentials, or with the wrong protocol).
    for key in [k for k in os.environ if k.startswith(CLIENT_PREFIX)]:
        del os.environ[key]
    stack = LocalStack(StackConfig(kafka_security=kafka_security), components)
    print(
        f"fraudstream: starting Kafka ({kafka_security.value}), etcd, kube-apiserver, kube-controller-manager ...",
        flush=True,
    )
    try:
        stack.start()
        signals.started()
        write_env_file(STACK_ENV, stack.env())  # owner-only: on a secured broker it holds the admin's password
        env = stack.env()
        topics = ", ".join(stack.config.topics.as_env().values())
        print(
            "fraudstream: ready\n"
            f"  Kafka bootstrap   {env['KAFKA_BOOTSTRAP']}  (topics: {topics})\n"
            f"  Kafka security    {_security_summary(stack)}\n"
            f"  kubeconfig        {env['KUBECONFIG']}\n"
            f"  detector metrics  {env['DETECTOR_METRICS_URL']}\n"
            f"  operator metrics  {env['OPERATOR_METRICS_URL']}\n"
            f"  environment       source {STACK_ENV}\n"
            "Ctrl-C stops everything.",
            flush=True,
        )
        signals.wait()
    except KeyboardInterrupt:
        print("fraudstream: interrupted while starting", flush=True)
    finally:
        print("fraudstream: stopping ...", flush=True)
        STACK_ENV.unlink(missing_ok=True)
        stack.stop()
        print("fraudstream: stopped", flush=True)
    return 0


def _security_summary(stack: LocalStack) -> str:
    if stack.kafka.security is None:
        return "plaintext, no authentication, no ACLs"
    users = ", ".join(COMPONENT_USERS.values())
    how = "SCRAM-SHA-512 over TLS" if stack.config.kafka_security is KafkaSecurity.SASL_SSL else "mutual TLS"
    return f"{how}, ACLs per component ({users}; you are admin); credentials in {stack.kafka.security.directory}"


def _running_pid() -> int | None:
    try:
        pid = int(PID_FILE.read_text())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def up(timeout_s: float = 600, kafka_security: KafkaSecurity = KafkaSecurity.PLAINTEXT) -> int:
    """Background: start `run` detached unless it is already running; return when `.local/stack.env` exists."""
    if _running_pid() is None:
        LOCAL.mkdir(parents=True, exist_ok=True)
        STACK_ENV.unlink(missing_ok=True)
        with open(LOG_FILE, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "fraudstream_localstack", "run", "--kafka-security", kafka_security.value],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        PID_FILE.write_text(str(proc.pid))

        def ready() -> bool:
            if proc.poll() is not None:
                raise SystemExit(f"the stack failed to start; see {LOG_FILE}")
            return STACK_ENV.exists()

        wait_for(ready, timeout_s, "local stack", interval_s=0.5)
    print(STACK_ENV.read_text(), end="")
    return 0


def down(timeout_s: float = 120) -> int:
    """Stop a stack started by `up`; a no-op when none runs."""
    pid = _running_pid()
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while _running_pid() is not None and time.monotonic() < deadline:
            time.sleep(0.2)
        if _running_pid() is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
    PID_FILE.unlink(missing_ok=True)
    STACK_ENV.unlink(missing_ok=True)
    print("fraudstream: down")
    return 0


def main(argv: list[str] | None = None, components_factory: Callable[[], list[Component]] = list) -> int:
    parser = argparse.ArgumentParser(prog="fraudstream_localstack", description=__doc__)
    parser.add_argument("command", choices=["run", "up", "down"])
    parser.add_argument("--infrastructure-only", action="store_true", help="Kafka and the control plane only")
    parser.add_argument(
        "--kafka-security",
        type=KafkaSecurity,
        choices=list(KafkaSecurity),
        default=KafkaSecurity(os.environ.get("KAFKA_SECURITY") or "plaintext"),
        help="plaintext; sasl_ssl: TLS and SCRAM-SHA-512; mtls: mutual TLS. Both secured modes: ACLs per component "
        "(env KAFKA_SECURITY, default plaintext)",
    )
    args = parser.parse_args(argv)
    if args.command == "run":
        return run([] if args.infrastructure_only else components_factory(), args.kafka_security)
    if args.command == "up":
        return up(kafka_security=args.kafka_security)
    return down()
