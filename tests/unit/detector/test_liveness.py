"""Liveness: down for the timeout, or input waiting without progress for the timeout, fails it; lag and pending."""

from __future__ import annotations

import math

from prometheus_client import REGISTRY

from fraudstream_detector.liveness import Liveness, Progress


def gauge(name: str) -> float:
    value = REGISTRY.get_sample_value(name)
    assert value is not None
    return value


def test_a_query_down_for_the_timeout_is_not_alive() -> None:
    liveness = Liveness(Progress(), timeout_s=60)
    liveness.query_state(False, now_s=100)
    assert liveness.alive(159)[0]
    alive, why = liveness.alive(160)
    assert not alive and why == "the streaming query has been down for 60 s"
    liveness.query_state(True, now_s=161)
    assert liveness.alive(1_000)[0]
    assert gauge("fraud_query_up") == 1


def test_waiting_input_without_progress_for_the_timeout_is_not_alive() -> None:
    progress = Progress()
    liveness = Liveness(progress, timeout_s=60)
    liveness.query_state(True, now_s=0)
    progress.update({"0": 9, "1": 4}, newest_ts_ms=1_000)
    liveness.tick({0: 10, 1: 5}, now_s=0, wall_ms=3_000)  # caught up: nothing waits
    assert gauge("fraud_input_pending_records") == 0 and gauge("fraud_input_lag_seconds") == 2
    liveness.tick({0: 13, 1: 5}, now_s=10, wall_ms=4_000)  # three wait...
    assert gauge("fraud_input_pending_records") == 3
    liveness.tick({0: 13, 1: 5}, now_s=69, wall_ms=5_000)
    assert liveness.alive(69)[0]
    liveness.tick({0: 13, 1: 5}, now_s=70, wall_ms=5_000)
    alive, why = liveness.alive(70)  # ...and nothing moved for 60 s
    assert not alive and why == "transactions have waited 60 s with no progress"
    progress.update({"0": 11}, newest_ts_ms=4_500)  # progress, though not caught up
    liveness.tick({0: 13, 1: 5}, now_s=71, wall_ms=5_000)
    assert liveness.alive(71)[0] and gauge("fraud_input_lag_seconds") == 0.5


def test_partitions_not_yet_evaluated_count_what_arrives_after_the_first_look() -> None:
    liveness = Liveness(Progress(), timeout_s=60)
    liveness.tick({0: 100}, now_s=0, wall_ms=0)
    assert gauge("fraud_input_pending_records") == 0
    liveness.tick({0: 104}, now_s=5, wall_ms=0)
    assert gauge("fraud_input_pending_records") == 4
    assert math.isnan(gauge("fraud_input_lag_seconds"))


def test_unreadable_end_offsets_make_pending_unknown_and_fail_nothing() -> None:
    liveness = Liveness(Progress(), timeout_s=1)
    liveness.query_state(True, now_s=0)
    liveness.tick(None, now_s=0, wall_ms=0)
    liveness.tick(None, now_s=100, wall_ms=0)
    assert math.isnan(gauge("fraud_input_pending_records")) and liveness.alive(100)[0]
