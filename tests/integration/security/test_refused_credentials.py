"""Wrong credentials end the detector, the operator and the generator at start, each with one clear line naming the
listener and the mechanism (exit status 78), never a stack trace; missing ACLs are named too."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from fraudstream_kafka.exceptions import NotAuthorizedError
from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import ensure_contract_topics, max_message_bytes
from fraudstream_localstack.kafka import KafkaBroker
from fraudstream_localstack.kafka_security import KafkaSecurity, SecurityFiles
from fraudstream_localstack.processes import ManagedProcess, free_port, wait_for
from tests.integration.security.harness import secure_topics

pytestmark = pytest.mark.integration

EXIT_CONFIG = 78


def wrong_password(broker: KafkaBroker, _tmp: Path) -> KafkaSettings:
    right = broker.settings("detector", KafkaSecurity.SASL_SSL)
    return KafkaSettings(right.bootstrap, {**right.client_properties, "sasl.password": "not-the-password"})


def foreign_certificate(broker: KafkaBroker, tmp: Path) -> KafkaSettings:
    """A client certificate for CN=detector that another CA signed (the client still trusts the broker's CA)."""
    assert broker.security is not None
    foreign = SecurityFiles(tmp / "foreign-ca").make(("detector",))
    props = {**foreign.client_properties("detector", KafkaSecurity.MTLS), "ssl.ca.location": str(broker.security.ca)}
    return KafkaSettings(broker.mtls_bootstrap, props)


CASES: dict[str, tuple[Callable[[KafkaBroker, Path], KafkaSettings], list[str]]] = {
    "sasl-wrong-password": (
        wrong_password,
        ["the broker refused the credentials on the SASL_SSL listener at", "SASL mechanism SCRAM-SHA-512"],
    ),
    "mtls-foreign-certificate": (
        foreign_certificate,
        ["the broker refused the client certificate on the SSL listener at", "mutual TLS, client certificate"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_wrong_credentials_end_every_component_at_start_with_one_clear_line(
    case: str, secured_kafka: KafkaBroker, tmp_path: Path
) -> None:
    make_settings, expected = CASES[case]
    kafka = make_settings(secured_kafka, tmp_path)
    env = {**kafka.as_env(), **Topics().as_env()}
    commands = {
        "detector": ["-m", "fraudstream_detector", "--checkpoint-dir", str(tmp_path / "ck"),
                     "--metrics-port", str(free_port())],
        "operator": ["-m", "fraudstream_operator"],
        "generator": ["-m", "fraudstream_generator", "--rate", "1"],
    }  # fmt: skip
    extra_env = {"operator": {"OPERATOR_METRICS_PORT": "0", "OPERATOR_LIVENESS_ENDPOINT": ""}}
    processes = {
        name: ManagedProcess(
            name, [sys.executable, *argv], tmp_path / f"{name}.log", env={**env, **extra_env.get(name, {})}
        ).start()
        for name, argv in commands.items()
    }
    try:
        wait_for(lambda: not any(p.alive() for p in processes.values()), 120, "every component to exit")
        logs = {name: (tmp_path / f"{name}.log").read_text() for name in processes}
        codes = {name: p._proc.returncode if p._proc else None for name, p in processes.items()}
    finally:
        for process in processes.values():
            process.stop()

    assert codes == dict.fromkeys(processes, EXIT_CONFIG), logs
    for name, log in logs.items():
        assert f"the {name} cannot connect to Kafka: " in log, log
        assert kafka.bootstrap in log, log
        for part in expected:
            assert part in log, (name, log)
        assert "Traceback" not in log, log
        assert "not-the-password" not in log


def test_a_principal_that_may_not_create_topics_is_told_what_is_missing(secured_kafka: KafkaBroker) -> None:
    detector = secured_kafka.settings("detector", KafkaSecurity.SASL_SSL)
    suffix = uuid.uuid4().hex[:6]
    missing = Topics(f"nc.tx.{suffix}", f"nc.rules.{suffix}", f"nc.alerts.{suffix}", f"nc.dlq.{suffix}")

    with pytest.raises(NotAuthorizedError, match=rf"topics nc\.tx\.{suffix} do not exist.*may not create them"):
        ensure_contract_topics(detector, missing, timeout_s=10)

    secure_topics(secured_kafka, missing)  # the admin creates them, with the detector's grants
    limits = ensure_contract_topics(detector, missing, timeout_s=10)
    assert set(limits) == {missing.transactions, missing.rules, missing.alerts, missing.dlq}


def test_a_principal_without_describe_configs_is_told_which_grant_is_missing(secured_kafka: KafkaBroker) -> None:
    suffix = uuid.uuid4().hex[:6]
    topics = Topics(f"dc.tx.{suffix}", f"dc.rules.{suffix}", f"dc.alerts.{suffix}", f"dc.dlq.{suffix}")
    secure_topics(secured_kafka, topics)
    generator = secured_kafka.settings("generator", KafkaSecurity.MTLS)  # writes transactions, describes no config

    with pytest.raises(NotAuthorizedError, match=rf"configuration of topic dc\.tx\.{suffix}.*grant it DescribeConfigs"):
        max_message_bytes(generator, [topics.transactions], timeout_s=10)
