"""The record value of a FraudRule generation comes from the rule model; the operator adds no rule logic."""

from __future__ import annotations

import json

import pytest

from fraudstream_operator.exceptions import InvalidSpecError
from fraudstream_operator.messages import rule_message
from fraudstream_rules.model import parse_rule_message

SPEC = {
    "groupingKeyNames": ["payerId", "beneficiaryId"],
    "aggregatorFunctionType": "SUM",
    "aggregateFieldName": "paymentAmount",
    "limitOperatorType": "GREATER",
    "limit": "200000.00",
    "windowMinutes": 1440,
}


def test_the_message_is_the_contracts_rule_json() -> None:
    value = rule_message("payments/big", 3, "uid-1", SPEC)

    decoded = json.loads(value)
    assert {k: decoded[k] for k in ("ruleId", "generation", "uid")} == {
        "ruleId": "payments/big",
        "generation": 3,
        "uid": "uid-1",
    }
    assert decoded["spec"]["limit"] == "200000"
    rule = parse_rule_message(value)
    assert rule is not None and rule.generation == 3


def test_equal_specs_give_equal_bytes() -> None:
    reordered = dict(reversed(list(SPEC.items()))) | {"limit": "200000", "state": "ACTIVE"}

    assert rule_message("a/x", 1, "u", SPEC) == rule_message("a/x", 1, "u", reordered)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"filters": [{"field": "paymentType", "operator": "IN", "value": "CSH"}]}, "spec.filters[0].value"),
        ({"limit": "1e200"}, "spec.limit is out of range"),
        ({"filters": [{"field": "paymentAmount", "operator": "GREATER", "value": 1.5}]}, "quote it"),
    ],
    ids=["in-needs-a-list", "limit-out-of-range", "float-filter-value"],
)
def test_what_the_api_server_lets_through_is_refused_here(change: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidSpecError, match="spec is not a valid rule") as refused:
        rule_message("a/x", 1, "u", SPEC | change)

    assert message in str(refused.value)
