from __future__ import annotations

import csv
from pathlib import Path

import pytest

from bench import run
from bench.run import _machine_note, _security_note
from bench.targets import LocalTarget
from fraudstream_localstack.kafka_security import KafkaSecurity


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


def test_a_finished_run_removes_the_stacks_stored_data_and_keeps_the_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = LocalTarget(tmp_path, tmp_path / "rules", [], KafkaSecurity.PLAINTEXT)
    stored = target.stored_data()
    data = tmp_path / "data"
    assert stored == [tmp_path / "checkpoint", data / "kafka" / "logs", data / "kube" / "etcd"]
    for path in stored:
        (path / "inner").mkdir(parents=True)
        (path / "inner" / "segment").write_bytes(b"x" * 1024)
    logs = [tmp_path / "data" / "kafka" / "kafka.log", tmp_path / "detector.log", tmp_path / "alerts.csv"]
    for log in logs:
        log.write_text("kept\n")
    run.remove_stored_data(stored)
    assert not any(path.exists() for path in stored)
    assert all(log.read_text() == "kept\n" for log in logs)
    assert "--keep-data keeps it" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("cpu", "note"),
    [(None, "2 CPU AMD EPYC, 24 GiB, speed 41.5"),
     ({"busy_pct": None, "steal_pct": None}, "2 CPU AMD EPYC, 24 GiB, speed 41.5"),
     ({"busy_pct": 97.2, "steal_pct": 0.0}, "2 CPU AMD EPYC, 24 GiB, speed 41.5, 97.2% busy"),
     ({"busy_pct": 97.2, "steal_pct": 3.1}, "2 CPU AMD EPYC, 24 GiB, speed 41.5, 97.2% busy (3.1% stolen)")],
)  # fmt: skip
def test_the_machine_column_says_how_fast_and_how_busy_the_machine_was(cpu: object, note: str) -> None:
    facts: dict[str, object] = {"cpus": "2", "cpu_model": "AMD EPYC", "memory_gib": "24", "speed_index": 41.5}
    assert _machine_note(facts, cpu) == note


@pytest.mark.parametrize(
    ("paused", "note"),
    [(None, "2 CPU AMD EPYC, 24 GiB, speed 41.5, 79.0% busy"),
     (0.4, "2 CPU AMD EPYC, 24 GiB, speed 41.5, 79.0% busy"),
     (30.5, "2 CPU AMD EPYC, 24 GiB, speed 41.5, 79.0% busy, **paused 30.5 s**"),
     (-0.4, "2 CPU AMD EPYC, 24 GiB, speed 41.5, 79.0% busy"),
     (-2.0, "2 CPU AMD EPYC, 24 GiB, speed 41.5, 79.0% busy, **clock set back 2.0 s**")],
)  # fmt: skip
def test_the_machine_column_names_a_step_of_the_wall_clock_in_the_window(paused: object, note: str) -> None:
    facts: dict[str, object] = {"cpus": "2", "cpu_model": "AMD EPYC", "memory_gib": "24", "speed_index": 41.5}
    assert _machine_note(facts, {"busy_pct": 79.0, "steal_pct": 0.0}, paused) == note


def test_the_machine_column_of_a_result_without_a_speed_index_names_the_hardware_only() -> None:
    assert _machine_note({"cpus": "2", "cpu_model": "AMD EPYC", "memory_gib": "24"}, None) == "2 CPU AMD EPYC, 24 GiB"


def test_the_samples_file_names_each_alerts_rule_and_payer_and_reads_back_whatever_they_hold(tmp_path: Path) -> None:
    samples = [
        run.AlertSample(1_000.5, 700, 760, 790, "velocity-1", "payer-7"),
        run.AlertSample(2_000.0, 1_700, 1_760, 1_790, 'rule "a", b', "line\nbreak"),
        run.AlertSample(3_000.0, 2_700, 2_760, 2_790),
    ]
    path = tmp_path / "alerts.csv"
    run.write_samples(path, samples)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["received_ms"], r["transaction_ts_ms"], r["rule_id"], r["payer_id"]) for r in rows] == [
        ("1000.5", "700", "velocity-1", "payer-7"),
        ("2000.0", "1700", 'rule "a", b', "line\nbreak"),
        ("3000.0", "2700", "", ""),
    ]
    assert [(r["detected_ms"], r["sent_ms"]) for r in rows] == [("760", "790"), ("1760", "1790"), ("2760", "2790")]


@pytest.mark.parametrize(
    ("alert", "rule", "payer"),
    [({"ruleId": "r1", "transaction": {"payerId": 42}}, "r1", "42"),
     ({"ruleId": "r1", "transaction": {"payeeId": 7}}, "r1", ""),
     ({"ruleId": None, "transaction": None}, "", ""),
     ({"transaction": ["not", "an", "object"]}, "", ""),
     ({"ruleId": "r1", "transaction": {"payerId": None}}, "r1", "")],
)  # fmt: skip
def test_an_alerts_sample_holds_its_rule_and_payer_or_empty_text(
    alert: dict[str, object], rule: str, payer: str
) -> None:
    sample = run.AlertSample.of({**alert, "transactionTimestamp": 700, "detectedAt": 760}, 1_000.0, 790)
    assert (sample.rule_id, sample.payer_id) == (rule, payer)
    assert (sample.transaction_ts_ms, sample.detected_ms, sample.sent_ms, sample.latency_ms) == (700, 760, 790, 300.0)
