"""Session-wide fixtures that start REAL infrastructure on free loopback ports and tear it down afterwards.

A missing binary or jar is a failure (MissingArtifactError names the provisioning step), never a skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_localstack.kafka import KafkaBroker
from fraudstream_localstack.kafka_security import SecurityFiles
from fraudstream_localstack.kube import KubeControlPlane
from fraudstream_localstack.layout import evaluator_to_run


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    broker = KafkaBroker(tmp_path_factory.mktemp("kafka")).start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def kafka_settings(kafka_broker: KafkaBroker) -> KafkaSettings:
    return KafkaSettings(bootstrap=kafka_broker.bootstrap)


@pytest.fixture(scope="session")
def secured_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """One secured broker for the session (TLS everywhere, SCRAM-SHA-512 and mutual-TLS listeners, ACLs only), its
    credentials made under the session's temporary directory; `settings(user, mode)` connects as a user."""
    root = tmp_path_factory.mktemp("secured-kafka")
    broker = KafkaBroker(root / "broker", security=SecurityFiles(root / "credentials")).start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def kube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeControlPlane]:
    plane = KubeControlPlane(tmp_path_factory.mktemp("kube")).start()
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def kubeconfig(kube: KubeControlPlane) -> Path:
    return kube.kubeconfig


@pytest.fixture
def unique_topics(request: pytest.FixtureRequest) -> Topics:
    """Topic names private to one test, so tests sharing the session broker never see each other's records."""
    base = request.node.name.replace("[", "-").replace("]", "").replace("_", "-")[:60]
    suffix = os.urandom(3).hex()
    return Topics(
        transactions=f"{base}.tx.{suffix}",
        rules=f"{base}.rules.{suffix}",
        alerts=f"{base}.alerts.{suffix}",
        dlq=f"{base}.dlq.{suffix}",
    )


@pytest.fixture(scope="session")
def detector_evaluator() -> Path:
    """The evaluator jar the session's detectors load (layout.evaluator_to_run): built from the checkout's sources as
    they are now, unless FRAUDSTREAM_EVALUATOR_JAR names another."""
    return evaluator_to_run()


@pytest.fixture(scope="session")
def spark(detector_evaluator: Path) -> Iterator[object]:
    from fraudstream_detector.session import build_session, stop_session

    session = build_session("fraudstream-tests", master="local[8]")  # Real-time Mode runs every stage at once
    try:
        yield session
    finally:
        stop_session(session)
