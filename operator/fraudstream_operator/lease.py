"""The leader-election Lease (coordination.k8s.io/v1): read, create and replace it, each call bounded in time.

Writes are optimistic: `replace` carries the resourceVersion that was read, so of two replicas racing to write the
same version, exactly one succeeds. A lost race is an answer (None), not an error; anything else that goes wrong
(unreachable, timed out, forbidden) is a ClusterUnavailableError.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from .exceptions import ClusterUnavailableError

# HTTP statuses that mean "someone else wrote first": the Lease exists (create) or changed or vanished (replace).
_LOST_RACE = {404, 409}


@dataclass(frozen=True)
class LeaseRecord:
    """What a Lease says about its holder; `holder` None means free (never held, or released)."""

    holder: str | None
    lease_duration_s: int
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    transitions: int = 0
    resource_version: str | None = None


class LeaseStore(Protocol):
    """One Lease. Every call takes at most `timeout_s` and raises ClusterUnavailableError when it cannot answer."""

    def read(self, timeout_s: float) -> LeaseRecord | None:
        """The Lease now; None if it does not exist."""
        ...

    def create(self, record: LeaseRecord, timeout_s: float) -> LeaseRecord | None:
        """Creates the Lease with `record`; returns it as stored, or None if the Lease exists already."""
        ...

    def replace(self, record: LeaseRecord, timeout_s: float) -> LeaseRecord | None:
        """Writes `record` over the version `record.resource_version`; None if the Lease changed since."""
        ...


def _micro_time(value: datetime | None) -> datetime | None:
    """`value` as the client can send it as a MicroTime. The client writes datetimes with isoformat(), which omits
    the fraction when it is zero, and the API server refuses a MicroTime without one: move such an instant by 1 µs."""
    if value is None or value.microsecond:
        return value
    return value + timedelta(microseconds=1)


class KubeLeaseStore:
    """Satisfies LeaseStore against the API server, through `api_client` (which it does not close)."""

    def __init__(self, api_client: client.ApiClient, namespace: str, name: str) -> None:
        self._api = client.CoordinationV1Api(api_client)
        self.namespace = namespace
        self.name = name

    def read(self, timeout_s: float) -> LeaseRecord | None:
        try:
            lease = self._api.read_namespaced_lease(self.name, self.namespace, _request_timeout=timeout_s)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise self._unavailable("read", exc) from exc
        except HTTPError as exc:
            raise self._unavailable("read", exc) from exc
        return self._record(lease)

    def create(self, record: LeaseRecord, timeout_s: float) -> LeaseRecord | None:
        return self._write("create", record, timeout_s)

    def replace(self, record: LeaseRecord, timeout_s: float) -> LeaseRecord | None:
        return self._write("replace", record, timeout_s)

    def _write(self, verb: str, record: LeaseRecord, timeout_s: float) -> LeaseRecord | None:
        body = self._body(record)
        try:
            if verb == "create":
                lease = self._api.create_namespaced_lease(self.namespace, body, _request_timeout=timeout_s)
            else:
                lease = self._api.replace_namespaced_lease(self.name, self.namespace, body, _request_timeout=timeout_s)
        except ApiException as exc:
            if exc.status in _LOST_RACE:
                return None
            raise self._unavailable(verb, exc) from exc
        except HTTPError as exc:
            raise self._unavailable(verb, exc) from exc
        return self._record(lease)

    def _body(self, record: LeaseRecord) -> client.V1Lease:
        return client.V1Lease(
            api_version="coordination.k8s.io/v1",
            kind="Lease",
            metadata=client.V1ObjectMeta(
                name=self.name, namespace=self.namespace, resource_version=record.resource_version
            ),
            spec=client.V1LeaseSpec(
                holder_identity=record.holder,
                lease_duration_seconds=record.lease_duration_s,
                acquire_time=_micro_time(record.acquire_time),
                renew_time=_micro_time(record.renew_time),
                lease_transitions=record.transitions,
            ),
        )

    @staticmethod
    def _record(lease: client.V1Lease) -> LeaseRecord:
        spec = lease.spec or client.V1LeaseSpec()
        return LeaseRecord(
            holder=spec.holder_identity or None,
            lease_duration_s=int(spec.lease_duration_seconds or 0),
            acquire_time=spec.acquire_time,
            renew_time=spec.renew_time,
            transitions=int(spec.lease_transitions or 0),
            resource_version=lease.metadata.resource_version if lease.metadata else None,
        )

    def _unavailable(self, verb: str, exc: Exception) -> ClusterUnavailableError:
        detail = f"{exc.status} {exc.reason}" if isinstance(exc, ApiException) else str(exc) or type(exc).__name__
        return ClusterUnavailableError(f"could not {verb} lease {self.namespace}/{self.name}: {detail}")
