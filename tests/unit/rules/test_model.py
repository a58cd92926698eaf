"""Rule spec validation and normalization, filters, and the Rule JSON on the rules topic."""

from __future__ import annotations

from decimal import Decimal

import pytest

from fraudstream_rules.exceptions import InvalidRuleError, RejectedRuleMessageError
from fraudstream_rules.model import (
    AggregatorFunction,
    Filter,
    FilterOperator,
    LimitOperator,
    Rule,
    RuleSpec,
    RuleState,
    parse_rule_message,
    parse_spec,
)

from .spec_cases import NORMALIZED, REFUSED, spec

D = Decimal


@pytest.mark.parametrize(("raw", "attribute", "expected"), NORMALIZED)
def test_parse_spec_normalizes(raw: dict[str, object], attribute: str, expected: object) -> None:
    assert getattr(parse_spec(raw), attribute) == expected


@pytest.mark.parametrize(("raw", "message"), REFUSED)
def test_parse_spec_refuses(raw: object, message: str) -> None:
    with pytest.raises(InvalidRuleError) as caught:
        parse_spec(raw)
    assert str(caught.value) == message


def test_normalized_json_uses_contract_names_and_canonical_numbers() -> None:
    raw = spec(
        groupingKeyNames=["payerId", "beneficiaryId"],
        limit="200000.00",
        filters=[{"field": "paymentAmount", "operator": "IN", "value": ["1.50", 2, "CRD", None, False]}],
    )
    assert parse_spec(raw).to_json() == {
        "state": "ACTIVE",
        "groupingKeyNames": ["beneficiaryId", "payerId"],
        "aggregatorFunctionType": "SUM",
        "aggregateFieldName": "paymentAmount",
        "limitOperatorType": "GREATER",
        "limit": "200000",
        "windowMinutes": 5,
        "filters": [{"field": "paymentAmount", "operator": "IN", "value": ["1.5", "2", "CRD", None, False]}],
    }


@pytest.mark.parametrize(
    ("limit", "text"),
    [("200000.00", "200000"), ("0.10", "0.1"), ("-0.00", "0"), ("1e3", "1000"), ("1E-7", "0.0000001"), (12, "12")],
)
def test_limit_renders_without_exponent(limit: object, text: str) -> None:
    assert parse_spec(spec(limit=limit)).to_json()["limit"] == text


def test_count_json_omits_aggregate_field() -> None:
    assert "aggregateFieldName" not in parse_spec(spec(aggregatorFunctionType="COUNT")).to_json()


@pytest.mark.parametrize(
    "raw",
    [
        spec(),
        spec(state="PAUSE", aggregatorFunctionType="COUNT", limit="0.000001"),
        spec(filters=[{"field": "a", "operator": "NOT_IN", "value": ["007", "x", True]}]),
        spec(
            filters=[
                {"field": "a", "operator": "LESS_EQUAL", "value": -3},
                {"field": "b", "operator": "EQUAL", "value": None},
            ]
        ),
    ],
)
def test_spec_json_round_trips(raw: dict[str, object]) -> None:
    parsed = parse_spec(raw)
    assert parse_spec(parsed.to_json()) == parsed
    assert parse_spec(parsed.to_json()).to_json() == parsed.to_json()


@pytest.mark.parametrize(
    ("change", "keeps_window"),
    [
        ({"state": "PAUSE"}, True),
        ({"limit": "5"}, True),
        ({"limitOperatorType": "LESS"}, True),
        ({"windowMinutes": 60}, True),
        ({"aggregatorFunctionType": "MAX"}, True),
        ({"groupingKeyNames": ["payerId", "x"]}, False),
        ({"aggregateFieldName": "fee"}, False),
        ({"aggregatorFunctionType": "COUNT"}, False),  # COUNT has no aggregate field
        ({"filters": [{"field": "a", "operator": "EQUAL", "value": 1}]}, False),
        ({"groupingKeyNames": ["payerId"], "limit": "100.00"}, True),
    ],
)
def test_window_identity(change: dict[str, object], keeps_window: bool) -> None:
    before = parse_spec(spec())
    after = parse_spec({**spec(), **change})
    assert (before.window_identity() == after.window_identity()) is keeps_window


@pytest.mark.parametrize(
    ("flt", "fields", "matches"),
    [
        # missing fields never match, whatever the operator
        (Filter("t", FilterOperator.EQUAL, None), {}, False),
        (Filter("t", FilterOperator.NOT_EQUAL, "CRD"), {}, False),
        (Filter("t", FilterOperator.NOT_IN, ("CRD",)), {"u": "CRD"}, False),
        (Filter("t", FilterOperator.EQUAL, "CRD"), {"t": "CRD"}, True),
        (Filter("t", FilterOperator.EQUAL, "CRD"), {"t": "crd"}, False),
        (Filter("t", FilterOperator.NOT_EQUAL, "CRD"), {"t": "CSH"}, True),
        (Filter("t", FilterOperator.NOT_EQUAL, "CRD"), {"t": None}, True),
        (Filter("t", FilterOperator.EQUAL, None), {"t": None}, True),
        (Filter("t", FilterOperator.EQUAL, None), {"t": "null"}, False),
        (Filter("t", FilterOperator.EQUAL, True), {"t": True}, True),
        (Filter("t", FilterOperator.EQUAL, True), {"t": "true"}, False),
        (Filter("t", FilterOperator.EQUAL, True), {"t": 1}, False),
        # numbers compare as numbers, also when the transaction carries them as strings
        (Filter("a", FilterOperator.EQUAL, D("1.5")), {"a": D("1.50")}, True),
        (Filter("a", FilterOperator.EQUAL, D("1.5")), {"a": "1.50"}, True),
        (Filter("a", FilterOperator.EQUAL, D(7)), {"a": 7}, True),
        (Filter("a", FilterOperator.EQUAL, D(7)), {"a": "007"}, True),
        (Filter("a", FilterOperator.EQUAL, D(7)), {"a": "seven"}, False),
        (Filter("a", FilterOperator.NOT_EQUAL, D(7)), {"a": "seven"}, True),
        (Filter("a", FilterOperator.GREATER, D("0.1")), {"a": D("0.2")}, True),
        (Filter("a", FilterOperator.GREATER, D("0.1")), {"a": D("0.1")}, False),
        (Filter("a", FilterOperator.GREATER_EQUAL, D("0.1")), {"a": "0.10"}, True),
        (Filter("a", FilterOperator.LESS, D(0)), {"a": -1}, True),
        (Filter("a", FilterOperator.LESS_EQUAL, D(0)), {"a": D("0.0001")}, False),
        # ordering operators on non-numbers are false
        (Filter("a", FilterOperator.GREATER, D(0)), {"a": "abc"}, False),
        (Filter("a", FilterOperator.LESS, D(0)), {"a": True}, False),
        (Filter("a", FilterOperator.LESS, D(0)), {"a": None}, False),
        (Filter("a", FilterOperator.GREATER, D(0)), {"a": [1]}, False),
        (Filter("a", FilterOperator.LESS, D(0)), {"a": "NaN"}, False),
        # lists
        (Filter("t", FilterOperator.IN, ("CRD", "CSH")), {"t": "CSH"}, True),
        (Filter("t", FilterOperator.IN, ("CRD", "CSH")), {"t": "XXX"}, False),
        (Filter("t", FilterOperator.IN, (D(1), "x")), {"t": "1.0"}, True),
        (Filter("t", FilterOperator.NOT_IN, ("CRD", "CSH")), {"t": "XXX"}, True),
        (Filter("t", FilterOperator.NOT_IN, ("CRD", None)), {"t": None}, False),
        (Filter("t", FilterOperator.NOT_EQUAL, "x"), {"t": {"nested": 1}}, True),
    ],
)
def test_filter_matches(flt: Filter, fields: dict[str, object], matches: bool) -> None:
    assert flt.matches(fields) is matches


@pytest.mark.parametrize(
    ("operator", "left", "right", "holds"),
    [
        (LimitOperator.EQUAL, "0.30", "0.3", True),
        (LimitOperator.NOT_EQUAL, "0.30", "0.3", False),
        (LimitOperator.GREATER, "2", "1", True),
        (LimitOperator.GREATER_EQUAL, "1", "1.0", True),
        (LimitOperator.LESS, "1", "1", False),
        (LimitOperator.LESS_EQUAL, "-1", "0", True),
    ],
)
def test_limit_operator(operator: LimitOperator, left: str, right: str, holds: bool) -> None:
    assert operator.holds(D(left), D(right)) is holds


def test_spec_constructed_directly_is_normalized() -> None:
    direct = RuleSpec(
        RuleState.ACTIVE, ("b", "a", "b"), AggregatorFunction.COUNT, "ignored", LimitOperator.EQUAL, D(1), 1
    )
    assert (direct.grouping_key_names, direct.aggregate_field_name) == (("a", "b"), None)
    with pytest.raises(InvalidRuleError, match="aggregateFieldName is required"):
        RuleSpec(RuleState.ACTIVE, ("a",), AggregatorFunction.SUM, None, LimitOperator.EQUAL, D(1), 1)


RULE = Rule("fraud/big-spender", 3, "0b7c-uid", parse_spec(spec(groupingKeyNames=["payerId", "beneficiaryId"])))


def test_rule_json_shape_and_round_trip() -> None:
    assert RULE.to_json() == {
        "formatVersion": 1,
        "ruleId": "fraud/big-spender",
        "generation": 3,
        "uid": "0b7c-uid",
        "spec": RULE.spec.to_json(),
    }
    assert Rule.from_json(RULE.to_json()) == RULE
    assert parse_rule_message(RULE.to_message_value()) == RULE


def test_rule_message_is_canonical() -> None:
    value = RULE.to_message_value()
    assert value.startswith(b'{"formatVersion":1,"generation":3,"ruleId":"fraud/big-spender","spec":{')
    assert b" " not in value
    assert Rule.from_json(RULE.to_json()).to_message_value() == value


@pytest.mark.parametrize(
    ("value", "reason", "message"),
    [
        (b"", "unparseable", "rule message is empty (a deletion is a null value, not an empty one)"),
        (b"{not json", "unparseable", "rule message is not usable JSON: not JSON: "),
        (b"\xff\xfe", "unparseable", "rule message is not usable JSON: not valid UTF-8 at byte 0"),
        (b"[1]", "invalid", "rule message must be a JSON object, got list [1]"),
        (
            b'{"generation":1,"uid":"u","spec":{}}',
            "invalid",
            "rule message ruleId must be a non-empty string, got None",
        ),
        (
            b'{"ruleId":"a/b","generation":-1,"uid":"u","spec":{}}',
            "invalid",
            "rule message generation must be a non-negative integer, got -1",
        ),
        (
            b'{"ruleId":"a/b","generation":true,"uid":"u","spec":{}}',
            "invalid",
            "rule message generation must be a non-negative integer, got True",
        ),
        (
            b'{"ruleId":"a/b","generation":1,"uid":"","spec":{}}',
            "invalid",
            "rule message uid must be a non-empty string, got ''",
        ),
        (b'{"ruleId":"a/b","generation":1,"uid":"u"}', "invalid", "spec must be an object, got None"),
        (b'{"ruleId":"a/b","generation":1,"uid":"u","spec":{}}', "invalid", "spec.groupingKeyNames is required"),
        (
            b'{"ruleId":"a/b","generation":1,"uid":"u","spec":{"limit":NaN}}',
            "unparseable",
            "rule message is not usable JSON: NaN is not a JSON number",
        ),
        (
            b'{"formatVersion":0,"ruleId":"a/b","generation":1,"uid":"u","spec":{}}',
            "invalid",
            "rule message formatVersion must be a positive integer, got 0",
        ),
        (
            b'{"formatVersion":"1","ruleId":"a/b","generation":1,"uid":"u","spec":{}}',
            "invalid",
            "rule message formatVersion must be a positive integer, got '1'",
        ),
        (
            b'{"formatVersion":3,"ruleId":"a/b","generation":1,"uid":"u","spec":{"future":"field"}}',
            "unsupported-version",
            "rule message formatVersion 3 is newer than this reader's 2",
        ),
    ],
)
def test_parse_rule_message_refuses(value: bytes, reason: str, message: str) -> None:
    with pytest.raises(RejectedRuleMessageError) as caught:
        parse_rule_message(value)
    assert caught.value.reason == reason
    assert str(caught.value).startswith(message)


def test_a_message_without_format_version_is_version_1() -> None:
    value = RULE.to_message_value().replace(b'"formatVersion":1,', b"")
    assert b"formatVersion" not in value
    assert parse_rule_message(value) == RULE


def test_tombstone_is_none() -> None:
    assert parse_rule_message(None) is None


def test_rule_message_with_json_decimal_limit() -> None:
    value = (
        b'{"ruleId":"a/b","generation":1,"uid":"u","spec":'
        + b'{"groupingKeyNames":["p"],"aggregatorFunctionType":"COUNT","limitOperatorType":"EQUAL",'
        + b'"limit":0.10,"windowMinutes":1}}'
    )
    rule = parse_rule_message(value)
    assert rule is not None and rule.spec.limit == D("0.1")


def test_window_precision_is_parsed_kept_in_the_window_identity_and_written_as_format_2() -> None:
    bucketed = parse_spec(spec(windowMinutes=43200, windowPrecisionSeconds=3600))
    assert (bucketed.window_precision_seconds, bucketed.precision_ms) == (3600, 3_600_000)
    assert bucketed.to_json()["windowPrecisionSeconds"] == 3600
    assert parse_spec(bucketed.to_json()) == bucketed
    assert bucketed.window_identity() != parse_spec(spec(windowMinutes=43200)).window_identity()
    rule = Rule("ns/long", 1, "u", bucketed)
    assert rule.to_json()["formatVersion"] == 2, "readers of version 1 refuse what they cannot honour"
    assert parse_rule_message(rule.to_message_value()) == rule
    assert Rule("ns/exact", 1, "u", parse_spec(spec())).to_json()["formatVersion"] == 1
    assert "windowPrecisionSeconds" not in parse_spec(spec()).to_json()
