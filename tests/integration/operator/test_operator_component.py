"""The operator as the local stack runs it: `python -m fraudstream_operator` as a process over all namespaces, and
`kubectl apply -f examples/rules/` leaves every example rule Ready with its message on the topic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fraudstream_kafka.settings import Topics
from fraudstream_localstack.operator_component import EXAMPLES_DIR, OperatorComponent, is_ready, kubectl
from fraudstream_localstack.stack import LocalStack, StackConfig
from tests.integration.operator.harness import http_get, latest_by_key, read_records

pytestmark = pytest.mark.integration


def test_the_stack_runs_the_operator_and_every_example_rule_gets_ready(tmp_path: Path, unique_topics: Topics) -> None:
    config = StackConfig.isolated(tmp_path, topics=unique_topics)
    component = OperatorComponent()
    stack = LocalStack(config, [component])
    try:
        stack.start()
        listed = json.loads(kubectl(stack.kube.kubeconfig, "get", "-f", str(EXAMPLES_DIR), "-o", "json"))["items"]
        latest = latest_by_key(read_records(stack.kafka_settings, unique_topics.rules))
        metrics = http_get(stack.env()["OPERATOR_METRICS_URL"])
    finally:
        stack.stop()

    assert len(listed) == len(list(EXAMPLES_DIR.glob("*.yaml"))) >= 8
    assert all(is_ready(item) for item in listed)
    for item in listed:
        record = latest[f"default/{item['metadata']['name']}"]
        assert record.rule is not None
        assert (record.rule["generation"], record.rule["uid"]) == (1, item["metadata"]["uid"])
        assert record.offset == item["status"]["published"]["offset"]
    aggregators = {item["spec"]["aggregatorFunctionType"] for item in listed}
    assert aggregators == {"SUM", "COUNT", "AVG", "MIN", "MAX"}
    assert f"fraudstream_operator_rules_managed {float(len(listed))}" in metrics
