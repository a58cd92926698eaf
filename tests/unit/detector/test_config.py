from __future__ import annotations

from pathlib import Path

import pytest

from fraudstream_detector.config import parse_config


def test_defaults_work_locally() -> None:
    cfg = parse_config([], env={})
    assert (cfg.kafka.bootstrap, cfg.topics.transactions, cfg.topics.dlq) == (
        "127.0.0.1:9092",
        "transactions",
        "transactions.dlq",
    )
    assert (cfg.lateness_ms, cfg.shuffle_partitions, cfg.buckets, cfg.metrics_port) == (60_000, 2, 2, 9108)
    assert (cfg.starting_offsets, cfg.max_offsets_per_trigger, cfg.sweep_interval_ms) == ("latest", None, 600_000)


def test_flags_override_environment_which_overrides_defaults() -> None:
    env = {"DETECTOR_LATENESS_MS": "5000", "DETECTOR_SHUFFLE_PARTITIONS": "4", "KAFKA_BOOTSTRAP": "k:1",
           "ALERTS_TOPIC": "a2", "KAFKA_CLIENT_SECURITY_PROTOCOL": "SSL"}  # fmt: skip
    argv = ["--lateness-ms", "7000", "--checkpoint-dir", "/tmp/ck", "--evaluator", "python"]
    cfg = parse_config([*argv, "--max-offsets-per-trigger", "500"], env)
    assert (cfg.lateness_ms, cfg.shuffle_partitions, cfg.checkpoint_dir) == (7_000, 4, Path("/tmp/ck"))
    assert (cfg.kafka.bootstrap, cfg.topics.alerts, cfg.max_offsets_per_trigger) == ("k:1", "a2", 500)
    assert cfg.kafka.spark_options()["kafka.security.protocol"] == "SSL"


def test_the_jvm_evaluator_is_the_default_with_a_task_slot_per_stage() -> None:
    cfg = parse_config([], env={})
    assert (cfg.evaluator, cfg.master, cfg.checkpoint_interval) == ("jvm", "local[8]", "5 minutes")
    assert cfg.rules_catch_up_timeout_ms == 60_000
    env = {"DETECTOR_RULES_CATCH_UP_TIMEOUT_MS": "5000"}
    assert parse_config([], env).rules_catch_up_timeout_ms == 5_000
    assert parse_config(["--rules-catch-up-timeout-ms", "7000"], env).rules_catch_up_timeout_ms == 7_000


def test_the_python_evaluator_keeps_two_slots_unless_a_master_is_given() -> None:
    assert parse_config(["--evaluator", "python"], env={}).master == "local[2]"
    env = {"DETECTOR_EVALUATOR": "python", "SPARK_MASTER": "k8s://https://api:443"}
    assert parse_config([], env).master == "k8s://https://api:443"
    assert parse_config(["--checkpoint-interval", "5 minutes"], env={}).checkpoint_interval == "5 minutes"


def test_driver_memory_is_left_to_spark_unless_given() -> None:
    assert parse_config([], env={}).driver_memory == ""
    assert parse_config([], env={"DETECTOR_DRIVER_MEMORY": "4g"}).driver_memory == "4g"


def test_future_skew_reorder_wait_and_liveness_timeout() -> None:
    cfg = parse_config([], env={})
    assert (cfg.future_skew_ms, cfg.reorder_wait_ms, cfg.liveness_timeout_s) == (300_000, 0, 120.0)
    env = {"DETECTOR_FUTURE_SKEW_MS": "1000", "DETECTOR_REORDER_WAIT_MS": "50", "DETECTOR_LIVENESS_TIMEOUT_S": "30"}
    cfg = parse_config([], env)
    assert (cfg.future_skew_ms, cfg.reorder_wait_ms, cfg.liveness_timeout_s) == (1_000, 50, 30.0)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--evaluator", "python", "--reorder-wait-ms", "50"], "--reorder-wait-ms applies to the jvm evaluator only"),
        (["--trigger", "1 second"], "--trigger applies to the python evaluator only (the jvm evaluator runs under"),
        (["--max-offsets-per-trigger", "500"], "--max-offsets-per-trigger applies to the python evaluator only"),
        (["--evaluator", "python", "--checkpoint-interval", "1 minute"], "--checkpoint-interval applies to the jvm"),
        (
            ["--evaluator", "python", "--rules-catch-up-timeout-ms", "5"],
            "--rules-catch-up-timeout-ms applies to the jvm",
        ),
        (["--future-skew-ms", "-1"], "--future-skew-ms must be >= 0"),
        (["--lateness-ms", "-5"], "--lateness-ms must be >= 0"),
        (["--reorder-wait-ms", "-1"], "--reorder-wait-ms must be >= 0"),
    ],
)
def test_settings_that_cannot_apply_are_refused_with_a_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse_config(argv, env={})
    assert message in capsys.readouterr().err


def test_a_setting_of_the_other_evaluator_is_refused_from_the_environment_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        parse_config([], env={"DETECTOR_TRIGGER": "2 seconds"})
    err = capsys.readouterr().err
    assert "--trigger applies to the python evaluator only" in err
    assert "leave it (env DETECTOR_TRIGGER) at '0 seconds'" in err


def test_the_other_evaluators_settings_at_their_defaults_are_accepted() -> None:
    """The chart passes every setting to either evaluator; a default changes nothing."""
    jvm_env = {"DETECTOR_TRIGGER": "0 seconds", "DETECTOR_MAX_OFFSETS_PER_TRIGGER": "0"}
    assert parse_config([], env=jvm_env).evaluator == "jvm"
    python_env = {"DETECTOR_EVALUATOR": "python", "DETECTOR_CHECKPOINT_INTERVAL": "5 minutes",
                  "DETECTOR_REORDER_WAIT_MS": "0", "DETECTOR_RULES_CATCH_UP_TIMEOUT_MS": "60000"}  # fmt: skip
    assert parse_config([], env=python_env).evaluator == "python"


def test_metrics_bind_to_a_chosen_address_and_consumer_groups_share_one_prefix() -> None:
    cfg = parse_config([], env={})
    assert (cfg.metrics_addr, cfg.group_id_prefix) == ("0.0.0.0", "fraudstream-detector")
    assert cfg.source_options()["groupIdPrefix"] == "fraudstream-detector"
    env = {"DETECTOR_METRICS_ADDR": "10.1.2.3", "DETECTOR_GROUP_ID_PREFIX": "team-a.detector", "KAFKA_BOOTSTRAP": "k:1"}
    cfg = parse_config([], env)
    assert (cfg.metrics_addr, cfg.group_id_prefix) == ("10.1.2.3", "team-a.detector")
    assert cfg.source_options() == {"kafka.bootstrap.servers": "k:1", "groupIdPrefix": "team-a.detector"}
    assert parse_config(["--metrics-addr", "127.0.0.1"], env).metrics_addr == "127.0.0.1"
