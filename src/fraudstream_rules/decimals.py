"""Exact decimal arithmetic, the numbers the package accepts, and their canonical text.

Contracts:
- `EXACT` never rounds: sums, differences and products of accepted numbers are exact (it traps
  `Inexact`, so a rounding would be a loud bug, not a silent drift).
- `QUOTIENT` is the only rounding context: an average is reported with 34 significant digits,
  ROUND_HALF_EVEN. Comparisons against a limit never use the rounded quotient (see aggregates.py).
- An *amount* is a finite decimal with at most `AMOUNT_DIGITS` digits before and after the point
  (after removing trailing zeros). The bound keeps exact running sums small; nothing real is near it.
- `as_number` is the lenient reading used by filters: int (not bool), finite Decimal, or a string
  that is a plain decimal literal (`-12`, `0.10`, `1e3`; no spaces, no NaN/Infinity, ASCII only) of at most
  `MAX_NUMBER_CHARS` characters, as a JSON number literal.
"""

from __future__ import annotations

import functools
import re
from decimal import (
    MAX_EMAX,
    MAX_PREC,
    MIN_EMIN,
    ROUND_HALF_EVEN,
    Context,
    Decimal,
    DivisionByZero,
    Inexact,
    InvalidOperation,
    Overflow,
)
from typing import Final

from .json_values import MAX_NUMBER_CHARS

EXACT: Final = Context(
    prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[InvalidOperation, DivisionByZero, Overflow, Inexact]
)
QUOTIENT: Final = Context(
    prec=34,
    rounding=ROUND_HALF_EVEN,
    Emax=MAX_EMAX,
    Emin=MIN_EMIN,
    traps=[InvalidOperation, DivisionByZero, Overflow],
)

AMOUNT_DIGITS: Final = 100
ZERO: Final = Decimal(0)
ONE: Final = Decimal(1)

_DECIMAL_TEXT: Final = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,9})?", re.ASCII)


def parse_decimal_text(text: str) -> Decimal | None:
    """The finite Decimal a plain decimal literal denotes, or None if `text` is not one or is longer than a JSON
    number literal may be (`MAX_NUMBER_CHARS`): a longer text is a string, never parsed or cached."""
    return None if len(text) > MAX_NUMBER_CHARS else _parse_decimal_text(text)


# Every stored event's amount is read by each rule of its key group, so the same text is parsed many times in a
# row; Decimals are immutable, so sharing the parsed value is safe.
@functools.lru_cache(maxsize=1 << 16)
def _parse_decimal_text(text: str) -> Decimal | None:
    if _DECIMAL_TEXT.fullmatch(text) is None:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def as_number(value: object) -> Decimal | None:
    """`value` read as a number (int, finite Decimal or decimal-literal string), else None; bool is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, str):
        return parse_decimal_text(value)
    return None


@functools.lru_cache(maxsize=1 << 16)
def is_amount(value: Decimal) -> bool:
    """Whether a number is within the amount bounds (finite, <= AMOUNT_DIGITS digits each side)."""
    if not value.is_finite():
        return False
    if value.is_zero():
        return True
    if value.adjusted() >= AMOUNT_DIGITS:
        return False
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    if exponent >= -AMOUNT_DIGITS:
        return True
    normalized_exponent = value.normalize(EXACT).as_tuple().exponent
    assert isinstance(normalized_exponent, int)
    return normalized_exponent >= -AMOUNT_DIGITS


def as_amount(value: object) -> Decimal | None:
    """`value` read as an amount (see module docstring), else None."""
    number = as_number(value)
    if number is None or not is_amount(number):
        return None
    return number


def canonical_decimal(value: Decimal) -> str:
    """The one text for a decimal's value: no trailing zeros, no exponent, "0" for any zero.

    Equal values give equal text (`200000.00` -> "200000", `0.10` -> "0.1"). Values beyond the amount
    bounds, which validated inputs never reach, fall back to scientific notation to stay short.
    """
    if not value.is_finite():
        raise ValueError(f"not a finite decimal: {value!r}")
    if value.is_zero():
        return "0"
    normalized = value.normalize(EXACT)
    exponent = normalized.as_tuple().exponent
    assert isinstance(exponent, int)
    if exponent >= -AMOUNT_DIGITS and normalized.adjusted() < AMOUNT_DIGITS:
        return format(normalized, "f")
    return str(normalized)
