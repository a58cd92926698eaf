"""Leader election decisions and the election loop, against an in-memory Lease and a fake clock.

The in-memory Lease keeps the API server's optimistic concurrency (a write must name the current resourceVersion);
tests/integration/operator/test_leader_election.py runs the same code against the real API server.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from fraudstream_operator.election import Elector, LeaderElection
from fraudstream_operator.exceptions import ClusterUnavailableError
from fraudstream_operator.lease import LeaseRecord
from fraudstream_operator.settings import ElectionSettings

START = datetime(2026, 1, 1, tzinfo=UTC)
TIMING = ElectionSettings(lease_duration_s=15, renew_deadline_s=10, retry_period_s=2)


class FakeClock:
    """Time moves only when the code under test waits; `stop_at` sets the stop event once reached (by default
    after 1000 s, so that a loop that should have ended fails its test instead of hanging)."""

    def __init__(self, stop_at: float = 1000) -> None:
        self.now_s = 0.0
        self.stop_at = stop_at
        self.at_wait: list[Callable[[float], None]] = []

    def monotonic(self) -> float:
        return self.now_s

    def utcnow(self) -> datetime:
        return START + timedelta(seconds=self.now_s)

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        self.now_s += max(0.0, seconds)
        for hook in self.at_wait:
            hook(self.now_s)
        if self.now_s >= self.stop_at:
            stop.set()
        return stop.is_set()

    def advance(self, seconds: float) -> None:
        self.now_s += seconds


class MemoryLease:
    """Satisfies LeaseStore in memory; `down` makes every call fail, `before_write` runs between read and write."""

    def __init__(self, record: LeaseRecord | None = None, clock: FakeClock | None = None) -> None:
        self.version = 0
        self.record = self._stored(record) if record else None
        self.down = False
        self.writes = 0
        self.before_write: Callable[[], None] | None = None
        self.clock = clock
        self.written: list[tuple[float, str | None]] = []  # (time, holder) of each successful write, with a clock

    def _stored(self, record: LeaseRecord) -> LeaseRecord:
        self.version += 1
        return dataclasses.replace(record, resource_version=str(self.version))

    def _check(self) -> None:
        if self.down:
            raise ClusterUnavailableError("API server unreachable")

    def read(self, timeout_s: float) -> LeaseRecord | None:
        self._check()
        return self.record

    def create(self, record: LeaseRecord, timeout_s: float) -> LeaseRecord | None:
        return self._write(record, expect_absent=True)

    def replace(self, record: LeaseRecord, timeout_s: float) -> LeaseRecord | None:
        return self._write(record, expect_absent=False)

    def _write(self, record: LeaseRecord, expect_absent: bool) -> LeaseRecord | None:
        self._check()
        if self.before_write is not None:
            self.before_write()
        current_version = self.record.resource_version if self.record else None
        if (self.record is None) != expect_absent or (not expect_absent and record.resource_version != current_version):
            return None
        self.writes += 1
        self.record = self._stored(record)
        if self.clock is not None:
            self.written.append((self.clock.monotonic(), record.holder))
        return self.record

    def someone_else_writes(self, holder: str | None, lease_duration_s: int = 15) -> None:
        self.record = self._stored(LeaseRecord(holder, lease_duration_s, START, START, 0))


def elector(lease: MemoryLease, clock: FakeClock, identity: str = "me", duration_s: int = 15) -> Elector:
    return Elector(lease, identity, duration_s, clock)


def far(clock: FakeClock) -> float:
    return clock.monotonic() + 5


# ---- one attempt ------------------------------------------------------------------------------------------------


def test_an_absent_lease_is_created_and_held() -> None:
    clock, lease = FakeClock(), MemoryLease()
    clock.advance(3)

    assert elector(lease, clock).try_acquire_or_renew(far(clock))

    assert lease.record is not None
    assert (lease.record.holder, lease.record.lease_duration_s, lease.record.transitions) == ("me", 15, 0)
    assert lease.record.acquire_time == lease.record.renew_time == START + timedelta(seconds=3)


def test_a_released_lease_is_taken_at_once() -> None:
    clock, lease = FakeClock(), MemoryLease(LeaseRecord(None, 1, START, START, transitions=4))

    assert elector(lease, clock).try_acquire_or_renew(far(clock))

    assert lease.record is not None and (lease.record.holder, lease.record.transitions) == ("me", 5)


@pytest.mark.parametrize(
    ("holders_duration_s", "waited_s", "taken"),
    [(15, 0, False), (15, 14.9, False), (15, 15, True), (30, 15, False), (30, 30, True), (5, 5, True)],
    ids=["fresh", "just-before", "expired", "holders-longer-duration", "holders-duration-expired", "short"],
)
def test_a_held_lease_is_taken_only_after_the_holders_duration_without_change(
    holders_duration_s: int, waited_s: float, taken: bool
) -> None:
    clock, lease = FakeClock(), MemoryLease(LeaseRecord("other", holders_duration_s, START, START, transitions=2))
    candidate = elector(lease, clock)

    assert not candidate.try_acquire_or_renew(far(clock))
    assert candidate.holder == "other"
    clock.advance(waited_s)

    assert candidate.try_acquire_or_renew(far(clock)) is taken
    assert lease.record is not None
    assert (lease.record.holder, lease.record.transitions) == (("me", 3) if taken else ("other", 2))


def test_a_lease_its_holder_keeps_renewing_is_never_taken() -> None:
    clock, lease = FakeClock(), MemoryLease(LeaseRecord("other", 15, START, START))
    candidate = elector(lease, clock)

    for _ in range(30):
        assert not candidate.try_acquire_or_renew(far(clock))
        clock.advance(2)
        lease.someone_else_writes("other")

    assert lease.record is not None and lease.record.holder == "other"


def test_the_holder_renews_keeping_acquire_time_and_transitions() -> None:
    clock, lease = FakeClock(), MemoryLease(LeaseRecord("other", 15, START, START, transitions=7))
    me = elector(lease, clock)
    clock.advance(1)
    me.try_acquire_or_renew(far(clock))
    clock.advance(15)
    assert me.try_acquire_or_renew(far(clock))
    acquired = lease.record
    clock.advance(2)

    assert me.try_acquire_or_renew(far(clock))

    assert lease.record is not None and acquired is not None
    assert (lease.record.acquire_time, lease.record.transitions) == (acquired.acquire_time, 8)
    assert lease.record.renew_time == START + timedelta(seconds=18)


def test_a_write_that_loses_the_race_does_not_hold() -> None:
    clock, lease = FakeClock(), MemoryLease()
    lease.before_write = lambda: lease.someone_else_writes("other")

    assert not elector(lease, clock).try_acquire_or_renew(far(clock))
    assert lease.record is not None and lease.record.holder == "other"


def test_an_attempt_past_its_deadline_does_not_call_the_api_server() -> None:
    clock, lease = FakeClock(), MemoryLease()

    with pytest.raises(ClusterUnavailableError, match="out of time"):
        elector(lease, clock).try_acquire_or_renew(clock.monotonic())
    assert lease.record is None


def test_release_frees_the_lease_for_an_immediate_takeover() -> None:
    clock, lease = FakeClock(), MemoryLease()
    me, other = elector(lease, clock), elector(lease, clock, identity="other")
    assert me.try_acquire_or_renew(far(clock))
    assert not other.try_acquire_or_renew(far(clock))

    assert me.release(far(clock))

    assert lease.record is not None and (lease.record.holder, lease.record.lease_duration_s) == (None, 1)
    assert other.try_acquire_or_renew(far(clock))


def test_only_the_holder_releases() -> None:
    clock, lease = FakeClock(), MemoryLease(LeaseRecord("other", 15, START, START))

    assert not elector(lease, clock).release(far(clock))
    assert lease.record is not None and lease.record.holder == "other"


# ---- the loop ---------------------------------------------------------------------------------------------------


class Lost:
    """on_lost: records the reason and the (fake) time it was called."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.calls: list[tuple[str, float]] = []

    def __call__(self, reason: str) -> None:
        self.calls.append((reason, self.clock.monotonic()))


def run(lease: MemoryLease, clock: FakeClock, identity: str = "me") -> tuple[LeaderElection, Lost]:
    lost = Lost(clock)
    election = LeaderElection(elector(lease, clock, identity), TIMING, lost, clock)
    election.run(threading.Event())
    return election, lost


def test_a_standby_takes_over_one_lease_duration_after_the_leader_stopped_renewing() -> None:
    clock = FakeClock(stop_at=61)
    lease = MemoryLease(LeaseRecord("old-leader", 15, START, START), clock)
    clock.at_wait.append(lambda now_s: lease.someone_else_writes("old-leader") if now_s <= 10 else None)

    election, lost = run(lease, clock)

    assert election.leading.is_set() and lost.calls == []
    # The standby saw the old leader's last renewal at 10 s, so the lease expired for it at 25 s; it took over at
    # its next attempt, renewed every retry period until stopped at 61 s, and then released the lease.
    took_over_s, holder = lease.written[0]
    assert (took_over_s, holder) == (26.0, "me")
    renewals = [at_s for at_s, holder in lease.written[1:] if holder == "me"]
    assert renewals == [28.0 + 2 * i for i in range(17)]
    assert lease.written[-1] == (62.0, None)
    assert lease.record is not None and lease.record.lease_duration_s == 1


def test_a_leader_cut_off_from_the_api_server_gives_up_before_anyone_may_take_over() -> None:
    clock, lease = FakeClock(), MemoryLease()
    clock.at_wait.append(lambda now_s: setattr(lease, "down", now_s > 7))

    election, lost = run(lease, clock)

    assert election.leading.is_set()
    [(reason, at_s)] = lost.calls
    assert "not renewed for 10s" in reason
    last_renewal_started_s = 6.0
    assert at_s <= last_renewal_started_s + TIMING.renew_deadline_s < last_renewal_started_s + TIMING.lease_duration_s
    assert lease.record is not None and lease.record.holder == "me", "nothing to release without an API server"


def test_a_leader_that_sees_another_holder_gives_up_at_once() -> None:
    clock, lease = FakeClock(), MemoryLease()
    clock.at_wait.append(lambda now_s: lease.someone_else_writes("usurper") if now_s == 6 else None)

    _, lost = run(lease, clock)

    assert lost.calls == [("the lease is held by usurper", 6.0)], "at the first renewal after the takeover"


def test_a_leader_whose_write_loses_a_race_to_an_unrelated_edit_keeps_leading() -> None:
    clock, lease = FakeClock(stop_at=30), MemoryLease()
    edits = iter(range(3))

    def unrelated_edit() -> None:
        if lease.record is not None and next(edits, None) is not None:
            lease.record = dataclasses.replace(lease.record, resource_version=f"edit-{lease.version}")

    clock.at_wait.append(lambda now_s: setattr(lease, "before_write", unrelated_edit if now_s == 4 else None))

    election, lost = run(lease, clock)

    assert election.leading.is_set() and lost.calls == []


def test_a_standby_stopped_before_it_leads_writes_nothing() -> None:
    clock, lease = FakeClock(stop_at=100), MemoryLease(LeaseRecord("other", 15, START, START))
    clock.at_wait.append(lambda _: lease.someone_else_writes("other"))

    election, lost = run(lease, clock)

    assert not election.leading.is_set() and lost.calls == []
    assert lease.writes == 0 and lease.record is not None and lease.record.holder == "other"


def test_a_standby_without_an_api_server_keeps_trying() -> None:
    clock, lease = FakeClock(stop_at=20), MemoryLease()
    lease.down = True
    clock.at_wait.append(lambda now_s: setattr(lease, "down", now_s < 12))

    election, lost = run(lease, clock)

    assert election.leading.is_set() and lost.calls == []


def test_an_unexpected_error_while_leading_counts_as_a_lost_lease() -> None:
    clock, lease = FakeClock(), MemoryLease()

    def broken() -> None:
        raise RuntimeError("bug")

    clock.at_wait.append(lambda now_s: setattr(lease, "before_write", broken if now_s >= 4 else None))
    lost = Lost(clock)
    election = LeaderElection(elector(lease, clock), TIMING, lost, clock)

    with pytest.raises(RuntimeError, match="bug"):
        election.run(threading.Event())
    assert [reason for reason, _ in lost.calls] == ["leader election failed: RuntimeError('bug')"]
