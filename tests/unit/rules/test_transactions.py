"""Reading transaction records: the DLQ error and detail unusable ones get, and amounts."""

from __future__ import annotations

from decimal import Decimal

import pytest

from fraudstream_rules.dead_letters import MAX_DETAIL_BYTES
from fraudstream_rules.exceptions import InvalidTransactionError
from fraudstream_rules.transactions import SkipReason, Transaction, amount_of, parse_transaction

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
    ("value", "error", "detail"),
    [
        (None, "unparseable", "empty record value"),
        (b"", "unparseable", "empty record value"),
        (b"{", "unparseable", "not JSON: "),
        (b"not json", "unparseable", "not JSON: "),
        (b"\xff\xfe{}", "unparseable", "not valid UTF-8 at byte 0"),
        (b'{"a":"\xc3\x28"}', "unparseable", "not valid UTF-8 at byte 6"),
        (b'{"a":"\xed\xa0\x80"}', "unparseable", "not valid UTF-8 at byte 6"),
        (b'\xef\xbb\xbf{"eventTime":1}', "unparseable", "not JSON: "),
        (b'{"eventTime":1,"paymentAmount":NaN}', "unparseable", "NaN is not a JSON number"),
        (b'{"eventTime":1,"paymentAmount":Infinity}', "unparseable", "Infinity is not a JSON number"),
        (b'{"eventTime":1,"paymentAmount":1e99999999999999999999}', "unparseable", "JSON number exponent beyond"),
        (b'{"eventTime":1,"x":1e1000000000}', "unparseable", "JSON number exponent beyond +-999999999"),
        (b'{"eventTime":1,"x":' + b"9" * 1001 + b"}", "unparseable", "JSON number longer than 1000 characters"),
        (b'{"eventTime":1,"x":-' + b"9" * 10_000 + b"}", "unparseable", "JSON number longer than 1000 characters"),
        (b'{"eventTime":1,"x":' + b"[" * 64 + b"]" * 64 + b"}", "unparseable", "JSON nested deeper than 64 levels"),
        (b"[" * 100_000 + b"]" * 100_000, "unparseable", "JSON nested deeper than 64 levels"),
        (b"[]", "invalid", "not a JSON object but an array"),
        (b'"x"', "invalid", "not a JSON object but a string"),
        (b"null", "invalid", "not a JSON object but null"),
        (b"1.5", "invalid", "not a JSON object but a number"),
        (b"false", "invalid", "not a JSON object but a boolean"),
        (b"{}", "invalid", "missing eventTime"),
        (b'{"eventtime":1}', "invalid", "missing eventTime"),
        (b'{"eventTime":"1700000000000"}', "invalid", 'eventTime is not an integer: "1700000000000"'),
        (b'{"eventTime":1.5}', "invalid", "eventTime is not an integer: 1.5"),
        (b'{"eventTime":true}', "invalid", "eventTime is not an integer: true"),
        (b'{"eventTime":null}', "invalid", "eventTime is not an integer: null"),
        (b'{"eventTime":[1]}', "invalid", "eventTime is not an integer: [1]"),
        (b'{"eventTime":{"a":"\\ud800"}}', "invalid", 'eventTime is not an integer: {"a":"\\ud800"}'),
        (b'{"eventTime":-1}', "invalid", "eventTime is outside [0, 2^63): -1"),
        (b'{"eventTime":9223372036854775808}', "invalid", "eventTime is outside [0, 2^63): 9223372036854775808"),
        (b'{"eventTime":1e999999999}', "invalid", "eventTime is outside [0, 2^63): 1E+999999999"),
    ],
)
def test_parse_transaction_refuses(value: bytes | None, error: str, detail: str) -> None:
    with pytest.raises(InvalidTransactionError) as caught:
        parse_transaction(value, ingest_ts_ms=1, partition=0, offset=0)
    assert (caught.value.error, caught.value.detail[: len(detail)]) == (error, detail)


def test_depth_64_is_accepted_and_65_refused() -> None:
    inner = b"[" * 63 + b"]" * 63  # inside the transaction object: 64 containers in all
    assert parse_transaction(b'{"eventTime":1,"x":' + inner + b"}", 1, 0, 0).event_time_ms == 1
    with pytest.raises(InvalidTransactionError, match="nested deeper"):
        parse_transaction(b'{"eventTime":1,"x":[' + inner + b"]}", 1, 0, 0)


def test_a_number_of_1000_characters_is_accepted() -> None:
    tx = parse_transaction(b'{"eventTime":1,"x":-' + b"9" * 999 + b"}", 1, 0, 0)
    assert tx.fields["x"] == -int("9" * 999)


def test_details_quote_values_as_bounded_json() -> None:
    huge = "7" * 600_000
    with pytest.raises(InvalidTransactionError) as caught:
        parse_transaction(f'{{"eventTime":"{huge}"}}'.encode(), 1, 0, 0)
    assert caught.value.detail == 'eventTime is not an integer: "' + "7" * 63 + "\u2026"
    assert len(caught.value.detail.encode()) <= MAX_DETAIL_BYTES


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
def test_amount_of(value: object, amount: Decimal) -> None:
    assert amount_of({"paymentAmount": value}, "paymentAmount") == amount


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({}, SkipReason.MISSING),
        ({"paymentamount": 1}, SkipReason.MISSING),
        ({"paymentAmount": "abc"}, SkipReason.NON_NUMERIC),
        ({"paymentAmount": ""}, SkipReason.NON_NUMERIC),
        ({"paymentAmount": " 1"}, SkipReason.NON_NUMERIC),
        ({"paymentAmount": "1,5"}, SkipReason.NON_NUMERIC),
        ({"paymentAmount": "NaN"}, SkipReason.NON_NUMERIC),
        ({"paymentAmount": "\u0661"}, SkipReason.NON_NUMERIC),
        ({"paymentAmount": True}, SkipReason.NON_NUMERIC),
        ({"paymentAmount": None}, SkipReason.NON_NUMERIC),
        ({"paymentAmount": [1]}, SkipReason.NON_NUMERIC),
        ({"paymentAmount": {"v": 1}}, SkipReason.NON_NUMERIC),
        ({"paymentAmount": D("1E+100")}, SkipReason.OUT_OF_RANGE),
        ({"paymentAmount": "0." + "0" * 100 + "1"}, SkipReason.OUT_OF_RANGE),
    ],
)
def test_amount_of_says_why_there_is_none(fields: dict[str, object], reason: SkipReason) -> None:
    assert amount_of(fields, "paymentAmount") is reason
