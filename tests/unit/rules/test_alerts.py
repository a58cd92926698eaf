"""Alert ids and the Alert JSON."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from fraudstream_rules.alerts import Alert, alert_id
from fraudstream_rules.model import AggregatorFunction, LimitOperator
from fraudstream_rules.transactions import parse_transaction


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        (("ns/r", "t1"), ("ns/r", "t1"), True),
        (("ns/r", "t1"), ("ns/r", "t2"), False),
        (("ns/r", "t1"), ("ns/q", "t1"), False),
        (("a/b", "c"), ("a", "b/c"), False),
        (("a", "bc"), ("ab", "c"), False),
        (("", ""), ("", ""), True),
    ],
)
def test_alert_id_is_a_function_of_rule_and_transaction(
    first: tuple[str, str], second: tuple[str, str], same: bool
) -> None:
    assert (alert_id(*first) == alert_id(*second)) is same


def test_alert_id_is_stable_across_releases() -> None:
    assert alert_id("fraud/big-spender", "t-1") == alert_id("fraud/big-spender", "t-1")
    assert len(alert_id("x", "y")) == 36


RAW = (
    b'{"transactionId":"t-1","eventTime":1700000000000,"payerId":7,"paymentAmount":0.10,'
    b'"big":1E+3,"tiny":-0.000,"s":"\xc3\xa9"}'
)


def make_alert(aggregator: AggregatorFunction = AggregatorFunction.SUM, field: str | None = "paymentAmount") -> Alert:
    tx = parse_transaction(RAW, ingest_ts_ms=1_700_000_000_500, partition=1, offset=2)
    return Alert(
        alert_id=alert_id("ns/r", tx.transaction_id),
        rule_id="ns/r",
        rule_generation=4,
        grouping_key={"payerId": 7},
        aggregator=aggregator,
        aggregate_field_name=field,
        aggregate_value=Decimal("0.30"),
        limit_operator=LimitOperator.GREATER_EQUAL,
        limit=Decimal("2E+5"),
        window_minutes=5,
        transaction_id=tx.transaction_id,
        transaction=tx.fields,
        transaction_timestamp_ms=tx.ingest_ts_ms,
        detected_at_ms=1_700_000_000_600,
    )


def test_alert_json_has_the_contract_fields() -> None:
    body = json.loads(make_alert().to_message_value())
    assert {key: value for key, value in body.items() if key != "transaction"} == {
        "alertId": alert_id("ns/r", "t-1"),
        "ruleId": "ns/r",
        "ruleGeneration": 4,
        "groupingKey": {"payerId": 7},
        "aggregatorFunctionType": "SUM",
        "aggregateFieldName": "paymentAmount",
        "aggregateValue": "0.3",
        "limitOperatorType": "GREATER_EQUAL",
        "limit": "200000",
        "windowMinutes": 5,
        "transactionId": "t-1",
        "transactionTimestamp": 1_700_000_000_500,
        "detectedAt": 1_700_000_000_600,
    }


def test_count_alert_has_null_aggregate_field() -> None:
    assert json.loads(make_alert(AggregatorFunction.COUNT, None).to_message_value())["aggregateFieldName"] is None


def test_transaction_numbers_keep_their_digits() -> None:
    value = make_alert().to_message_value()
    assert b'"transaction":{"transactionId":"t-1","eventTime":1700000000000,"payerId":7,"paymentAmount":0.10,' in value
    assert b'"big":1E+3,"tiny":-0.000,"s":"\xc3\xa9"}' in value
    transaction = json.loads(value, parse_float=Decimal)["transaction"]
    assert transaction == json.loads(RAW, parse_float=Decimal)
    assert str(transaction["paymentAmount"]) == "0.10"
