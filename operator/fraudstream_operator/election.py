"""Leader election among operator replicas on one Lease, so that only one of them reconciles and publishes.

`Elector` decides, for one attempt, whether this replica may hold the Lease (Kubernetes' leader-election protocol,
as client-go runs it); `LeaderElection` runs the attempts: a standby tries every retry period until it holds the
Lease, a leader renews it every retry period and gives it up the moment it cannot be sure it still holds it.

The kubernetes client (37.x) ships a `leaderelection` package too; it is not used because its loop cannot be
stopped, bounds no API call in time (a hung renewal would keep a leader leading past its lease), lets a
connection error escape `run()` without calling `onstopped_leading` (a leader would go on without a lease),
never releases the Lease, and logs every renewal at INFO.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

from .exceptions import ClusterUnavailableError
from .lease import LeaseRecord, LeaseStore
from .settings import ElectionSettings

logger = logging.getLogger(__name__)


class Clock(Protocol):
    """Time as the election sees it: a monotonic clock, the wall clock the Lease records, and an interruptible wait."""

    def monotonic(self) -> float: ...

    def utcnow(self) -> datetime: ...

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        """Waits up to `seconds`; True if `stop` is set."""
        ...


class SystemClock:
    """Satisfies Clock with the process's clocks."""

    def monotonic(self) -> float:
        return time.monotonic()

    def utcnow(self) -> datetime:
        return datetime.now(UTC)

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        return stop.wait(max(0.0, seconds))


class Elector:
    """One replica's view of the Lease, and its attempts to hold it.

    A replica may write itself into the Lease when the Lease is absent, free, already its own, or unchanged (same
    resourceVersion) for the record's leaseDurationSeconds as measured on this replica's monotonic clock since it
    first saw that version. Clocks of different machines are never compared, so a replica that has just started
    waits one full lease duration before taking over from a holder that has stopped renewing.
    """

    def __init__(self, store: LeaseStore, identity: str, lease_duration_s: int, clock: Clock) -> None:
        self._store = store
        self.identity = identity
        self._lease_duration_s = lease_duration_s
        self._clock = clock
        self._observed: LeaseRecord | None = None
        self._observed_at = 0.0

    @property
    def holder(self) -> str | None:
        """The holder the Lease named when last read or written; None if free or never seen."""
        return self._observed.holder if self._observed else None

    def try_acquire_or_renew(self, deadline: float) -> bool:
        """One attempt, done by `deadline` (monotonic): True if this replica holds the Lease afterwards.

        False if another replica holds it and it has not expired, or if another write won the race. Raises
        ClusterUnavailableError if the API server did not answer in time.
        """
        current = self._store.read(self._left(deadline))
        if current is None:
            return self._wrote(self._store.create(self._claim(None), self._left(deadline)))
        self._observe(current)
        if current.holder not in (None, self.identity) and not self._expired(current):
            return False
        return self._wrote(self._store.replace(self._claim(current), self._left(deadline)))

    def release(self, deadline: float) -> bool:
        """Frees the Lease if this replica holds it, so that a standby takes over at its next attempt."""
        current = self._store.read(self._left(deadline))
        if current is None or current.holder != self.identity:
            return False
        freed = LeaseRecord(
            holder=None,
            lease_duration_s=1,
            acquire_time=current.acquire_time,
            renew_time=self._clock.utcnow(),
            transitions=current.transitions,
            resource_version=current.resource_version,
        )
        return self._wrote(self._store.replace(freed, self._left(deadline)))

    def _observe(self, current: LeaseRecord) -> None:
        if self._observed is None or current.resource_version != self._observed.resource_version:
            self._observed, self._observed_at = current, self._clock.monotonic()

    def _expired(self, current: LeaseRecord) -> bool:
        return self._clock.monotonic() >= self._observed_at + current.lease_duration_s

    def _claim(self, current: LeaseRecord | None) -> LeaseRecord:
        now = self._clock.utcnow()
        if current is not None and current.holder == self.identity:
            return LeaseRecord(
                self.identity,
                self._lease_duration_s,
                acquire_time=current.acquire_time or now,
                renew_time=now,
                transitions=current.transitions,
                resource_version=current.resource_version,
            )
        return LeaseRecord(
            self.identity,
            self._lease_duration_s,
            acquire_time=now,
            renew_time=now,
            transitions=current.transitions + 1 if current is not None else 0,
            resource_version=current.resource_version if current is not None else None,
        )

    def _wrote(self, stored: LeaseRecord | None) -> bool:
        if stored is None:
            return False
        self._observed, self._observed_at = stored, self._clock.monotonic()
        return True

    def _left(self, deadline: float) -> float:
        left = deadline - self._clock.monotonic()
        if left <= 0:
            raise ClusterUnavailableError("out of time for this attempt")
        return left


class LeaderElection:
    """Runs one replica's election, in a thread of its own (`run`).

    Contract: `leading` is set once this replica holds the Lease. From then on it renews every retry period, and
    calls `on_lost(reason)` (then returns) the moment the Lease names another holder, or once no renewal has
    succeeded for `renew_deadline_s` since the start of the last one that did: that is before any standby may
    take over, since a standby waits a whole lease duration after it saw that renewal. When `stop` is set, `run`
    returns, having released the Lease if it held it. `on_lost` must stop all reconciling at once.
    """

    def __init__(
        self,
        elector: Elector,
        settings: ElectionSettings,
        on_lost: Callable[[str], None],
        clock: Clock | None = None,
    ) -> None:
        self._elector = elector
        self._renew_deadline_s = settings.renew_deadline_s
        self._retry_s = settings.retry_period_s
        self._on_lost = on_lost
        self._clock = clock or SystemClock()
        self.leading = threading.Event()

    @property
    def holder(self) -> str | None:
        return self._elector.holder

    def run(self, stop: threading.Event) -> None:
        try:
            renewed_at = self._acquire(stop)
            if renewed_at is None:
                return
            self.leading.set()
            logger.info(f"{self._elector.identity} holds the lease and leads")
            if self._lead(stop, renewed_at):
                self._release()
        except Exception as exc:
            if self.leading.is_set():
                self._on_lost(f"leader election failed: {exc!r}")
            raise

    def _attempt(self, deadline: float) -> bool | None:
        """try_acquire_or_renew; None if the API server did not answer in time."""
        try:
            return self._elector.try_acquire_or_renew(deadline)
        except ClusterUnavailableError as error:
            logger.warning(f"lease attempt failed: {error}")
            return None

    def _acquire(self, stop: threading.Event) -> float | None:
        """Tries every retry period until this replica holds the Lease: when the winning attempt started, or
        None if stopped first."""
        waiting_for: str | None = None
        while not stop.is_set():
            started = self._clock.monotonic()
            if self._attempt(started + self._retry_s):
                return started
            if self._elector.holder != waiting_for:
                waiting_for = self._elector.holder
                logger.info(f"{self._elector.identity} is a standby; the lease is held by {waiting_for}")
            self._clock.wait(stop, self._retry_s)
        return None

    def _lead(self, stop: threading.Event, renewed_at: float) -> bool:
        """Renews until stopped (True) or until the Lease is lost (False, after on_lost)."""
        while True:
            deadline = renewed_at + self._renew_deadline_s
            if self._clock.wait(stop, min(self._retry_s, deadline - self._clock.monotonic())):
                return True
            started = self._clock.monotonic()
            held = self._attempt(deadline)
            if held:
                renewed_at = started
            elif held is False and self._elector.holder != self._elector.identity:
                self._on_lost(f"the lease is held by {self._elector.holder}")
                return False
            elif self._clock.monotonic() >= deadline:
                self._on_lost(f"the lease was not renewed for {self._renew_deadline_s:g}s")
                return False

    def _release(self) -> None:
        try:
            if self._elector.release(self._clock.monotonic() + self._retry_s):
                logger.info(f"{self._elector.identity} released the lease")
        except ClusterUnavailableError as error:
            logger.warning(f"could not release the lease (a standby takes over once it expires): {error}")
