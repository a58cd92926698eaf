"""Transactions as read from the transactions topic (CONTRACT section 3).

Contracts:
- `parse_transaction` either returns a `Transaction` or raises `InvalidTransactionError` whose `error` is the DLQ
  `error` header and `detail` its bounded explanation: `unparseable` for an empty value, invalid UTF-8, text that is
  not JSON or is beyond the JSON limits (json_values); `invalid` for JSON that is not an object, or whose
  `eventTime` is missing, not an integer, or outside [0, 2**63).
- JSON numbers keep their exact digits: integers are int, everything else Decimal (`json_values`).
- `eventTime` must be a JSON number with an integral value (`1700000000000`, also `1.7e12`), epoch milliseconds.
  Strings are refused even when they hold digits (the contract says int); booleans are not integers.
- Amounts (`amount_of`) may be JSON numbers or decimal strings ("12.50"); booleans, null and other strings are not
  numeric; values beyond `decimals.AMOUNT_DIGITS` digits are out of range. A rule whose aggregate field is not an
  amount in a transaction skips it for the `SkipReason` returned.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Final

from .dead_letters import DeadLetterError, bounded, preview
from .decimals import as_amount, as_number
from .exceptions import InvalidTransactionError
from .json_values import JsonValueError, loads_exact

_MAX_EVENT_TIME_MS: Final = 2**63 - 1
_JSON_KINDS: Final = {list: "an array", str: "a string", int: "a number", Decimal: "a number", bool: "a boolean"}


class SkipReason(StrEnum):
    """Why a rule could not aggregate a transaction it applies to (the `fraud_rule_skipped_total` reason label)."""

    MISSING = "missing"
    NON_NUMERIC = "non-numeric"
    OUT_OF_RANGE = "out-of-range"


@dataclass(frozen=True)
class Transaction:
    """One transaction record: its JSON fields plus where and when Kafka ingested it."""

    fields: Mapping[str, object]
    raw: bytes
    event_time_ms: int
    ingest_ts_ms: int
    partition: int
    offset: int

    @property
    def transaction_id(self) -> str:
        """`transactionId` as text; "<partition>:<offset>" when it is missing, empty or not a string/integer."""
        value = self.fields.get("transactionId")
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return f"{self.partition}:{self.offset}"

    @property
    def order_key(self) -> tuple[int, int, int]:
        """The ingestion order the contract fixes: ingestion timestamp, then partition, then offset."""
        return (self.ingest_ts_ms, self.partition, self.offset)


def _invalid(detail: str) -> InvalidTransactionError:
    return InvalidTransactionError(DeadLetterError.INVALID, bounded(detail))


def _event_time_ms(fields: Mapping[str, object]) -> int:
    if "eventTime" not in fields:
        raise _invalid("missing eventTime")
    value = fields["eventTime"]
    number: Decimal | None = None
    if not isinstance(value, str):
        number = as_number(value)
    if number is None or number != number.to_integral_value():
        raise _invalid(f"eventTime is not an integer: {preview(value)}")
    if not 0 <= number <= _MAX_EVENT_TIME_MS:
        raise _invalid(f"eventTime is outside [0, 2^63): {preview(value)}")
    return int(number)


def _json_kind(value: object) -> str:
    return "null" if value is None else _JSON_KINDS.get(type(value), type(value).__name__)


def parse_transaction(value: bytes | None, ingest_ts_ms: int, partition: int, offset: int) -> Transaction:
    """Read a transactions-topic record value; raise InvalidTransactionError(error, detail) if it is unusable."""
    if not value:
        raise InvalidTransactionError(DeadLetterError.UNPARSEABLE, "empty record value")
    try:
        fields = loads_exact(value)
    except JsonValueError as exc:
        raise InvalidTransactionError(DeadLetterError.UNPARSEABLE, bounded(str(exc))) from exc
    if not isinstance(fields, dict):
        raise _invalid(f"not a JSON object but {_json_kind(fields)}")
    return Transaction(
        fields=fields,
        raw=bytes(value),
        event_time_ms=_event_time_ms(fields),
        ingest_ts_ms=ingest_ts_ms,
        partition=partition,
        offset=offset,
    )


def amount_of(fields: Mapping[str, object], name: str) -> Decimal | SkipReason:
    """The amount in field `name`, or why there is none."""
    if name not in fields:
        return SkipReason.MISSING
    value = fields[name]
    amount = as_amount(value)
    if amount is None:
        return SkipReason.OUT_OF_RANGE if as_number(value) is not None else SkipReason.NON_NUMERIC
    return amount
