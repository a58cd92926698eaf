"""Reading transaction records: the reasons unusable ones go to the DLQ with, and amounts."""

from __future__ import annotations

from decimal import Decimal

import pytest

from fraudstream_rules.exceptions import InvalidTransactionError
from fraudstream_rules.transactions import Transaction, numeric_value, parse_transaction

D = Decimal


@pytest.mark.parametrize(
    ("value", "event_time_ms"),
    [
        (b'{"eventTime":1700000000000}', 1_700_000_000_000),
        (b'{"eventTime":0}', 0),
        (b'{"eventTime":1.7e12}', 1_700_000_000_000),
        (b'{"eventTime":1700000000000.0}', 1_700_000_000_000),
        (b'{"eventTime":9223372036854775807}', 2**63 - 1),
        ('{"eventTime":5,"name":"Zo\u00eb"}'.encode(), 5),
    ],
)
def test_parse_transaction_event_time(value: bytes, event_time_ms: int) -> None:
    assert parse_transaction(value, ingest_ts_ms=1, partition=0, offset=0).event_time_ms == event_time_ms


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, "empty value"),
        (b"", "empty value"),
        (b"{", "unparseable: "),
        (b"not json", "unparseable: "),
        (b"\xff\xfe{}", "unparseable: "),
        (b'\xef\xbb\xbf{"eventTime":1}', "unparseable: "),
        (b'{"eventTime":1,"paymentAmount":NaN}', "unparseable: NaN is not a JSON number"),
        (b'{"eventTime":1,"paymentAmount":Infinity}', "unparseable: Infinity is not a JSON number"),
        (b'{"eventTime":1,"paymentAmount":1e99999999999999999999}', "unparseable: "),
        (b"[" * 100_000 + b"]" * 100_000, "unparseable: "),
        (b"[]", "not a JSON object"),
        (b'"x"', "not a JSON object"),
        (b"null", "not a JSON object"),
        (b"{}", "missing eventTime"),
        (b'{"eventtime":1}', "missing eventTime"),
        (b'{"eventTime":"1700000000000"}', "non-integer eventTime: '1700000000000'"),
        (b'{"eventTime":1.5}', "non-integer eventTime: Decimal('1.5')"),
        (b'{"eventTime":true}', "non-integer eventTime: True"),
        (b'{"eventTime":null}', "non-integer eventTime: None"),
        (b'{"eventTime":[1]}', "non-integer eventTime: [1]"),
        (b'{"eventTime":-1}', "out-of-range eventTime: -1"),
        (b'{"eventTime":9223372036854775808}', "out-of-range eventTime: 9223372036854775808"),
        (b'{"eventTime":1e999999999}', "out-of-range eventTime: Decimal('1E+999999999')"),
    ],
)
def test_parse_transaction_refuses(value: bytes | None, reason: str) -> None:
    with pytest.raises(InvalidTransactionError) as caught:
        parse_transaction(value, ingest_ts_ms=1, partition=0, offset=0)
    assert caught.value.reason.startswith(reason)
    assert str(caught.value) == caught.value.reason


def test_parse_transaction_keeps_exact_numbers_and_record_position() -> None:
    raw = b'{"transactionId":"t1","eventTime":10,"paymentAmount":0.10,"n":7,"extra":{"a":[1.5e2]}}'
    tx = parse_transaction(raw, ingest_ts_ms=99, partition=2, offset=41)
    assert tx.fields == {
        "transactionId": "t1",
        "eventTime": 10,
        "paymentAmount": D("0.10"),
        "n": 7,
        "extra": {"a": [D("1.5e2")]},
    }
    assert str(tx.fields["paymentAmount"]) == "0.10"
    assert (tx.raw, tx.ingest_ts_ms, tx.partition, tx.offset, tx.order_key) == (raw, 99, 2, 41, (99, 2, 41))


@pytest.mark.parametrize(
    ("fields", "transaction_id"),
    [
        ({"transactionId": "abc"}, "abc"),
        ({"transactionId": 12}, "12"),
        ({}, "3:17"),
        ({"transactionId": ""}, "3:17"),
        ({"transactionId": None}, "3:17"),
        ({"transactionId": True}, "3:17"),
        ({"transactionId": D("1.5")}, "3:17"),
    ],
)
def test_transaction_id_falls_back_to_record_position(fields: dict[str, object], transaction_id: str) -> None:
    tx = Transaction(fields=fields, raw=b"{}", event_time_ms=0, ingest_ts_ms=0, partition=3, offset=17)
    assert tx.transaction_id == transaction_id


@pytest.mark.parametrize(
    ("value", "amount"),
    [
        (D("0.10"), D("0.1")),
        (12, D(12)),
        (-3, D(-3)),
        ("12.50", D("12.5")),
        ("-0.5", D("-0.5")),
        ("1e3", D(1000)),
        (D("1E+99"), D("1E+99")),
        ("0." + "0" * 99 + "1", D("1E-100")),
        (D("5." + "0" * 500), D(5)),
    ],
)
def test_numeric_value(value: object, amount: Decimal) -> None:
    assert numeric_value({"paymentAmount": value}, "paymentAmount") == amount


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({}, "missing paymentAmount"),
        ({"paymentamount": 1}, "missing paymentAmount"),
        ({"paymentAmount": "abc"}, "non-numeric paymentAmount: 'abc'"),
        ({"paymentAmount": ""}, "non-numeric paymentAmount: ''"),
        ({"paymentAmount": " 1"}, "non-numeric paymentAmount: ' 1'"),
        ({"paymentAmount": "1,5"}, "non-numeric paymentAmount: '1,5'"),
        ({"paymentAmount": "NaN"}, "non-numeric paymentAmount: 'NaN'"),
        ({"paymentAmount": "\u0661"}, "non-numeric paymentAmount: '\u0661'"),
        ({"paymentAmount": True}, "non-numeric paymentAmount: True"),
        ({"paymentAmount": None}, "non-numeric paymentAmount: None"),
        ({"paymentAmount": [1]}, "non-numeric paymentAmount: [1]"),
        ({"paymentAmount": {"v": 1}}, "non-numeric paymentAmount: {'v': 1}"),
        ({"paymentAmount": D("1E+100")}, "out-of-range paymentAmount: Decimal('1E+100')"),
        ({"paymentAmount": "0." + "0" * 100 + "1"}, "out-of-range paymentAmount: '0.0"),
    ],
)
def test_numeric_value_refuses(fields: dict[str, object], reason: str) -> None:
    with pytest.raises(InvalidTransactionError) as caught:
        numeric_value(fields, "paymentAmount")
    assert caught.value.reason.startswith(reason)
