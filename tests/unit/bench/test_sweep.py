"""The sweep's verdict: a rate holds when it kept its target within 2% and its p99 within 500 ms."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from bench.sweep import DEFAULT_RATES, ascending_rates, climb, failed_step, holds, main


@pytest.mark.parametrize(
    ("rate", "achieved", "p99", "expected"),
    [(1000.0, 1000.0, 500.0, True), (1000.0, 980.0, 120.0, True), (1000.0, 979.0, 120.0, False),
     (1000.0, 1000.0, 500.1, False), (2000.0, 1500.0, 80.0, False)],
)  # fmt: skip
def test_a_rate_holds_when_it_keeps_pace_and_the_budget(
    rate: float, achieved: float, p99: float, expected: bool
) -> None:
    assert holds({"rate_tps": rate, "achieved_tps": achieved, "p99_ms": p99}) is expected


def _step(rate: float, ceiling: float) -> dict[str, float]:
    """A step of a machine that keeps every rate up to `ceiling` within the budget and falls behind above it."""
    return {
        "rate_tps": rate,
        "achieved_tps": rate,
        "p50_ms": 10.0,
        "p99_ms": 90.0 if rate <= ceiling else 9000.0,
        "max_ms": 120.0,
        "first_half_p99_ms": 90.0,
        "second_half_p99_ms": 90.0,
    }


def test_the_climb_stops_at_the_first_rate_that_does_not_hold() -> None:
    measured: list[float] = []

    def measure(rate: float) -> dict[str, float]:
        measured.append(rate)
        return _step(rate, ceiling=1500)

    verdict = climb([1000, 1500, 2000, 3000], measure)
    assert measured == [1000, 1500, 2000]
    assert verdict["highest_sustained_tps"] == 1500
    assert verdict["first_failing_tps"] == 2000
    assert verdict["steps"] == [
        {**_step(rate, ceiling=1500), "code": None, "error": None} for rate in (1000, 1500, 2000)
    ]


def test_each_step_names_the_code_it_measured() -> None:
    def measure(rate: float) -> Mapping[str, object]:
        jar = "a" * 64 if rate < 2000 else "b" * 64  # the checkout's jar rebuilt between the steps
        return {**_step(rate, ceiling=8000), "code": {"commit": "f3f133f", "evaluator_jar_sha256": jar}}

    verdict = climb([1000, 2000], measure)
    assert [step["code"]["evaluator_jar_sha256"] for step in verdict["steps"]] == ["a" * 64, "b" * 64]


def test_a_climb_where_nothing_holds_names_no_sustained_rate() -> None:
    verdict = climb([1000, 2000], lambda rate: _step(rate, ceiling=0))
    assert verdict["highest_sustained_tps"] is None
    assert verdict["first_failing_tps"] == 1000


def test_the_default_ladder_can_show_issue_12s_target_of_4000_held() -> None:
    verdict = climb(ascending_rates(DEFAULT_RATES), lambda rate: _step(rate, ceiling=4000))
    assert verdict["highest_sustained_tps"] == 4000
    assert verdict["first_failing_tps"] is not None and verdict["first_failing_tps"] > 4000


def test_a_step_that_could_not_run_fails_and_the_steps_before_it_stay() -> None:
    def measure(rate: float) -> Mapping[str, object]:
        return _step(rate, ceiling=8000) if rate < 2000 else failed_step(rate, "RuntimeError: kafka did not start")

    verdict = climb([1000, 2000, 3000], measure)
    assert verdict["highest_sustained_tps"] == 1000
    assert verdict["first_failing_tps"] == 2000
    assert verdict["steps"][1]["error"] == "RuntimeError: kafka did not start"


def test_the_sweep_refuses_rates_that_do_not_ascend() -> None:
    with pytest.raises(SystemExit):
        main(["--rates", "3000,1000"])
