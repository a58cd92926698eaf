"""The benchmark's rule sets: the flink-demo profile's six rules, the window precision option and its plumbing."""

from __future__ import annotations

import argparse
import functools
import math
from decimal import Decimal
from statistics import NormalDist
from typing import Any

import pytest

from bench import rules, run
from bench.rules import (
    PRECISION_MIN_WINDOW_MINUTES,
    benchmark_manifests,
    flink_demo_manifests,
    rule_manifests,
    with_window_precision,
)
from fraudstream_generator.workload import FRAUD_BURST_AMOUNTS, Profile, WorkloadConfig
from fraudstream_rules.exceptions import InvalidRuleError
from fraudstream_rules.model import AggregatorFunction, LimitOperator, parse_spec

# (grouping keys, aggregate, field, operator, limit, window minutes) as the issue lists the Flink demo's rules.
FLINK_DEMO = [
    (("payeeId",), AggregatorFunction.SUM, "paymentAmount", LimitOperator.GREATER, Decimal(1500), 10),
    (("beneficiaryId",), AggregatorFunction.COUNT, None, LimitOperator.GREATER_EQUAL, Decimal(4), 5),
    (("beneficiaryId", "payeeId"), AggregatorFunction.SUM, "paymentAmount", LimitOperator.GREATER, Decimal(500), 30),
    (("payeeId",), AggregatorFunction.MAX, "paymentAmount", LimitOperator.GREATER, Decimal(600), 1),
    (("beneficiaryId",), AggregatorFunction.MIN, "paymentAmount", LimitOperator.LESS, Decimal("0.5"), 5),
    (("payeeId",), AggregatorFunction.COUNT, None, LimitOperator.GREATER_EQUAL, Decimal(3), 15),
]


def test_flink_demo_has_the_demos_six_rules_valid_for_the_rule_model() -> None:
    manifests = flink_demo_manifests()
    specs = [parse_spec(m["spec"]) for m in manifests]
    got = [(s.grouping_key_names, s.aggregator, s.aggregate_field_name, s.limit_operator, s.limit, s.window_minutes)
           for s in specs]  # fmt: skip
    assert got == FLINK_DEMO
    assert all(s.window_precision_seconds is None and not s.filters for s in specs)
    assert all(m["kind"] == "FraudRule" and m["apiVersion"] == "fraudstream.io/v1alpha1" for m in manifests)
    assert len({m["metadata"]["name"] for m in manifests}) == 6


@pytest.mark.parametrize(
    ("profile", "count", "expected"),
    [(Profile.DEFAULT, 50, 50), (Profile.DEFAULT, 7, 7), (Profile.FLINK_DEMO, 50, 6)],
)
def test_each_profile_has_its_rules(profile: Profile, count: int, expected: int) -> None:
    manifests = benchmark_manifests(profile, count)
    assert len(manifests) == expected
    if profile is Profile.DEFAULT:
        assert manifests == rule_manifests(count)


@pytest.mark.parametrize("precision_s", [60, 3600, 86400])
def test_precision_buckets_exactly_the_rules_of_a_day_or_more(precision_s: int) -> None:
    exact = rule_manifests(50)
    bucketed = benchmark_manifests(Profile.DEFAULT, 50, precision_s)
    for before, after in zip(exact, bucketed, strict=True):
        spec = parse_spec(after["spec"])
        if before["spec"]["windowMinutes"] >= PRECISION_MIN_WINDOW_MINUTES:
            assert spec.window_precision_seconds == precision_s
        else:
            assert after == before
    assert "windowPrecisionSeconds" not in exact[2]["spec"]  # the inputs are copied, not changed
    assert sum("windowPrecisionSeconds" in m["spec"] for m in bucketed) == 30  # 3 of every 5 window lengths


def test_no_precision_keeps_every_rule_exact_and_flink_demo_has_no_rule_to_bucket() -> None:
    assert with_window_precision(rule_manifests(10), None) == rule_manifests(10)
    assert benchmark_manifests(Profile.FLINK_DEMO, 0, 3600) == flink_demo_manifests()


@pytest.mark.parametrize("precision_s", [0, 7, 7200 * 13])
def test_a_precision_the_rule_model_refuses_names_the_rule(precision_s: int) -> None:
    with pytest.raises(InvalidRuleError, match=r"bench-\d{3}-\w+: spec.windowPrecisionSeconds"):
        benchmark_manifests(Profile.DEFAULT, 50, precision_s)


class Parsed(Exception):
    """Stops bench.run.main once it has its rules, before it starts anything."""


@pytest.fixture
def parsed_rules(monkeypatch: pytest.MonkeyPatch) -> list[list[dict[str, Any]]]:
    got: list[list[dict[str, Any]]] = []
    real = rules.for_options

    def record(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[dict[str, Any]]:
        got.append(real(parser, args))
        raise Parsed

    monkeypatch.setattr(rules, "for_options", record)
    return got


@pytest.mark.parametrize(
    ("argv", "count", "bucketed"),
    [([], 50, 0), (["--rules", "10", "--window-precision-seconds", "3600"], 10, 6), (["--profile", "flink-demo"], 6, 0),
     (["--window-precision-seconds", "3600"], 50, 30)],
)  # fmt: skip
def test_bench_options_reach_the_rules(
    parsed_rules: list[list[dict[str, Any]]], argv: list[str], count: int, bucketed: int
) -> None:
    with pytest.raises(Parsed):
        run.main(argv)
    [manifests] = parsed_rules
    assert len(manifests) == count
    assert sum("windowPrecisionSeconds" in m["spec"] for m in manifests) == bucketed


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["--profile", "flink-demo", "--rules", "5"], "--rules applies to the default profile"),
     (["--window-precision-seconds", "7"], "7: bench-002-sum: spec.windowPrecisionSeconds must divide"),
     (["--profile", "other"], "invalid Profile value")],
)  # fmt: skip
def test_bench_refuses_options_that_make_no_valid_rules(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        run.main(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


DAY_S = 86_400
DEFAULT_RATE_TPS = 1_000


@functools.cache
def _zipf_top_share(n: int, s: float) -> float:
    """P(rank 0) of a Zipf law over n ranks with exponent s (as fraudstream_generator.workload.ZipfSampler draws)."""
    return 1.0 / sum(1.0 / math.pow(k + 1, s) for k in range(n))


def _hottest_share(keys: list[str], config: WorkloadConfig) -> float:
    """The share of all transactions that the busiest group of `keys` receives: rank 0 of each Zipf draw, CRD for
    paymentType (the commoner type); the draws are independent."""
    shares = {"payerId": _zipf_top_share(config.payers, config.zipf_s),
              "beneficiaryId": _zipf_top_share(config.beneficiaries, config.zipf_s),
              "paymentType": 1 - config.cash_share}  # fmt: skip
    return float(math.prod(shares[key] for key in keys))


def _ordinary_share_and_amount(filters: list[dict[str, str]], config: WorkloadConfig) -> tuple[float, float]:
    """For an ordinary (log-normal) payment A: P(A passes the amount filters) and E[A * (A passes them)], by
    P(A >= x) = Phi((mu - ln x) / sigma) and E[A; A >= x] = mean * Phi((mu + sigma^2 - ln x) / sigma)."""
    mu, sigma = math.log(float(config.amount_median)), config.amount_sigma
    share, expected = 1.0, math.exp(mu + sigma**2 / 2)
    for f in filters:
        if f["field"] == "paymentAmount":
            assert f["operator"] in ("GREATER", "GREATER_EQUAL")  # the same for a continuous amount
            share *= NormalDist().cdf((mu - math.log(float(f["value"]))) / sigma)
            expected *= NormalDist().cdf((mu + sigma**2 - math.log(float(f["value"]))) / sigma)
        else:
            assert (f["field"], f["operator"], f["value"]) == ("paymentType", "EQUAL", "CRD")
    return share, expected


def _admits_only_amounts_over_its_limit(spec: dict[str, Any]) -> bool:
    """Whether every payment the rule's filters admit exceeds its limit by itself (so each one alerts)."""
    return any(
        f["field"] == "paymentAmount" and f["operator"] == "GREATER" and float(f["value"]) >= float(spec["limit"])
        for f in spec.get("filters", [])
    )


def test_sum_rules_alert_at_a_steady_rate_on_bursts_or_on_every_payment_they_admit() -> None:
    """The default SUM rules alert at a rate that does not climb as their windows fill. Either the busiest group's
    expected ordinary flow over min(window, a day) at 1 000 tx/s stays below half the limit, so ordinary traffic
    never alerts and only the bursts do (paymentType groups also carry the bursts; no account group does, as each
    burst uses a fresh payer and beneficiary); or the rule admits only payments above its limit, so each admitted
    payment alerts by itself: about 1% of ordinary payments, a steady stream spread in time."""
    config = WorkloadConfig()
    burst_amount_per_transaction = config.fraud_share * float(sum(FRAUD_BURST_AMOUNTS))
    bursts_only, per_payment = [], []
    for manifest in rule_manifests(50):
        spec = manifest["spec"]
        if spec["aggregatorFunctionType"] != "SUM":
            continue
        filters, keys = spec.get("filters", []), spec["groupingKeyNames"]
        share, per_transaction = _ordinary_share_and_amount(filters, config)
        if _admits_only_amounts_over_its_limit(spec):
            assert 0.005 < share < 0.02, manifest["metadata"]["name"]
            per_payment.append(manifest["metadata"]["name"])
            continue
        if "paymentType" in keys and not any(f["field"] == "paymentAmount" for f in filters):
            per_transaction += burst_amount_per_transaction
        horizon_s = min(spec["windowMinutes"] * 60, DAY_S)
        flow = _hottest_share(keys, config) * DEFAULT_RATE_TPS * horizon_s * per_transaction
        assert flow < float(spec["limit"]) / 2, manifest["metadata"]["name"]
        bursts_only.append(manifest["metadata"]["name"])
    assert per_payment == ["bench-000-sum", "bench-025-sum"]
    assert len(bursts_only) == 8


def test_the_pair_sum_still_fires_on_a_burst() -> None:
    """The pair's SUM counts large payments only, and a burst's three are large enough to cross it."""
    pair_sums = [parse_spec(m["spec"]) for m in rule_manifests(50)
                 if m["spec"]["groupingKeyNames"] == ["payerId", "beneficiaryId"]
                 and m["spec"]["aggregatorFunctionType"] == "SUM"]  # fmt: skip
    assert len(pair_sums) == 2
    for spec in pair_sums:
        [large] = [f for f in spec.filters if f.field == "paymentAmount"]
        assert all(amount >= large.value for amount in FRAUD_BURST_AMOUNTS)
        assert sum(FRAUD_BURST_AMOUNTS) > spec.limit
