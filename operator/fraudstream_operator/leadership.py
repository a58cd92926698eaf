"""One replica's life under leader election: a standby until it holds the Lease, then the operator.

While a standby, the replica answers the liveness endpoint itself (kopf's endpoint starts with kopf, and only
once its startup handlers are done); SIGTERM or SIGINT then ends it at once. As the leader, it runs the operator
(kopf) in the main thread while the election renews the Lease in another; when the operator returns (SIGTERM), the
Lease is released so that a standby takes over at its next attempt rather than after the lease duration. Losing
the Lease ends the process at once, with LEASE_LOST_EXIT_STATUS, so that Kubernetes restarts it as a standby: no
handler or publish of a former leader can overlap with the new leader's.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .cluster import api_client
from .election import Elector, LeaderElection, SystemClock
from .lease import KubeLeaseStore
from .settings import OperatorSettings
from .standby import StandbyProbe

logger = logging.getLogger(__name__)

LEASE_LOST_EXIT_STATUS = 75  # EX_TEMPFAIL: restarting, as a standby, is the remedy
_POLL_S = 0.2


def exit_lease_lost(reason: str) -> None:
    """Ends the process now: threads, in-flight publishes and kopf's handlers die with it."""
    logger.critical(f"lost the lease ({reason}); exiting so that this replica restarts as a standby")
    for handler in logging.getLogger().handlers:
        handler.flush()
    os._exit(LEASE_LOST_EXIT_STATUS)


@contextmanager
def _stopped_by_signals(stop: threading.Event) -> Iterator[None]:
    """SIGTERM and SIGINT set `stop` instead of ending the process, until the block ends."""
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _wait_until_leading(
    settings: OperatorSettings, election: LeaderElection, thread: threading.Thread, stop: threading.Event
) -> bool:
    """True once the election leads; False if stopped first. Raises RuntimeError if the election thread died."""

    def answer() -> dict[str, Any] | None:
        return {"standby": True, "holder": election.holder} if thread.is_alive() else None

    probe = StandbyProbe(settings.liveness_endpoint, answer) if settings.liveness_endpoint else None
    try:
        with _stopped_by_signals(stop):
            while not election.leading.wait(_POLL_S):
                if stop.is_set():
                    return False
                if not thread.is_alive():
                    raise RuntimeError("the leader election ended before this replica led")
            return True
    finally:
        if probe is not None:
            probe.stop()


def run_elected(settings: OperatorSettings, run_operator: Callable[[], None]) -> None:
    """Waits as a standby until this replica holds the Lease, then calls `run_operator` (which blocks until the
    operator stops); afterwards releases the Lease. Returns without running the operator if stopped while a
    standby."""
    election_settings = settings.election
    with api_client(retries=0) as kube:
        store = KubeLeaseStore(kube, election_settings.lease_namespace, election_settings.lease_name)
        clock = SystemClock()
        elector = Elector(store, election_settings.identity, election_settings.lease_duration_s, clock)
        election = LeaderElection(elector, election_settings, on_lost=exit_lease_lost, clock=clock)
        stop = threading.Event()
        thread = threading.Thread(target=election.run, args=(stop,), name="leader-election", daemon=True)
        logger.info(
            f"{election_settings.identity} joins the election for lease "
            f"{election_settings.lease_namespace}/{election_settings.lease_name}"
        )
        thread.start()
        try:
            if _wait_until_leading(settings, election, thread, stop):
                run_operator()
        finally:
            stop.set()
            thread.join(timeout=2 * election_settings.retry_period_s + 1)
