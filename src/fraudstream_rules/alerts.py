"""Alerts as written to the alerts topic (CONTRACT section 5).

Contracts:
- `alert_id(rule_id, transaction_id)` is a UUIDv5 over both, so a replay after a failure produces
  the same id for the same (rule, transaction).
- `Alert.to_json` uses the contract's camelCase keys; `aggregateValue` and `limit` are canonical
  decimal strings; `aggregateFieldName` is null for COUNT; `transaction` is the transaction's fields
  as received. `to_message_value` renders numbers with the digits they arrived with, so the
  `transaction` object in an alert reads back (with `parse_float=Decimal`) equal to the original.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from .decimals import canonical_decimal
from .json_values import dumps_exact
from .model import AggregatorFunction, LimitOperator

_ALERT_NAMESPACE: Final = uuid.uuid5(uuid.NAMESPACE_URL, "https://fraudstream.io/alert")


def alert_id(rule_id: str, transaction_id: str) -> str:
    """Deterministic id of the alert rule `rule_id` raises for transaction `transaction_id`."""
    return str(uuid.uuid5(_ALERT_NAMESPACE, json.dumps([rule_id, transaction_id])))


@dataclass(frozen=True)
class Alert:
    """One rule firing for one transaction; times are epoch milliseconds."""

    alert_id: str
    rule_id: str
    rule_generation: int
    grouping_key: Mapping[str, object]
    aggregator: AggregatorFunction
    aggregate_field_name: str | None
    aggregate_value: Decimal
    limit_operator: LimitOperator
    limit: Decimal
    window_minutes: int
    transaction_id: str
    transaction: Mapping[str, object]
    transaction_timestamp_ms: int
    detected_at_ms: int

    def to_json(self) -> dict[str, object]:
        """Alert JSON; `groupingKey` and `transaction` hold values as parsed (exact numbers)."""
        return {
            "alertId": self.alert_id,
            "ruleId": self.rule_id,
            "ruleGeneration": self.rule_generation,
            "groupingKey": dict(self.grouping_key),
            "aggregatorFunctionType": self.aggregator.value,
            "aggregateFieldName": self.aggregate_field_name,
            "aggregateValue": canonical_decimal(self.aggregate_value),
            "limitOperatorType": self.limit_operator.value,
            "limit": canonical_decimal(self.limit),
            "windowMinutes": self.window_minutes,
            "transactionId": self.transaction_id,
            "transaction": self.transaction,
            "transactionTimestamp": self.transaction_timestamp_ms,
            "detectedAt": self.detected_at_ms,
        }

    def to_message_value(self) -> bytes:
        """Compact UTF-8 JSON for the alerts topic, numbers rendered exactly."""
        return dumps_exact(self.to_json()).encode("utf-8")
