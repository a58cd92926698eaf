"""What the driver reads of the JVM evaluator's progress from the metrics each evaluating JVM serves."""

from __future__ import annotations

from fraudstream_detector.config import parse_config
from fraudstream_detector.jvm_evaluator import PORT_CONF, evaluated_positions, evaluator_conf

# As Prometheus' Java client writes it (EvaluatorMetrics.java); the JVM side is checked end to end by the executor test.
EXPOSITION = """\
# HELP fraud_evaluated_offset The last offset evaluated in each transactions partition
# TYPE fraud_evaluated_offset gauge
fraud_evaluated_offset{partition="0"} 41.0
fraud_evaluated_offset{partition="3"} 7.0
# HELP fraud_newest_evaluated_timestamp_seconds The Kafka timestamp of the newest transaction evaluated
# TYPE fraud_newest_evaluated_timestamp_seconds gauge
fraud_newest_evaluated_timestamp_seconds 1.700000000123E9
# HELP fraud_alerts_total Alerts written to the alerts topic
# TYPE fraud_alerts_total counter
fraud_alerts_total{rule_id="ns/a"} 2.0
"""


def test_positions_and_the_newest_timestamp_are_read_from_the_exposition() -> None:
    assert evaluated_positions(EXPOSITION) == ({0: 41, 3: 7}, 1_700_000_000_123)


def test_a_jvm_that_evaluated_nothing_reports_no_position() -> None:
    idle = "# TYPE fraud_newest_evaluated_timestamp_seconds gauge\nfraud_newest_evaluated_timestamp_seconds 0.0\n"
    assert evaluated_positions(idle) == ({}, None)


def test_the_spark_configuration_names_the_port_every_evaluating_jvm_serves_on() -> None:
    cfg = parse_config(["--evaluator-metrics-port", "9300"], env={})
    assert evaluator_conf(cfg) == {PORT_CONF: "9300"}
    assert parse_config([], env={}).evaluator_metrics_port == 9111
