"""The window micro-benchmark runs against the current core: every aggregator, through the Engine and through
GroupWindow alone, holds the window it claims to measure (its own assertion: the window plus the lateness span)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from bench.window_cost import AGGREGATORS, detector_ns_per_event, window_ns_per_event
from fraudstream_rules.model import AggregatorFunction


@pytest.mark.parametrize("function", AGGREGATORS, ids=lambda f: f.value)
@pytest.mark.parametrize("measure", [detector_ns_per_event, window_ns_per_event], ids=["engine", "group-window"])
def test_each_measurement_fills_the_window_and_times_its_batches(
    measure: Callable[[AggregatorFunction, int, int, int], float], function: AggregatorFunction
) -> None:
    ns_per_event = measure(function, 1_000, 2, 100)
    assert math.isfinite(ns_per_event) and ns_per_event > 0
