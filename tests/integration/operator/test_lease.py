"""The Lease store and electors against the real API server: its optimistic concurrency decides races, its
MicroTime format is met, and two electors take turns through a release."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from kubernetes import client

from fraudstream_operator.election import Elector, SystemClock
from fraudstream_operator.lease import KubeLeaseStore, LeaseRecord

pytestmark = pytest.mark.integration


@pytest.fixture
def lease_store(kube_api: client.ApiClient, namespace: str) -> KubeLeaseStore:
    return KubeLeaseStore(kube_api, namespace, "store-test")


def test_the_lease_store_keeps_the_api_servers_optimistic_concurrency(lease_store: KubeLeaseStore) -> None:
    # A whole second: the client would send it without a fraction, which the API server refuses for a MicroTime.
    whole_second = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    record = LeaseRecord("replica-a", 15, whole_second, whole_second)

    assert lease_store.read(5) is None
    created = lease_store.create(record, 5)
    assert created is not None and created.resource_version
    assert lease_store.create(record, 5) is None, "it exists already"
    assert created.renew_time is not None and abs(created.renew_time - whole_second) < timedelta(milliseconds=1)

    renewal = LeaseRecord("replica-a", 15, whole_second, datetime.now(UTC), 0, created.resource_version)
    renewed = lease_store.replace(renewal, 5)
    assert renewed is not None and renewed.resource_version != created.resource_version
    stale = LeaseRecord("replica-b", 15, whole_second, datetime.now(UTC), 1, created.resource_version)
    assert lease_store.replace(stale, 5) is None, "written over a version that is gone"
    assert lease_store.read(5) == renewed


def test_two_electors_on_the_real_api_server_take_turns_through_a_release(lease_store: KubeLeaseStore) -> None:
    clock = SystemClock()
    a, b = Elector(lease_store, "a", 15, clock), Elector(lease_store, "b", 15, clock)

    def soon() -> float:
        return clock.monotonic() + 5

    assert a.try_acquire_or_renew(soon())
    assert not b.try_acquire_or_renew(soon()) and b.holder == "a"
    assert a.try_acquire_or_renew(soon()), "renewed"
    assert a.release(soon())
    assert b.try_acquire_or_renew(soon())
    assert not a.try_acquire_or_renew(soon()) and a.holder == "b"
    record = lease_store.read(5)
    assert record is not None and (record.holder, record.transitions) == ("b", 1)
