"""Fuzzing both cores' parse-and-evaluate paths (`Engine.on_record`, `Engine.onRecord`) with hostile records.

Whatever the record (arbitrary bytes, invalid UTF-8, JSON that is not an object, nesting up to and beyond the limit,
strings of megabytes, numbers of thousands of digits, lone surrogates), no exception escapes either core and both
give the same outcome: the same rejection class, and for everything but a JSON syntax error (whose detail is each
parser's own message) the same detail; the same alerts, late groups, skips and order when evaluated.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraudstream_rules.dead_letters import MAX_DETAIL_BYTES
from fraudstream_rules.json_values import MAX_NESTING_DEPTH, MAX_NUMBER_CHARS
from fraudstream_rules.model import Rule, parse_spec

from .jvm_engine import JvmEngine, JvmOutcome
from .test_engine_vs_oracle import jvm_outcomes, python_outcomes

T0_MS = 1_700_000_000_000
RULES = [
    Rule(
        f"fuzz/{aggregator.lower()}-{field}",
        1,
        "u",
        parse_spec(
            {
                "groupingKeyNames": keys,
                "aggregatorFunctionType": aggregator,
                "aggregateFieldName": field,
                "limitOperatorType": "GREATER_EQUAL",
                "limit": "-1e50",
                "windowMinutes": 10,
            }
        ),
    )
    for keys, aggregator, field in [
        (["payerId"], "SUM", "paymentAmount"),
        (["payerId", "beneficiaryId"], "MAX", "paymentAmount"),
        (["beneficiaryId"], "AVG", "x"),
        (["paymentType"], "MIN", "paymentAmount"),
    ]
]
FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


def same_outcomes(jvm: JvmEngine, values: Sequence[bytes]) -> None:
    """Both cores evaluate `values` (after RULES, one record each, in order) alike; no exception escapes."""
    expected = python_outcomes(RULES, list(values), lateness_ms=60_000)
    actual = jvm_outcomes(jvm, RULES, list(values), lateness_ms=60_000)
    for value, want, got in zip(values, expected, actual, strict=True):
        assert comparable(got) == comparable(want), f"record {value[:200]!r}"
        for outcome in (want, got):
            if outcome.rejection is not None:
                assert len(outcome.rejection[1].encode()) <= MAX_DETAIL_BYTES
            assert all(len(detail.encode()) <= MAX_DETAIL_BYTES for _, detail in outcome.late)


def comparable(outcome: JvmOutcome) -> JvmOutcome:
    """The outcome with a JSON syntax error's detail (each parser's own words) reduced to its class."""
    if outcome.rejection is not None and outcome.rejection[1].startswith("not JSON:"):
        return JvmOutcome((), rejection=(outcome.rejection[0], "not JSON: ..."))
    return outcome


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.decimals(allow_nan=False, allow_infinity=False)
    .map(str)
    .map(lambda text: json.loads(text) if "E" not in text else text)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
FIELD_NAMES = st.sampled_from(
    ["eventTime", "payerId", "beneficiaryId", "paymentAmount", "paymentType", "x", "transactionId"]
)


@st.composite
def transaction_like(draw: st.DrawFn) -> bytes:
    """An object that is mostly a transaction, with fields replaced by anything JSON."""
    fields: dict[str, object] = {
        "transactionId": draw(st.sampled_from(["t1", "t2", 7, None])),
        "eventTime": draw(st.sampled_from([T0_MS, T0_MS - 3_600_000, T0_MS + 10**6, T0_MS - 10**8])),
        "payerId": draw(st.sampled_from(["p1", "p2", 1, "\u00e9"])),
        "beneficiaryId": draw(st.sampled_from(["b1", 2, "2"])),
        "paymentAmount": draw(st.sampled_from(["1.5", 3, "abc", None, "1e200"])),
        "paymentType": draw(st.sampled_from(["CRD", "CSH"])),
    }
    for _ in range(draw(st.integers(0, 3))):
        fields[draw(FIELD_NAMES)] = draw(json_values)
    return json.dumps(fields, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")


@st.composite
def corrupted(draw: st.DrawFn) -> bytes:
    """A transaction-like record with bytes cut, inserted or replaced (often invalid UTF-8 or JSON)."""
    data = bytearray(draw(transaction_like()))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["insert", "cut", "replace"]))
        chunk = draw(
            st.binary(min_size=1, max_size=4) | st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\\ud800"])
        )
        if action == "insert":
            data[at:at] = chunk
        elif action == "cut":
            del data[at : at + len(chunk)]
        else:
            data[at : at + len(chunk)] = chunk
    return bytes(data)


@FUZZ
@given(st.lists(st.binary(max_size=64), min_size=1, max_size=8))
def test_arbitrary_bytes(jvm_engine: JvmEngine, values: list[bytes]) -> None:
    same_outcomes(jvm_engine, values)


@FUZZ
@given(st.lists(transaction_like() | corrupted(), min_size=1, max_size=8))
def test_transactions_with_any_json_in_any_field_and_corrupted_bytes(
    jvm_engine: JvmEngine, values: list[bytes]
) -> None:
    same_outcomes(jvm_engine, values)


@FUZZ
@given(st.lists(json_values.map(lambda value: json.dumps(value).encode()), min_size=1, max_size=8))
def test_json_that_is_mostly_not_an_object(jvm_engine: JvmEngine, values: list[bytes]) -> None:
    same_outcomes(jvm_engine, values)


def nested(depth: int, opener: str = "[", closer: str = "]") -> str:
    return opener * depth + "1" + closer * depth


@pytest.mark.parametrize(
    "depth", [MAX_NESTING_DEPTH - 2, MAX_NESTING_DEPTH - 1, MAX_NESTING_DEPTH, MAX_NESTING_DEPTH + 1, 1_000, 100_000]
)
@pytest.mark.parametrize("field", ["x", "payerId", "paymentAmount"])
def test_nesting_up_to_and_beyond_the_limit(jvm_engine: JvmEngine, depth: int, field: str) -> None:
    value = f'{{"eventTime":{T0_MS},"payerId":"p","{field}":{nested(depth)}}}'.encode()
    same_outcomes(jvm_engine, [value, nested(depth).encode(), ('{"a":' * depth + "1" + "}" * depth).encode()])


DEEP_OBJECT = nested(MAX_NESTING_DEPTH, '{"a":', "}")


@pytest.mark.parametrize(
    "value",
    [
        # A value nested too deep that a later duplicate key replaces: the JVM's streaming parser refuses it as it
        # reads, so Python's must too.
        f'{{"eventTime":{T0_MS},"payerId":"p","x":{nested(MAX_NESTING_DEPTH)},"x":0}}',
        f'{{"eventTime":{T0_MS},"payerId":{DEEP_OBJECT},"payerId":"p"}}',
        f'{{"eventTime":{T0_MS},"payerId":"p","x":{nested(MAX_NESTING_DEPTH - 1)},"x":0}}',
        # Brackets inside strings, escaped quotes among them, do not nest.
        f'{{"eventTime":{T0_MS},"payerId":"{"[" * 100}\\"{"{" * 100}","x":0}}',
        # Field names longer than Jackson's default limit (50 000): any length a record can hold is a name.
        f'{{"eventTime":{T0_MS},"payerId":"p","paymentAmount":1,"{"n" * 50_001}":1}}',
        f'{{"eventTime":{T0_MS},"payerId":"p","paymentAmount":1,"{"n" * 1_000_000}":1}}',
    ],
    ids=[
        "deep-then-replaced",
        "deep-object-then-replaced",
        "deepest-then-replaced",
        "brackets-in-strings",
        "name-50001",
        "name-1000000",
    ],
)
def test_what_the_jvms_streaming_parser_sees_the_python_one_sees(jvm_engine: JvmEngine, value: str) -> None:
    same_outcomes(jvm_engine, [value.encode(), value.encode()])


@pytest.mark.parametrize(
    "digits", [MAX_NUMBER_CHARS - 1, MAX_NUMBER_CHARS, MAX_NUMBER_CHARS + 1, 4_300, 4_301, 10_000, 1_000_000]
)
@pytest.mark.parametrize("field", ["eventTime", "payerId", "paymentAmount", "x"])
def test_numbers_of_thousands_of_digits(jvm_engine: JvmEngine, digits: int, field: str) -> None:
    number = "9" * digits
    values = [
        f'{{"eventTime":{T0_MS},"payerId":"p","paymentType":"CRD","{field}":{number}}}',
        f'{{"eventTime":{T0_MS},"payerId":"p","paymentType":"CRD","{field}":-0.{number}}}',
        f'{{"eventTime":{T0_MS},"payerId":"p","paymentType":"CRD","{field}":1e{number[:12]}}}',
        f'{{"eventTime":{T0_MS},"payerId":"p","paymentType":"CRD","{field}":"{number}"}}',
    ]
    same_outcomes(jvm_engine, [value.encode() for value in values])


@pytest.mark.parametrize("size", [1_000_000, 3_000_000])
@pytest.mark.parametrize("field", ["eventTime", "payerId", "transactionId", "x", "paymentType"])
def test_strings_of_megabytes(jvm_engine: JvmEngine, size: int, field: str) -> None:
    text = ("\u00e9\U0001d11e" + "a" * 98) * (size // 100)
    values = [
        json.dumps({"eventTime": T0_MS, "payerId": "p", "paymentAmount": "2", field: text}).encode(),
        json.dumps(
            {"eventTime": T0_MS, "payerId": "p", "paymentAmount": "2", field: text}, ensure_ascii=False
        ).encode(),
        json.dumps({"eventTime": T0_MS - 10**8, "payerId": "p", "paymentAmount": "2", field: text}).encode(),
    ]
    same_outcomes(jvm_engine, values)


@pytest.mark.parametrize(
    "value",
    [
        b'{"eventTime":1700000000000,"payerId":"\\ud800","paymentAmount":1}',
        b'{"eventTime":1700000000000,"payerId":"\\udfff\\ud800","paymentAmount":1,"x":"\\ud834\\udd1e"}',
        b'{"eventTime":1700000000000,"payerId":{"\\ud800":["\\udc00"]},"paymentAmount":1}',
        b'{"eventTime":"\\ud800","payerId":"p"}',
        b'{"\\ud800":1,"eventTime":1700000000000,"payerId":"p","paymentAmount":"\\ud800"}',
    ],
)
def test_lone_surrogates(jvm_engine: JvmEngine, value: bytes) -> None:
    same_outcomes(jvm_engine, [value, value])
