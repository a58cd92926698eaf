"""The operator's configuration from the environment."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

import pytest

from fraudstream_operator.settings import ElectionSettings, OperatorSettings


def test_defaults_watch_all_namespaces_of_the_local_broker() -> None:
    settings = OperatorSettings.from_env({})

    assert (settings.kafka.bootstrap, settings.rules_topic, settings.namespaces) == ("127.0.0.1:9092", "rules", ())
    assert settings.clusterwide
    assert (settings.metrics_port, settings.liveness_endpoint) == (9109, "http://0.0.0.0:8080/healthz")


def test_everything_is_read_from_the_environment() -> None:
    settings = OperatorSettings.from_env(
        {
            "KAFKA_BOOTSTRAP": "kafka:9093",
            "KAFKA_CLIENT_SECURITY_PROTOCOL": "SASL_SSL",
            "RULES_TOPIC": "fraud.rules",
            "WATCH_NAMESPACES": " payments, cards ,,payments",
            "OPERATOR_METRICS_PORT": "0",
            "OPERATOR_METRICS_ADDR": "127.0.0.1",
            "OPERATOR_LIVENESS_ENDPOINT": "",
            "OPERATOR_PUBLISH_TIMEOUT_S": "7.5",
            "OPERATOR_RETRY_BASE_S": "1",
            "OPERATOR_RETRY_MAX_S": "10",
        }
    )

    assert settings.kafka.client_config() == {"bootstrap.servers": "kafka:9093", "security.protocol": "SASL_SSL"}
    assert settings.rules_topic == "fraud.rules"
    assert settings.namespaces == ("cards", "payments")
    assert not settings.clusterwide
    assert (settings.metrics_port, settings.metrics_addr, settings.liveness_endpoint) == (0, "127.0.0.1", "")
    assert (settings.publish_timeout_s, settings.retry_base_s, settings.retry_max_s) == (7.5, 1.0, 10.0)


@pytest.mark.parametrize(
    ("namespaces", "namespace", "owned"),
    [((), "anything", True), (("payments",), "payments", True), (("payments",), "cards", False)],
)
def test_owns(namespaces: tuple[str, ...], namespace: str, owned: bool) -> None:
    assert OperatorSettings(namespaces=namespaces).owns(namespace) is owned


@pytest.mark.parametrize(
    ("retry", "delay_s"),
    [(0, 2.0), (1, 4.0), (2, 8.0), (4, 32.0), (5, 60.0), (50, 60.0), (10_000, 60.0)],
)
def test_retry_delay_doubles_up_to_the_cap(retry: int, delay_s: float) -> None:
    assert OperatorSettings().retry_delay_s(retry) == delay_s


def test_the_rules_topic_is_the_contracts_compacted_single_partition_topic() -> None:
    spec = OperatorSettings(rules_topic="fraud.rules").rules_topic_spec()

    assert (spec.name, spec.partitions, dict(spec.config)["cleanup.policy"]) == ("fraud.rules", 1, "compact")


def test_leader_election_is_on_by_default_with_client_go_timings(tmp_path: Path) -> None:
    election = ElectionSettings.from_env({}, pod_namespace_file=tmp_path / "absent")

    assert election.enabled
    assert (election.lease_name, election.lease_namespace) == ("fraudstream-operator", "default")
    assert (election.lease_duration_s, election.renew_deadline_s, election.retry_period_s) == (15, 10.0, 2.0)
    assert election.identity == f"{socket.gethostname()}_{os.getpid()}"


def test_leader_election_is_read_from_the_environment(tmp_path: Path) -> None:
    env = {
        "OPERATOR_LEADER_ELECTION": "False",
        "OPERATOR_LEASE_NAME": "ops-lease",
        "OPERATOR_LEASE_NAMESPACE": "ops",
        "OPERATOR_IDENTITY": "replica-a",
        "OPERATOR_LEASE_DURATION_S": "6",
        "OPERATOR_LEASE_RENEW_DEADLINE_S": "4.5",
        "OPERATOR_LEASE_RETRY_PERIOD_S": "0.5",
    }

    election = OperatorSettings.from_env(env).election

    assert election == ElectionSettings(False, "ops-lease", "ops", "replica-a", 6, 4.5, 0.5)


def test_in_a_pod_the_lease_lives_in_the_pods_namespace(tmp_path: Path) -> None:
    namespace_file = tmp_path / "namespace"
    namespace_file.write_text("fraudstream\n")

    assert ElectionSettings.from_env({}, namespace_file).lease_namespace == "fraudstream"
    assert ElectionSettings.from_env({"OPERATOR_LEASE_NAMESPACE": "ops"}, namespace_file).lease_namespace == "ops"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"OPERATOR_LEASE_RENEW_DEADLINE_S": "15"}, "retry period < renew deadline < lease duration"),
        ({"OPERATOR_LEASE_RETRY_PERIOD_S": "10"}, "retry period < renew deadline < lease duration"),
        ({"OPERATOR_LEASE_RETRY_PERIOD_S": "0"}, "retry period < renew deadline < lease duration"),
        ({"OPERATOR_LEASE_NAME": ""}, "a lease name"),
        ({"OPERATOR_LEADER_ELECTION": "maybe"}, "OPERATOR_LEADER_ELECTION='maybe'"),
    ],
    ids=["deadline-not-below-duration", "retry-not-below-deadline", "no-retry", "no-name", "not-a-flag"],
)
def test_unusable_election_settings_are_refused(env: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        OperatorSettings.from_env(env)


@pytest.mark.parametrize(("raw", "enabled"), [("true", True), ("1", True), ("on", True), ("0", False), ("no", False)])
def test_leader_election_switch(raw: str, enabled: bool) -> None:
    assert OperatorSettings.from_env({"OPERATOR_LEADER_ELECTION": raw}).election.enabled is enabled
