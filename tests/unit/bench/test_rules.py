"""The benchmark's rule sets: the flink-demo profile's six rules, the window precision option and its plumbing."""

from __future__ import annotations

import argparse
from decimal import Decimal
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
from fraudstream_generator.workload import Profile
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
