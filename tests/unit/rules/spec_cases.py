"""FraudRule specs the rule-model tests feed both cores: accepted ones with what they normalize to, refused ones with
Python's message (test_model checks the Python core against these, test_model_twin the JVM core against Python)."""

from __future__ import annotations

from decimal import Decimal
from typing import Final

from fraudstream_rules.dead_letters import preview
from fraudstream_rules.model import Filter, FilterOperator, RuleState

D = Decimal


def spec(**overrides: object) -> dict[str, object]:
    raw: dict[str, object] = {
        "groupingKeyNames": ["payerId"],
        "aggregatorFunctionType": "SUM",
        "aggregateFieldName": "paymentAmount",
        "limitOperatorType": "GREATER",
        "limit": "100",
        "windowMinutes": 5,
    }
    for key, value in overrides.items():
        if value is ...:
            raw.pop(key, None)
        else:
            raw[key] = value
    return raw


# Filter numbers whose normalized text is longer than a JSON number literal may be (1000 characters).
LONG_TEXT: Final = "9" * 993 + "e999999"  # 1000 characters, normalized to 1003: 9.99...E+1000991
LONG_INTEGER: Final = int("1" * 995 + "000")  # normalized to 1.11...E+997, 1001 characters
OUT_OF_RANGE: Final = (
    "spec.filters[0].value{index} is out of range (written out, at most 1000 characters with an exponent within"
    " +-999999999): {shown}"
)


NORMALIZED: Final[list[tuple[dict[str, object], str, object]]] = [
    (spec(), "state", RuleState.ACTIVE),
    (spec(state=None), "state", RuleState.ACTIVE),
    (spec(state="PAUSE"), "state", RuleState.PAUSE),
    (spec(groupingKeyNames=["payerId", "beneficiaryId"]), "grouping_key_names", ("beneficiaryId", "payerId")),
    (spec(aggregatorFunctionType="COUNT"), "aggregate_field_name", None),
    (spec(aggregatorFunctionType="COUNT", aggregateFieldName=...), "aggregate_field_name", None),
    (spec(limit=200), "limit", D(200)),
    (spec(limit="200000.00"), "limit", D("200000")),
    (spec(limit="-0.5"), "limit", D("-0.5")),
    (spec(limit="1e3"), "limit", D(1000)),
    (spec(limit=D("0.30")), "limit", D("0.3")),
    (spec(windowMinutes=1), "window_ms", 60_000),
    (spec(windowMinutes=527_040), "window_minutes", 527_040),
    (spec(filters=None), "filters", ()),
    (spec(filters=[]), "filters", ()),
    (
        spec(filters=[{"field": "paymentType", "operator": "EQUAL", "value": "CRD"}]),
        "filters",
        (Filter("paymentType", FilterOperator.EQUAL, "CRD"),),
    ),
    (
        spec(filters=[{"field": "paymentAmount", "operator": "GREATER", "value": "1.50"}]),
        "filters",
        (Filter("paymentAmount", FilterOperator.GREATER, D("1.5")),),
    ),
    (
        spec(filters=[{"field": "paymentAmount", "operator": "GREATER", "value": "1e999999999"}]),
        "filters",
        (Filter("paymentAmount", FilterOperator.GREATER, D("1e999999999")),),
    ),
    (
        spec(filters=[{"field": "x", "operator": "EQUAL", "value": "0e9999"}]),
        "filters",
        (Filter("x", FilterOperator.EQUAL, D(0)),),
    ),
    (
        spec(filters=[{"field": "x", "operator": "IN", "value": ["a", 1, True, None]}]),
        "filters",
        (Filter("x", FilterOperator.IN, ("a", D(1), True, None)),),
    ),
    (
        spec(
            filters=[
                {"field": "b", "operator": "EQUAL", "value": "x"},
                {"field": "a", "operator": "EQUAL", "value": 1},
            ]
        ),
        "filters",
        (Filter("b", FilterOperator.EQUAL, "x"), Filter("a", FilterOperator.EQUAL, D(1))),
    ),
]
"""(raw spec, RuleSpec attribute, its value after parsing)."""

REFUSED: Final[list[tuple[object, str]]] = [
    (["not", "a", "dict"], 'spec must be an object, got array ["not","a","dict"]'),
    (spec(windowMinute=5), "spec.windowMinute is not a FraudRule spec field"),
    (spec(state="RUNNING"), 'spec.state must be one of ACTIVE, PAUSE, got "RUNNING"'),
    (spec(groupingKeyNames=...), "spec.groupingKeyNames is required"),
    (spec(groupingKeyNames=[]), "spec.groupingKeyNames must be a non-empty list of field names, got array []"),
    (
        spec(groupingKeyNames="payerId"),
        'spec.groupingKeyNames must be a non-empty list of field names, got "payerId"',
    ),
    (spec(groupingKeyNames=["payerId", ""]), 'spec.groupingKeyNames[1] must be a non-empty string, got ""'),
    (spec(groupingKeyNames=["payerId", 3]), "spec.groupingKeyNames[1] must be a non-empty string, got 3"),
    (spec(groupingKeyNames=["a", "b", "a"]), 'spec.groupingKeyNames names "a" more than once'),
    (spec(aggregatorFunctionType=...), "spec.aggregatorFunctionType is required"),
    (
        spec(aggregatorFunctionType="MEDIAN"),
        'spec.aggregatorFunctionType must be one of SUM, COUNT, AVG, MIN, MAX, got "MEDIAN"',
    ),
    (
        spec(aggregatorFunctionType="sum"),
        'spec.aggregatorFunctionType must be one of SUM, COUNT, AVG, MIN, MAX, got "sum"',
    ),
    (spec(aggregateFieldName=...), "spec.aggregateFieldName is required unless aggregatorFunctionType is COUNT"),
    (spec(aggregateFieldName=""), 'spec.aggregateFieldName must be a non-empty string, got ""'),
    (spec(aggregateFieldName=7), "spec.aggregateFieldName must be a non-empty string, got 7"),
    (spec(limitOperatorType=...), "spec.limitOperatorType is required"),
    (
        spec(limitOperatorType="IN"),
        'spec.limitOperatorType must be one of EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL, got "IN"',
    ),
    (spec(limit=...), "spec.limit is required"),
    (spec(limit=0.5), 'spec.limit must be an integer or a decimal string, got the float 0.5; quote it: "0.5"'),
    (spec(limit=True), "spec.limit must be an integer or a decimal string, got true"),
    (spec(limit="NaN"), 'spec.limit must be an integer or a decimal string, got "NaN"'),
    (spec(limit="Infinity"), 'spec.limit must be an integer or a decimal string, got "Infinity"'),
    (spec(limit="1,000"), 'spec.limit must be an integer or a decimal string, got "1,000"'),
    (spec(limit=" 5"), 'spec.limit must be an integer or a decimal string, got " 5"'),
    (spec(limit=[5]), "spec.limit must be an integer or a decimal string, got array [5]"),
    (spec(limit="1e200"), 'spec.limit is out of range (at most 100 digits each side of the point): "1e200"'),
    # A filter number whose normalized text would carry a 10-digit exponent: no core could read it back.
    (
        spec(filters=[{"field": "paymentAmount", "operator": "GREATER", "value": "10e999999999"}]),
        OUT_OF_RANGE.format(index="", shown='"10e999999999"'),
    ),
    (
        spec(filters=[{"field": "paymentAmount", "operator": "LESS", "value": "0.1e-999999999"}]),
        OUT_OF_RANGE.format(index="", shown='"0.1e-999999999"'),
    ),
    # ... or one longer than a number literal may be: normalizing adds a point, a sign, an exponent digit.
    (
        spec(filters=[{"field": "paymentAmount", "operator": "LESS", "value": LONG_TEXT}]),
        OUT_OF_RANGE.format(index="", shown=preview(LONG_TEXT)),
    ),
    (
        spec(filters=[{"field": "x", "operator": "EQUAL", "value": LONG_INTEGER}]),
        OUT_OF_RANGE.format(index="", shown=preview(LONG_INTEGER)),
    ),
    (
        spec(filters=[{"field": "x", "operator": "IN", "value": ["a", D("12e999999999")]}]),
        OUT_OF_RANGE.format(index="[1]", shown="1.2E+1000000000"),
    ),
    (spec(windowMinutes=...), "spec.windowMinutes is required"),
    (spec(windowMinutes=0), "spec.windowMinutes must be at least 1, got 0"),
    (spec(windowMinutes=-3), "spec.windowMinutes must be at least 1, got -3"),
    (spec(windowMinutes=527_041), "spec.windowMinutes must be at most 527040 (366 days), got 527041"),
    (spec(windowMinutes="5"), 'spec.windowMinutes must be an integer, got "5"'),
    (spec(windowMinutes=5.0), "spec.windowMinutes must be an integer, got number 5.0"),
    (spec(windowMinutes=True), "spec.windowMinutes must be an integer, got true"),
    (spec(filters={"field": "a"}), 'spec.filters must be a list, got object {"field":"a"}'),
    (spec(filters=["a"]), 'spec.filters[0] must be an object with field, operator and value, got "a"'),
    (
        spec(filters=[{"field": "a", "operator": "EQUAL", "value": 1, "negate": True}]),
        "spec.filters[0].negate is not a filter field (expected field, operator, value)",
    ),
    (
        spec(filters=[{"operator": "EQUAL", "value": 1}]),
        "spec.filters[0].field must be a non-empty string, got null",
    ),
    (
        spec(filters=[{"field": "a", "operator": "LIKE", "value": 1}]),
        "spec.filters[0].operator must be one of EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL,"
        ' IN, NOT_IN, got "LIKE"',
    ),
    (spec(filters=[{"field": "a", "operator": "EQUAL"}]), "spec.filters[0].value is required"),
    (
        spec(filters=[{"field": "a", "operator": "IN", "value": []}]),
        "spec.filters[0].value must be a non-empty list for operator IN, got array []",
    ),
    (
        spec(filters=[{"field": "a", "operator": "NOT_IN", "value": "x"}]),
        'spec.filters[0].value must be a non-empty list for operator NOT_IN, got "x"',
    ),
    (
        spec(filters=[{"field": "a", "operator": "IN", "value": ["x", 0.5]}]),
        'spec.filters[0].value[1] must be a string, integer, boolean or null, got the float 0.5; quote it: "0.5"',
    ),
    (
        spec(filters=[{"field": "a", "operator": "EQUAL", "value": ["x"]}]),
        'spec.filters[0].value must be a single value for operator EQUAL, got array ["x"]',
    ),
    (
        spec(filters=[{"field": "a", "operator": "GREATER", "value": "abc"}]),
        'spec.filters[0].value must be a number for operator GREATER, got "abc"',
    ),
    (
        spec(filters=[{"field": "a", "operator": "EQUAL", "value": {"x": 1}}]),
        'spec.filters[0].value must be a single value for operator EQUAL, got object {"x":1}',
    ),
    (spec(windowPrecisionSeconds="60"), 'spec.windowPrecisionSeconds must be an integer, got "60"'),
    (spec(windowPrecisionSeconds=0), "spec.windowPrecisionSeconds must be at least 1, got 0"),
    (
        spec(windowMinutes=60, windowPrecisionSeconds=7),
        "spec.windowPrecisionSeconds must divide windowMinutes * 60 = 3600, got 7",
    ),
]
"""(raw spec, Python's InvalidRuleError message)."""
