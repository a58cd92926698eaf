"""The sweep's verdict: a rate holds when it kept its target within 2% and its p99 within 500 ms."""

from __future__ import annotations

import pytest

from bench.sweep import holds


@pytest.mark.parametrize(
    ("rate", "achieved", "p99", "expected"),
    [(1000.0, 1000.0, 500.0, True), (1000.0, 980.0, 120.0, True), (1000.0, 979.0, 120.0, False),
     (1000.0, 1000.0, 500.1, False), (2000.0, 1500.0, 80.0, False)],
)  # fmt: skip
def test_a_rate_holds_when_it_keeps_pace_and_the_budget(
    rate: float, achieved: float, p99: float, expected: bool
) -> None:
    assert holds({"rate_tps": rate, "achieved_tps": achieved, "p99_ms": p99}) is expected
