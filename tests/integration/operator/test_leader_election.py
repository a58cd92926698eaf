"""Operator replicas under leader election, as processes of their own against the real API server and broker:
exactly one publishes; a standby stays live and takes over within about one lease duration of the leader's death
(SIGKILL), or at once when the leader stops gracefully and releases the Lease; a leader that sees its Lease taken
exits at once."""

from __future__ import annotations

import time

import pytest
from kubernetes import client

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_localstack.processes import ProcessDiedError, wait_for
from fraudstream_operator.leadership import LEASE_LOST_EXIT_STATUS
from tests.integration.operator.conftest import ELECTION_ENV, StartReplica
from tests.integration.operator.harness import BASE_SPEC, FraudRules, OperatorProcess, read_records

pytestmark = pytest.mark.integration

LEASE = "fraudstream-operator"
LEASE_DURATION_S = float(ELECTION_ENV["OPERATOR_LEASE_DURATION_S"])
RETRY_S = float(ELECTION_ENV["OPERATOR_LEASE_RETRY_PERIOD_S"])
DELIVERED = 'fraudstream_operator_publishes_total{kind="rule",result="delivered"}'


@pytest.fixture
def leases(kube_api: client.ApiClient) -> client.CoordinationV1Api:
    return client.CoordinationV1Api(kube_api)


def holder(leases: client.CoordinationV1Api, namespace: str) -> str | None:
    try:
        lease = leases.read_namespaced_lease(LEASE, namespace)
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return lease.spec.holder_identity if lease.spec else None


def take_lease(leases: client.CoordinationV1Api, namespace: str, identity: str, duration_s: int) -> float:
    """Hands the Lease to `identity` as any other client must: read, change, replace, and again from the read when
    the replace loses to a renewal (409 Conflict: the leader renews every retry period). Returns the monotonic time
    at which the replace that won was sent."""

    def attempt() -> float | None:
        lease = leases.read_namespaced_lease(LEASE, namespace)
        assert lease.spec is not None
        lease.spec.holder_identity = identity
        lease.spec.lease_duration_seconds = duration_s
        sent_at = time.monotonic()
        try:
            leases.replace_namespaced_lease(LEASE, namespace, lease)
        except client.ApiException as exc:
            if exc.status == 409:
                return None
            raise
        return sent_at

    return wait_for(attempt, 10, f"the lease replaced with holder {identity}", interval_s=0)


def leader_and_standby(
    leases: client.CoordinationV1Api, namespace: str, replicas: list[OperatorProcess]
) -> tuple[OperatorProcess, OperatorProcess]:
    """The replica the Lease names, once it is reconciled, and the other one, once it answers as a standby."""
    names = {replica.identity: replica for replica in replicas}

    def elected() -> str | None:
        name = holder(leases, namespace)
        return name if name in names else None

    leader = names[wait_for(elected, 60, "a leader")]
    [standby] = [replica for replica in replicas if replica is not leader]
    wait_for(leader.leads, 60, f"{leader.identity} reconciled")
    wait_for(standby.standby, 30, f"{standby.identity} answering as a standby")
    return leader, standby


def records_of(kafka: KafkaSettings, topic: str, key: str) -> list[bytes | None]:
    return [record.value for record in read_records(kafka, topic) if record.key == key]


def test_two_replicas_publish_once_and_the_standby_takes_over_when_the_leader_is_killed(
    start_replica: StartReplica,
    leases: client.CoordinationV1Api,
    rules: FraudRules,
    kafka_settings: KafkaSettings,
    unique_topics: Topics,
) -> None:
    ns, topic = rules.namespace, unique_topics.rules
    replicas = [start_replica("replica-a"), start_replica("replica-b")]
    leader, standby = leader_and_standby(leases, ns, replicas)

    rules.create("before", BASE_SPEC)
    rules.wait_ready("before", generation=1)
    assert (leader.metric(DELIVERED), standby.metric(DELIVERED)) == (1.0, 0.0)
    assert (leader.metric("fraudstream_operator_leader "), standby.metric("fraudstream_operator_leader ")) == (1, 0)
    # A standby reports the holder it saw at its last look at the Lease (every retry period).
    wait_for(
        lambda: standby.standby() == {"standby": True, "holder": leader.identity}, 30, "the standby naming the leader"
    )
    assert len(records_of(kafka_settings, topic, f"{ns}/before")) == 1

    killed_at = time.monotonic()
    leader.kill()
    wait_for(lambda: holder(leases, ns) == standby.identity, 30, f"{standby.identity} holding the lease")
    took_over_s = time.monotonic() - killed_at
    assert took_over_s <= LEASE_DURATION_S + 2 * RETRY_S + 2, f"took {took_over_s:.1f}s, not about one lease duration"

    rules.create("after", BASE_SPEC)
    after = rules.wait_ready("after", generation=1)
    wait_for(standby.leads, 30, f"{standby.identity} reconciled")
    assert standby.metric(DELIVERED) == 1.0, "the new leader republished nothing the topic already had"
    assert len(records_of(kafka_settings, topic, f"{ns}/before")) == 1
    [after_record] = records_of(kafka_settings, topic, f"{ns}/after")
    assert after_record is not None and after["status"]["published"]["topic"] == topic


def test_a_leader_stopped_gracefully_releases_the_lease_for_an_immediate_takeover(
    start_replica: StartReplica, leases: client.CoordinationV1Api, rules: FraudRules
) -> None:
    # A lease long enough that a takeover without the release would take 20 s.
    slow = {"OPERATOR_LEASE_DURATION_S": "20", "OPERATOR_LEASE_RENEW_DEADLINE_S": "10"}
    replicas = [start_replica("replica-a", **slow), start_replica("replica-b", **slow)]
    leader, standby = leader_and_standby(leases, rules.namespace, replicas)

    stopped_at = time.monotonic()
    leader.process.stop()
    wait_for(lambda: holder(leases, rules.namespace) == standby.identity, 15, f"{standby.identity} holding the lease")

    assert time.monotonic() - stopped_at < 10
    assert "released the lease" in leader.process.log_tail(80)
    rules.create("after-release", BASE_SPEC)
    rules.wait_ready("after-release", generation=1)


def test_a_leader_that_sees_its_lease_taken_exits_at_once(
    start_replica: StartReplica, leases: client.CoordinationV1Api, rules: FraudRules
) -> None:
    leader = start_replica("replica-a")
    wait_for(leader.leads, 60, "replica-a reconciled")

    taken_at = take_lease(leases, rules.namespace, "intruder", duration_s=60)
    wait_for(lambda: not leader.process.alive(), 10, "replica-a to exit")

    assert time.monotonic() - taken_at <= 2 * RETRY_S + 2
    assert "lost the lease (the lease is held by intruder)" in leader.process.log_tail(80)
    with pytest.raises(ProcessDiedError, match=f"exited with {LEASE_LOST_EXIT_STATUS}"):
        leader.process.check_alive()
