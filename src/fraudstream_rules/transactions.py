"""Transactions as read from the transactions topic (CONTRACT section 3).

Contracts:
- `parse_transaction` either returns a `Transaction` or raises `InvalidTransactionError` whose
  `reason` is the DLQ `error` header: "empty value", "unparseable: <detail>", "not a JSON object",
  "missing eventTime", "non-integer eventTime: <value>", "out-of-range eventTime: <value>".
- JSON numbers keep their exact digits: integers are int, everything else Decimal (`json_values`).
- `eventTime` must be a JSON number with an integral value (`1700000000000`, also `1.7e12`), epoch
  milliseconds in [0, 2**63). Strings are refused even when they hold digits (the contract says int);
  booleans are not integers.
- Amounts (`numeric_value`) may be JSON numbers or decimal strings ("12.50"); booleans, null and
  other strings are not numeric; values beyond `decimals.AMOUNT_DIGITS` digits are out of range.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from .decimals import as_amount, as_number
from .exceptions import InvalidTransactionError
from .json_values import JsonValueError, loads_exact

_MAX_EVENT_TIME_MS: Final = 2**63 - 1


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
        """The processing order the contract fixes: ingestion timestamp, then partition, then offset."""
        return (self.ingest_ts_ms, self.partition, self.offset)


def _event_time_ms(fields: Mapping[str, object]) -> int:
    if "eventTime" not in fields:
        raise InvalidTransactionError("missing eventTime")
    value = fields["eventTime"]
    number: Decimal | None = None
    if not isinstance(value, str):
        number = as_number(value)
    if number is None or number != number.to_integral_value():
        raise InvalidTransactionError(f"non-integer eventTime: {value!r}")
    if not 0 <= number <= _MAX_EVENT_TIME_MS:
        raise InvalidTransactionError(f"out-of-range eventTime: {value!r}")
    return int(number)


def parse_transaction(value: bytes | None, ingest_ts_ms: int, partition: int, offset: int) -> Transaction:
    """Read a transactions-topic record value; raise InvalidTransactionError(reason) if it is unusable."""
    if not value:
        raise InvalidTransactionError("empty value")
    try:
        fields = loads_exact(value)
    except JsonValueError as exc:
        raise InvalidTransactionError(f"unparseable: {exc}") from exc
    if not isinstance(fields, dict):
        raise InvalidTransactionError("not a JSON object")
    return Transaction(
        fields=fields,
        raw=bytes(value),
        event_time_ms=_event_time_ms(fields),
        ingest_ts_ms=ingest_ts_ms,
        partition=partition,
        offset=offset,
    )


def numeric_value(fields: Mapping[str, object], name: str) -> Decimal:
    """The amount in field `name`; raise InvalidTransactionError("missing <name>" / "non-numeric <name>: ...")."""
    if name not in fields:
        raise InvalidTransactionError(f"missing {name}")
    value = fields[name]
    amount = as_amount(value)
    if amount is None:
        if as_number(value) is not None:
            raise InvalidTransactionError(f"out-of-range {name}: {value!r}")
        raise InvalidTransactionError(f"non-numeric {name}: {value!r}")
    return amount
