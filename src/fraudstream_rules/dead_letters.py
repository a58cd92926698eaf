"""Why a transaction goes to the DLQ: the one-word `error` header and its bounded `error.detail` (CONTRACT section 2).

Contracts:
- `DeadLetterError` values are the `error` header and the `fraud_dlq_records_total{error}` label; `UNWRITABLE` is
  a metric label only (a record that could not even be dead-lettered is counted and logged, not written).
- A `Rejection`'s detail is at most `MAX_DETAIL_BYTES` of UTF-8 (`bounded`), whatever the record held, and values
  quoted in it are rendered as compact JSON cut to `PREVIEW_CHARS` code points (`preview`). The JVM core renders
  the same texts, so both cores write the same headers for the same record.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from .json_values import dumps_exact, escape_lone_surrogates

MAX_DETAIL_BYTES: Final = 1024
PREVIEW_CHARS: Final = 64
_ELLIPSIS: Final = "\u2026"


class DeadLetterError(StrEnum):
    UNPARSEABLE = "unparseable"
    """Empty, not UTF-8, not JSON, or beyond the JSON limits (json_values)."""
    INVALID = "invalid"
    """JSON, but not a transaction: not an object, or `eventTime` missing, not an integer or out of range."""
    LATE = "late"
    """Older than its key group's horizon for at least one group (CONTRACT section 6)."""
    FUTURE = "future"
    """`eventTime` more than the allowed future skew ahead of the record's Kafka timestamp."""
    UNWRITABLE = "unwritable"
    """Metrics only: an output Kafka refused for good (too large for its topic, for example)."""


def bounded(text: str, max_bytes: int = MAX_DETAIL_BYTES) -> str:
    """`text` cut at a character boundary to at most `max_bytes` UTF-8 bytes, ending in an ellipsis when cut."""
    text = escape_lone_surrogates(text)
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[: max_bytes - len(_ELLIPSIS.encode())].decode("utf-8", "ignore") + _ELLIPSIS


def preview(value: object) -> str:
    """A JSON value as compact JSON, cut to `PREVIEW_CHARS` code points (an ellipsis marks the cut)."""
    text = dumps_exact(value)
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + _ELLIPSIS


@dataclass(frozen=True)
class Rejection:
    """A transaction that is not evaluated at all: the DLQ `error` and its detail (already bounded)."""

    error: DeadLetterError
    detail: str

    @staticmethod
    def of(error: DeadLetterError, detail: str) -> Rejection:
        return Rejection(error, bounded(detail))
