"""The generator's workloads: the default profile unchanged, the flink-demo profile's shape and distributions.

Distribution checks draw a fixed-seed sample and hold it to loose bounds (several standard errors wide), so they test
the shape, not the luck of one seed.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from decimal import Decimal

import pytest

from fraudstream_generator.__main__ import build_workload, parse_args
from fraudstream_generator.workload import (
    FlinkDemoConfig,
    FlinkDemoWorkload,
    GeneratedTransaction,
    Profile,
    Workload,
    WorkloadConfig,
)
from fraudstream_rules.transactions import amount_of, parse_transaction

NOW_MS = 1_700_000_000_000
SAMPLE = 20_000


def draw(workload: FlinkDemoWorkload | Workload, n: int = SAMPLE) -> list[GeneratedTransaction]:
    return [workload.next(NOW_MS + i) for i in range(n)]


@pytest.fixture(scope="module")
def demo() -> list[GeneratedTransaction]:
    return draw(FlinkDemoWorkload(FlinkDemoConfig(), seed=7))


def amounts(sample: list[GeneratedTransaction]) -> list[Decimal]:
    return [Decimal(str(tx.body["paymentAmount"])) for tx in sample]


def test_flink_demo_transactions_have_the_demo_shape_and_parse_as_contract_transactions(
    demo: list[GeneratedTransaction],
) -> None:
    for offset, tx in enumerate(demo[:200]):
        assert set(tx.body) == {
            "transactionId",
            "eventTime",
            "payeeId",
            "beneficiaryId",
            "paymentAmount",
            "paymentType",
        }
        assert tx.key == str(tx.body["payeeId"]) and not tx.fraud
        parsed = parse_transaction(json.dumps(tx.body).encode(), NOW_MS, 0, offset)
        assert parsed.event_time_ms == NOW_MS + offset
        assert amount_of(parsed.fields, "paymentAmount") == Decimal(str(tx.body["paymentAmount"]))
    ids = [tx.body["transactionId"] for tx in demo]
    assert all(isinstance(i, int) for i in ids) and len(set(ids)) == len(ids)


@pytest.mark.parametrize("field", ["payeeId", "beneficiaryId"])
def test_flink_demo_ids_are_uniform_integers_from_1_to_100_000(demo: list[GeneratedTransaction], field: str) -> None:
    ids = [tx.body[field] for tx in demo]
    assert all(isinstance(i, int) and 1 <= i <= 100_000 for i in ids)
    # Mean of U{1..100000} is 50000.5, its standard error over 20 000 draws ~204: allow ~5 of them.
    assert abs(sum(ids) / len(ids) - 50_000.5) < 1_000
    deciles = Counter((i - 1) // 10_000 for i in ids)
    assert sorted(deciles) == list(range(10))
    assert all(0.9 * SAMPLE / 10 < count < 1.1 * SAMPLE / 10 for count in deciles.values())


def test_flink_demo_amounts_are_exponential_with_mean_100_in_cents(demo: list[GeneratedTransaction]) -> None:
    values = amounts(demo)
    assert all(v.as_tuple().exponent == -2 for v in values)
    assert all(Decimal("0.01") <= v <= Decimal("5000.00") for v in values)
    mean = float(sum(values)) / len(values)
    assert 95 < mean < 105  # standard error of the mean ~0.7
    median = sorted(values)[len(values) // 2]
    assert 65 < median < 74  # exponential: 100 * ln 2 = 69.3
    # The tail an exponential has and a log-normal does not: P(x > 300) = e^-3 ~ 5.0%, P(x < 0.5) = 0.5%.
    assert 0.04 < sum(v > 300 for v in values) / len(values) < 0.06
    assert 0.002 < sum(v < Decimal("0.5") for v in values) / len(values) < 0.009


def test_flink_demo_payment_types_are_csh_or_crd_with_equal_odds(demo: list[GeneratedTransaction]) -> None:
    types = Counter(tx.body["paymentType"] for tx in demo)
    assert set(types) == {"CSH", "CRD"}
    assert abs(types["CSH"] / SAMPLE - 0.5) < 0.02


@pytest.mark.parametrize(
    ("config", "clamped_to"),
    [(FlinkDemoConfig(amount_cap=Decimal("50.00")), Decimal("50.00")),
     (FlinkDemoConfig(amount_floor=Decimal("20.00")), Decimal("20.00"))],
)  # fmt: skip
def test_flink_demo_amounts_are_clamped_to_the_floor_and_the_cap(config: FlinkDemoConfig, clamped_to: Decimal) -> None:
    values = amounts(draw(FlinkDemoWorkload(config, seed=3), 2_000))
    assert all(config.amount_floor <= v <= config.amount_cap for v in values)
    # e^-0.5 ~ 61% of draws exceed 50; 1 - e^-0.2 ~ 18% fall below 20.
    assert sum(v == clamped_to for v in values) > 200


def test_flink_demo_is_reproducible_for_a_seed_and_honours_disorder() -> None:
    first = draw(FlinkDemoWorkload(FlinkDemoConfig(), seed=5), 100)
    assert first == draw(FlinkDemoWorkload(FlinkDemoConfig(), seed=5), 100)
    assert first != draw(FlinkDemoWorkload(FlinkDemoConfig(), seed=6), 100)
    disordered = draw(FlinkDemoWorkload(FlinkDemoConfig(disorder_ms=500), seed=5), 1_000)
    lags = [NOW_MS + i - int(str(tx.body["eventTime"])) for i, tx in enumerate(disordered)]
    assert min(lags) == 0 and max(lags) == 500


@pytest.mark.parametrize(
    ("argv", "kind", "payers", "beneficiaries"),
    [([], Workload, 100_000, 20_000),
     (["--payers", "10", "--beneficiaries", "5"], Workload, 10, 5),
     (["--profile", "flink-demo"], FlinkDemoWorkload, 100_000, 100_000),
     (["--profile", "flink-demo", "--payers", "300", "--beneficiaries", "40"], FlinkDemoWorkload, 300, 40)],
)  # fmt: skip
def test_the_profile_flag_picks_the_workload_and_its_account_ranges(
    argv: list[str], kind: type[Workload | FlinkDemoWorkload], payers: int, beneficiaries: int
) -> None:
    workload = build_workload(parse_args(argv))
    assert isinstance(workload, kind)
    config = workload.config
    assert (getattr(config, "payers", None) or getattr(config, "payees", None)) == payers
    assert config.beneficiaries == beneficiaries


def test_the_default_profile_is_unchanged() -> None:
    """The first 1 000 transactions of seed 1, pinned as the default profile produced them before profiles existed."""
    assert parse_args([]).profile is Profile.DEFAULT
    sample = draw(Workload(WorkloadConfig(), seed=1), 1_000)
    assert sample[0] == GeneratedTransaction(
        "payer-0",
        {"transactionId": "tx-0", "eventTime": NOW_MS, "payerId": "payer-0", "beneficiaryId": "beneficiary-1665",
         "paymentAmount": "248.75", "paymentType": "CRD"},
        False,
    )  # fmt: skip
    digest = hashlib.sha256(json.dumps([(tx.key, tx.body, tx.fraud) for tx in sample]).encode()).hexdigest()
    assert digest == "6e6ab050dd634fec7cbd70108508f3a922a1517b39ca2a7a3320e1e7b6d24f3c"
