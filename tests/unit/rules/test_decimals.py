"""Canonical decimal text and the lenient/strict number readings."""

from __future__ import annotations

from decimal import Decimal

import pytest

from fraudstream_rules.decimals import EXACT, as_amount, as_number, canonical_decimal, parse_decimal_text
from fraudstream_rules.json_values import MAX_NUMBER_CHARS

D = Decimal


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (D("200000.00"), "200000"),
        (D("2E+5"), "200000"),
        (D("0.10"), "0.1"),
        (D("-0.00"), "0"),
        (D("0E-7"), "0"),
        (D("1E-7"), "0.0000001"),
        (D("-12.3400"), "-12.34"),
        (D("1234567890123456789012345678901234567890.10"), "1234567890123456789012345678901234567890.1"),
        (D("1E+150"), "1E+150"),
        (D("1E-150"), "1E-150"),
    ],
)
def test_canonical_decimal(value: Decimal, text: str) -> None:
    assert canonical_decimal(value) == text


@pytest.mark.parametrize("value", [D("NaN"), D("Infinity"), D("-Infinity")])
def test_canonical_decimal_refuses_non_finite(value: Decimal) -> None:
    with pytest.raises(ValueError, match="not a finite decimal"):
        canonical_decimal(value)


@pytest.mark.parametrize(
    ("value", "number"),
    [
        (5, D(5)),
        (D("1.5"), D("1.5")),
        ("1.5", D("1.5")),
        ("-.5", D("-0.5")),
        ("+2.", D(2)),
        ("1e-3", D("0.001")),
        (True, None),
        (None, None),
        ("", None),
        ("1 ", None),
        ("0x10", None),
        ("1_000", None),
        ("NaN", None),
        ("inf", None),
        ("\u0663", None),
        (D("NaN"), None),
        ([1], None),
        (1.5, None),
    ],
)
def test_as_number(value: object, number: Decimal | None) -> None:
    assert as_number(value) == number


@pytest.mark.parametrize(
    ("value", "amount"),
    [
        ("1E+99", D("1E+99")),
        ("1E+100", None),
        ("1E-100", D("1E-100")),
        ("1E-101", None),
        ("0E-500", D(0)),
        ("1.5", D("1.5")),
    ],
)
def test_as_amount_bounds(value: str, amount: Decimal | None) -> None:
    assert as_amount(value) == amount


def test_parse_decimal_text_refuses_huge_exponent_text() -> None:
    assert parse_decimal_text("1e9999999999") is None


def test_a_decimal_text_is_at_most_as_long_as_a_json_number_literal() -> None:
    longest = "-" + "9" * (MAX_NUMBER_CHARS - 1)
    assert parse_decimal_text(longest) == Decimal(longest)
    assert parse_decimal_text("9" * (MAX_NUMBER_CHARS + 1)) is None  # a string: never parsed (quadratic), not cached
    assert as_number("1" * 1_000_000) is None


def test_exact_context_never_rounds() -> None:
    total = EXACT.add(D("12345678901234567890123456789.01"), D("0.000000000000000000000000000000001"))
    assert total == D("12345678901234567890123456789.010000000000000000000000000000001")
