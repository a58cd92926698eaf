"""Latency statistics: exact percentiles of measured samples, and Prometheus-style quantiles of a histogram."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

# The alert latency budget (CONTRACT): 300-500 ms from a transaction's ingestion into the transactions topic until its
# alert is on the alerts topic. make bench's verdict wants p50 within the lower end and p99 within the upper.
BUDGET_LOW_MS = 300.0
BUDGET_HIGH_MS = 500.0


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]) of an ascending sequence; NaN when empty."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def parse_histogram(metrics_text: str, name: str) -> dict[float, float]:
    """Cumulative bucket counts {upper bound: count} of an unlabelled Prometheus histogram, summed over every series of
    it in `metrics_text` (several endpoints' expositions, one after the other), as PromQL's `sum by (le)`."""
    buckets: dict[float, float] = {}
    prefix = f'{name}_bucket{{le="'
    for line in metrics_text.splitlines():
        if line.startswith(prefix):
            bound, _, value = line[len(prefix) :].partition('"} ')
            upper = math.inf if bound == "+Inf" else float(bound)
            buckets[upper] = buckets.get(upper, 0.0) + float(value)
    return buckets


def finest_bucket_ms(histogram: Mapping[float, float]) -> float:
    """The width in ms of a histogram's narrowest bucket ({upper bound in s: count}; the first bucket starts at 0): a
    quantile interpolated inside a bucket is known no closer than that. NaN without a finite bound."""
    bounds = sorted(b for b in histogram if math.isfinite(b))
    if not bounds:
        return math.nan
    return round(min(upper - lower for lower, upper in zip([0.0, *bounds[:-1]], bounds, strict=True)) * 1000, 6)


def histogram_quantile(q: float, before: Mapping[float, float], after: Mapping[float, float]) -> float:
    """The q-quantile (0..1) of the observations made between two scrapes, interpolated as PromQL does."""
    bounds = sorted(after)
    counts = [after[b] - before.get(b, 0.0) for b in bounds]
    total = counts[-1] if counts else 0.0
    if total <= 0:
        return math.nan
    target = q * total
    lower_bound, lower_count = 0.0, 0.0
    for bound, count in zip(bounds, counts, strict=True):
        if count >= target:
            if math.isinf(bound):
                return lower_bound
            return lower_bound + (bound - lower_bound) * (target - lower_count) / max(count - lower_count, 1e-12)
        lower_bound, lower_count = bound, count
    return bounds[-2] if len(bounds) > 1 else math.nan
