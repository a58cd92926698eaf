from __future__ import annotations

import pytest

from bench.run import _security_note


@pytest.mark.parametrize(
    ("result", "note"),
    [({}, ""), ({"kafka_security": "plaintext"}, ""), ({"kafka_security": "sasl_ssl"}, "[Kafka sasl_ssl]"),
     ({"kafka_security": "mtls"}, "[Kafka mtls]")],
)  # fmt: skip
def test_a_secured_run_is_marked_in_the_benchmarks_table(result: dict[str, object], note: str) -> None:
    assert _security_note(result) == note


@pytest.mark.parametrize(
    ("result", "note"),
    [({"target": "k8s"}, "[k8s-deploy: driver + executor pods]"),
     ({"target": "k8s", "chart_settings": ["detector.executor.memory=2g"]},
      "[k8s-deploy: driver + executor pods; detector.executor.memory=2g]"),
     ({"target": "k8s", "kafka_security": "plaintext", "chart_settings": []}, "[k8s-deploy: driver + executor pods]"),
     ({"target": "local", "chart_settings": []}, "")],
)  # fmt: skip
def test_a_deployed_run_and_its_chart_values_are_marked(result: dict[str, object], note: str) -> None:
    assert _security_note(result) == note
