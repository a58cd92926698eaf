"""Operator fixtures: the FraudRule CRD on the session API server, a namespace and a rules topic per test, and
the environment the operator reads (pointing at the session broker unless a test brings its own)."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes import client

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_localstack.operator_component import install_crd
from fraudstream_localstack.processes import ManagedProcess, free_port
from tests.integration.operator.harness import FraudRules, OperatorHarness, OperatorProcess
from tests.kube_helpers import api_client, new_namespace


@pytest.fixture(scope="session")
def fraudrule_crd(kubeconfig: Path) -> None:
    install_crd(kubeconfig)


@pytest.fixture
def kube_api(kubeconfig: Path) -> Iterator[client.ApiClient]:
    api = api_client(kubeconfig)
    try:
        yield api
    finally:
        api.close()


@pytest.fixture
def namespace(kube_api: client.ApiClient, fraudrule_crd: None) -> Iterator[str]:
    name = f"fr-{uuid.uuid4().hex[:10]}"
    client.CoreV1Api(kube_api).create_namespace(new_namespace(name))
    try:
        yield name
    finally:
        FraudRules(kube_api, name).release_all()
        client.CoreV1Api(kube_api).delete_namespace(name)


@pytest.fixture
def rules(kube_api: client.ApiClient, namespace: str) -> FraudRules:
    return FraudRules(kube_api, namespace)


def configure_operator(
    monkeypatch: pytest.MonkeyPatch, kubeconfig: Path, kafka: KafkaSettings, topic: str, namespaces: str
) -> tuple[str, str]:
    """Sets the operator's environment; returns its (liveness, metrics) URLs on fresh ports."""
    metrics_port, liveness_port = free_port(), free_port()
    env = {
        "KUBECONFIG": str(kubeconfig),
        "KAFKA_BOOTSTRAP": kafka.bootstrap,
        "RULES_TOPIC": topic,
        "WATCH_NAMESPACES": namespaces,
        "OPERATOR_METRICS_PORT": str(metrics_port),
        "OPERATOR_METRICS_ADDR": "127.0.0.1",
        "OPERATOR_LIVENESS_ENDPOINT": f"http://127.0.0.1:{liveness_port}/healthz",
        "OPERATOR_PUBLISH_TIMEOUT_S": "5",
        "OPERATOR_RETRY_BASE_S": "0.5",
        "OPERATOR_RETRY_MAX_S": "4",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env["OPERATOR_LIVENESS_ENDPOINT"], f"http://127.0.0.1:{metrics_port}/metrics"


MakeOperator = Callable[[KafkaSettings], OperatorHarness]


@pytest.fixture
def make_operator(
    monkeypatch: pytest.MonkeyPatch, kubeconfig: Path, namespace: str, unique_topics: Topics
) -> MakeOperator:
    """make_operator(kafka): the operator for this test's namespace and rules topic, talking to `kafka`."""

    def make(kafka: KafkaSettings) -> OperatorHarness:
        liveness, metrics = configure_operator(monkeypatch, kubeconfig, kafka, unique_topics.rules, namespace)
        return OperatorHarness(namespace, unique_topics.rules, kafka, liveness, metrics)

    return make


@pytest.fixture
def operator(make_operator: MakeOperator, kafka_settings: KafkaSettings) -> OperatorHarness:
    return make_operator(kafka_settings)


# Short election timings, so that a takeover takes seconds: a standby takes over 4 s after the Lease last changed.
ELECTION_ENV = {
    "OPERATOR_LEASE_DURATION_S": "4",
    "OPERATOR_LEASE_RENEW_DEADLINE_S": "2.5",
    "OPERATOR_LEASE_RETRY_PERIOD_S": "0.5",
}

StartReplica = Callable[..., OperatorProcess]


@pytest.fixture
def start_replica(
    kubeconfig: Path, namespace: str, unique_topics: Topics, kafka_settings: KafkaSettings, tmp_path: Path
) -> Iterator[StartReplica]:
    """start_replica(identity, **env): one more `python -m fraudstream_operator` process watching this test's
    namespace, its Lease `fraudstream-operator` in that namespace, with ELECTION_ENV and `env` on top. Every
    replica is stopped afterwards, and its process group is checked empty."""
    started: list[ManagedProcess] = []

    def start(identity: str, **env: str) -> OperatorProcess:
        metrics_port, liveness_port = free_port(), free_port()
        liveness = f"http://127.0.0.1:{liveness_port}/healthz"
        full_env = {
            "KUBECONFIG": str(kubeconfig),
            "KAFKA_BOOTSTRAP": kafka_settings.bootstrap,
            "RULES_TOPIC": unique_topics.rules,
            "WATCH_NAMESPACES": namespace,
            "OPERATOR_METRICS_PORT": str(metrics_port),
            "OPERATOR_METRICS_ADDR": "127.0.0.1",
            "OPERATOR_LIVENESS_ENDPOINT": liveness,
            "OPERATOR_PUBLISH_TIMEOUT_S": "5",
            "OPERATOR_RETRY_BASE_S": "0.5",
            "OPERATOR_RETRY_MAX_S": "4",
            "OPERATOR_LEASE_NAMESPACE": namespace,
            "OPERATOR_LEASE_NAME": "fraudstream-operator",
            "OPERATOR_IDENTITY": identity,
            **ELECTION_ENV,
            **env,
        }
        argv = [sys.executable, "-m", "fraudstream_operator"]
        process = ManagedProcess(f"operator-{identity}", argv, tmp_path / f"{identity}.log", env=full_env).start()
        started.append(process)
        return OperatorProcess(identity, process, liveness, f"http://127.0.0.1:{metrics_port}/metrics")

    try:
        yield start
    finally:
        groups = [process.pid for process in started if process.pid is not None]
        for process in started:
            process.stop()
        for group in groups:
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                continue
            raise AssertionError(f"process group {group} outlived its replica")
