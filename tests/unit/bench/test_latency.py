"""The benchmark's statistics: exact percentiles, PromQL-style histogram quantiles, agreement and phases."""

from __future__ import annotations

import math

import pytest

from bench.latency import finest_bucket_ms, histogram_quantile, parse_histogram, percentile
from bench.run import PHASES, AlertSample, agrees, spread


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([], 50, math.nan),
        ([7.0], 99, 7.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.0),
        ([float(i) for i in range(1, 101)], 99, 99.0),
        ([float(i) for i in range(1, 101)], 100, 100.0),
    ],
)
def test_percentile_is_nearest_rank(values: list[float], q: float, expected: float) -> None:
    got = percentile(values, q)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


def test_histogram_quantile_interpolates_within_the_bucket_between_two_scrapes() -> None:
    text = "\n".join(
        [
            'fraud_alert_latency_seconds_bucket{le="0.1"} 60.0',
            'fraud_alert_latency_seconds_bucket{le="0.2"} 100.0',
            'fraud_alert_latency_seconds_bucket{le="+Inf"} 100.0',
            'fraud_other_bucket{le="0.1"} 5.0',
        ]
    )
    after = parse_histogram(text, "fraud_alert_latency_seconds")
    assert after == {0.1: 60.0, 0.2: 100.0, math.inf: 100.0}
    before = {0.1: 10.0, 0.2: 10.0, math.inf: 10.0}
    # 90 observations between the scrapes: 50 at or below 0.1 s, 40 in (0.1, 0.2].
    assert histogram_quantile(0.5, before, after) == pytest.approx(0.1 * 45 / 50)
    assert histogram_quantile(0.99, before, after) == pytest.approx(0.1 + 0.1 * (89.1 - 50) / 40)
    assert math.isnan(histogram_quantile(0.5, after, after))


def test_a_histogram_served_by_several_endpoints_is_summed_per_bucket() -> None:
    executor = 'fraud_alert_latency_seconds_bucket{le="0.1"} 3\nfraud_alert_latency_seconds_bucket{le="+Inf"} 4'
    other = 'fraud_alert_latency_seconds_bucket{le="0.1"} 1.0\nfraud_alert_latency_seconds_bucket{le="+Inf"} 2.0'
    assert parse_histogram(f"{executor}\n{other}", "fraud_alert_latency_seconds") == {0.1: 4.0, math.inf: 6.0}


@pytest.mark.parametrize(
    ("reported", "measured", "expected"),
    [(100.0, 100.0, True), (119.9, 100.0, True), (80.0, 100.0, True), (121.0, 100.0, False),
     (79.0, 100.0, False), (math.nan, 100.0, False), (5.0, 0.0, False),
     # Below 50 ms, 20% is finer than the histogram's 10 ms buckets: 10 ms is allowed instead.
     (6.0, 8.1, True), (18.0, 8.1, True), (18.2, 8.1, False), (31.0, 40.0, True), (29.9, 40.0, False)],
)  # fmt: skip
def test_the_detector_agrees_within_twenty_percent_or_its_histogram_resolution(
    reported: float, measured: float, expected: bool
) -> None:
    assert agrees(reported, measured, 10.0) is expected


def test_without_a_histogram_resolution_only_twenty_percent_is_allowed() -> None:
    assert agrees(6.0, 8.1, math.nan) is False
    assert agrees(119.9, 100.0, math.nan) is True


def test_the_resolution_is_the_narrowest_bucket_counting_the_first_from_zero() -> None:
    # The detector's buckets (EvaluatorMetrics.LATENCY_BUCKETS_S) start 0.01, 0.02, 0.03 ... 0.1, 0.125 ...
    detector = {0.01: 1.0, 0.02: 2.0, 0.03: 2.0, 0.1: 3.0, 0.125: 3.0, 120.0: 4.0, math.inf: 4.0}
    assert finest_bucket_ms(detector) == 10.0
    assert finest_bucket_ms({0.005: 1.0, 0.5: 2.0, math.inf: 2.0}) == 5.0
    assert finest_bucket_ms({0.5: 1.0, 1.0: 1.0, math.inf: 1.0}) == 500.0
    assert math.isnan(finest_bucket_ms({math.inf: 3.0}))
    assert math.isnan(finest_bucket_ms({}))


def test_phases_add_up_to_the_end_to_end_latency() -> None:
    sample = AlertSample(received_ms=1_000.0, transaction_ts_ms=700, detected_ms=760, sent_ms=790)
    parts = {name: phase(sample) for name, phase in PHASES.items()}
    assert parts == {"ingest_to_detect": 60, "detect_to_send": 30, "send_to_receive": 210.0}
    assert sum(parts.values()) == sample.latency_ms == 300.0


def test_spread_reports_median_tail_and_max() -> None:
    assert spread([float(v) for v in range(100, 0, -1)]) == {"p50": 50.0, "p99": 99.0, "max": 100.0}
    assert math.isnan(spread([])["max"])
