"""The API server itself refuses invalid FraudRules (schema + CEL), with a message that names the problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from fraudstream_localstack.operator_component import EXAMPLES_DIR
from tests.integration.operator.harness import BASE_SPEC, FraudRules

pytestmark = pytest.mark.integration

COUNT_SPEC = {k: v for k, v in BASE_SPEC.items() if k != "aggregateFieldName"} | {"aggregatorFunctionType": "COUNT"}


def without(key: str) -> dict[str, Any]:
    return {k: v for k, v in BASE_SPEC.items() if k != key}


INVALID: list[tuple[str, dict[str, Any], str]] = [
    (
        "sum-without-field",
        without("aggregateFieldName"),
        "spec.aggregateFieldName: Required value: "
        "aggregateFieldName is required unless aggregatorFunctionType is COUNT",
    ),
    ("empty-aggregate-field", {**BASE_SPEC, "aggregateFieldName": ""}, "aggregateFieldName must not be empty"),
    (
        "unknown-aggregator",
        {**BASE_SPEC, "aggregatorFunctionType": "MEDIAN"},
        'spec.aggregatorFunctionType: Unsupported value: "MEDIAN": supported values: "SUM", "COUNT", "AVG"',
    ),
    ("unknown-state", {**BASE_SPEC, "state": "OFF"}, 'spec.state: Unsupported value: "OFF"'),
    (
        "unknown-limit-operator",
        {**BASE_SPEC, "limitOperatorType": "BIGGER"},
        'spec.limitOperatorType: Unsupported value: "BIGGER"',
    ),
    (
        "limit-not-a-number",
        {**BASE_SPEC, "limit": "a lot"},
        'limit must be an integer or a decimal number written as a string, e.g. "200000" or "0.5"',
    ),
    ("limit-with-comma", {**BASE_SPEC, "limit": "200,000"}, "limit must be an integer or a decimal number"),
    ("limit-as-float", {**BASE_SPEC, "limit": 0.5}, "spec.limit in body must be of type integer,string"),
    ("window-zero", {**BASE_SPEC, "windowMinutes": 0}, "windowMinutes must be between 1 and 527040 (366 days)"),
    ("window-too-long", {**BASE_SPEC, "windowMinutes": 527041}, "windowMinutes must be between 1 and 527040"),
    (
        "precision-not-dividing",
        {**BASE_SPEC, "windowMinutes": 60, "windowPrecisionSeconds": 7},
        "windowPrecisionSeconds must divide windowMinutes * 60",
    ),
    ("precision-zero", {**BASE_SPEC, "windowPrecisionSeconds": 0}, "windowPrecisionSeconds must be between 1 and"),
    (
        "precision-as-string",
        {**BASE_SPEC, "windowPrecisionSeconds": "60"},
        "spec.windowPrecisionSeconds in body must be of type integer",
    ),
    ("no-grouping-keys", {**BASE_SPEC, "groupingKeyNames": []}, "groupingKeyNames must name at least one field"),
    (
        "duplicate-grouping-keys",
        {**BASE_SPEC, "groupingKeyNames": ["payerId", "beneficiaryId", "payerId"]},
        "groupingKeyNames must not name the same field twice",
    ),
    (
        "empty-grouping-key",
        {**BASE_SPEC, "groupingKeyNames": ["payerId", ""]},
        'spec.groupingKeyNames[1]: Invalid value: "string": groupingKeyNames must not contain an empty field name',
    ),
    (
        "unknown-filter-operator",
        {**BASE_SPEC, "filters": [{"field": "paymentType", "operator": "LIKE", "value": "C%"}]},
        'spec.filters[0].operator: Unsupported value: "LIKE"',
    ),
    (
        "filter-without-value",
        {**BASE_SPEC, "filters": [{"field": "paymentType", "operator": "EQUAL"}]},
        "spec.filters[0].value: Required value",
    ),
    (
        "filter-with-empty-field",
        {**BASE_SPEC, "filters": [{"field": "", "operator": "EQUAL", "value": "CSH"}]},
        "filter field must not be empty",
    ),
    ("missing-window", without("windowMinutes"), "spec.windowMinutes: Required value"),
    ("missing-grouping", without("groupingKeyNames"), "spec.groupingKeyNames: Required value"),
]


@pytest.mark.parametrize(("name", "spec", "message"), INVALID, ids=[case[0] for case in INVALID])
def test_the_api_server_refuses_an_invalid_spec(
    rules: FraudRules, name: str, spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(client.ApiException) as refused:
        rules.create(name, spec)

    assert refused.value.status == 422
    assert refused.value.body is not None and message in json.loads(refused.value.body)["message"]
    assert rules.get(name) is None


@pytest.mark.parametrize(
    "spec",
    [
        COUNT_SPEC,
        COUNT_SPEC | {"aggregateFieldName": "paymentAmount"},
        {**BASE_SPEC, "limit": "-0.5"},
        {**BASE_SPEC, "limit": "1e6", "windowMinutes": 527040},
        {**BASE_SPEC, "filters": [{"field": "paymentType", "operator": "IN", "value": ["CSH", "CRD"]}]},
        {**BASE_SPEC, "filters": [{"field": "flagged", "operator": "EQUAL", "value": None}]},
        {**BASE_SPEC, "windowMinutes": 43200, "windowPrecisionSeconds": 3600},
        {**BASE_SPEC, "windowMinutes": 527040, "windowPrecisionSeconds": 31622400},
    ],
    ids=[
        "count",
        "count-with-field",
        "negative-decimal",
        "exponent-and-max-window",
        "in-list",
        "null-value",
        "hourly-buckets",
        "one-bucket",
    ],
)
def test_the_api_server_accepts_valid_edge_specs(rules: FraudRules, spec: dict[str, Any]) -> None:
    created = rules.create("edge", spec)

    assert created["spec"]["state"] == "ACTIVE", "state defaults to ACTIVE"


@pytest.mark.parametrize("path", sorted(EXAMPLES_DIR.glob("*.yaml")), ids=lambda p: Path(p).stem)
def test_every_example_rule_is_accepted(rules: FraudRules, path: Path) -> None:
    manifest = yaml.safe_load(path.read_text())

    created = rules.create(manifest["metadata"]["name"], manifest["spec"])

    assert created["spec"] == {"state": "ACTIVE", **manifest["spec"]}
