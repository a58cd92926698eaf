from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fraudstream_detector.config import CHECKPOINT_INTERVAL, MAX_DURATION_MS, RANGES, parse_config

REPO = Path(__file__).resolve().parents[3]


def test_defaults_work_locally() -> None:
    cfg = parse_config([], env={})
    assert (cfg.kafka.bootstrap, cfg.topics.transactions, cfg.topics.dlq) == (
        "127.0.0.1:9092",
        "transactions",
        "transactions.dlq",
    )
    assert (cfg.lateness_ms, cfg.shuffle_partitions, cfg.buckets, cfg.metrics_port) == (60_000, 2, 2, 9108)
    assert (cfg.starting_offsets, cfg.sweep_interval_ms) == ("latest", 600_000)


def test_flags_override_environment_which_overrides_defaults() -> None:
    env = {"DETECTOR_LATENESS_MS": "5000", "DETECTOR_SHUFFLE_PARTITIONS": "4", "KAFKA_BOOTSTRAP": "k:1",
           "ALERTS_TOPIC": "a2", "KAFKA_CLIENT_SECURITY_PROTOCOL": "SSL"}  # fmt: skip
    cfg = parse_config(["--lateness-ms", "7000", "--checkpoint-dir", "/tmp/ck"], env)
    assert (cfg.lateness_ms, cfg.shuffle_partitions, cfg.checkpoint_dir) == (7_000, 4, Path("/tmp/ck"))
    assert (cfg.kafka.bootstrap, cfg.topics.alerts) == ("k:1", "a2")
    assert cfg.kafka.spark_options()["kafka.security.protocol"] == "SSL"


def test_the_default_master_has_a_task_slot_per_stage() -> None:
    cfg = parse_config([], env={})
    assert (cfg.master, cfg.checkpoint_interval) == ("local[8]", "5 minutes")
    assert parse_config(["--shuffle-partitions", "4"], env={}).master == "local[12]", "a slot per bucket, twice"
    assert parse_config(["--shuffle-partitions", "4", "--master", "local[9]"], env={}).master == "local[9]"
    assert parse_config([], {"SPARK_MASTER": "k8s://https://api:443"}).master == "k8s://https://api:443"
    assert cfg.rules_catch_up_timeout_ms == 60_000
    env = {"DETECTOR_RULES_CATCH_UP_TIMEOUT_MS": "5000"}
    assert parse_config([], env).rules_catch_up_timeout_ms == 5_000
    assert parse_config(["--rules-catch-up-timeout-ms", "7000"], env).rules_catch_up_timeout_ms == 7_000


def test_driver_memory_is_left_to_spark_unless_given() -> None:
    assert parse_config([], env={}).driver_memory == ""
    assert parse_config([], env={"DETECTOR_DRIVER_MEMORY": "4g"}).driver_memory == "4g"


def test_future_skew_reorder_wait_and_liveness_timeout() -> None:
    cfg = parse_config([], env={})
    assert (cfg.future_skew_ms, cfg.reorder_wait_ms, cfg.liveness_timeout_s) == (300_000, 0, 120.0)
    env = {"DETECTOR_FUTURE_SKEW_MS": "1000", "DETECTOR_REORDER_WAIT_MS": "50", "DETECTOR_LIVENESS_TIMEOUT_S": "30"}
    cfg = parse_config([], env)
    assert (cfg.future_skew_ms, cfg.reorder_wait_ms, cfg.liveness_timeout_s) == (1_000, 50, 30.0)


def test_the_state_cache_defaults_to_a_share_of_the_heap_unless_sized() -> None:
    assert parse_config([], env={}).state_cache_mb == 0
    assert parse_config([], env={"DETECTOR_STATE_CACHE_MB": "512"}).state_cache_mb == 512
    assert parse_config(["--state-cache-mb", "256"], env={"DETECTOR_STATE_CACHE_MB": "512"}).state_cache_mb == 256


def test_transactions_are_routed_with_a_local_master_and_no_reorder_wait_unless_turned_off() -> None:
    assert parse_config([], env={}).routes_transactions, "on by default"
    assert not parse_config(["--route-transactions", "off"], env={}).routes_transactions
    on = ["--route-transactions", "on"]
    assert parse_config(on, env={}).routes_transactions
    assert parse_config([*on, "--master", "local"], env={}).routes_transactions
    assert parse_config([*on, "--master", "local[*]"], env={}).routes_transactions
    assert not parse_config([], env={"DETECTOR_ROUTE_TRANSACTIONS": "off"}).routes_transactions
    env_off = {"DETECTOR_ROUTE_TRANSACTIONS": "off"}
    assert parse_config(on, env=env_off).routes_transactions, "the flag wins"
    assert not parse_config(["--reorder-wait-ms", "50"], env={}).routes_transactions
    for master in ("local-cluster[2,1,1024]", "k8s://https://api:443", "spark://host:7077"):
        cfg = parse_config([*on, "--master", master], env={})
        assert cfg.route_transactions and not cfg.routes_transactions, master


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--route-transactions", "yes"], "'yes' is neither 'on' nor 'off'"),
        (["--evaluator", "python"], "unrecognized arguments: --evaluator python"),
        (["--trigger", "1 second"], "unrecognized arguments: --trigger"),
        (["--max-offsets-per-trigger", "500"], "unrecognized arguments: --max-offsets-per-trigger"),
        (["--future-skew-ms", "-1"], "--future-skew-ms (DETECTOR_FUTURE_SKEW_MS) must be within 0..31622400000"),
        (["--lateness-ms", "-5"], "--lateness-ms (DETECTOR_LATENESS_MS) must be within 0..31622400000, got -5"),
        (["--lateness-ms", "31622400001"], "(DETECTOR_LATENESS_MS) must be within 0..31622400000, got 31622400001"),
        (["--future-skew-ms", str(2**63)], f"must be within 0..31622400000, got {2**63}"),
        (["--reorder-wait-ms", "-1"], "--reorder-wait-ms (DETECTOR_REORDER_WAIT_MS) must be within 0..31622400000"),
        (["--state-cache-mb", "-1"], "--state-cache-mb (DETECTOR_STATE_CACHE_MB) must be within 0..8796093022207"),
        (["--state-cache-mb", "8796093022208"], "must be within 0..8796093022207, got 8796093022208"),
        (["--shuffle-partitions", "0"], "(DETECTOR_SHUFFLE_PARTITIONS) must be within 1..1073741821, got 0"),
        (["--shuffle-partitions", "1073741822"], "must be within 1..1073741821, got 1073741822"),
        (["--sweep-interval-ms", "0"], "(DETECTOR_SWEEP_INTERVAL_MS) must be within 1..31622400000, got 0"),
        (["--rules-catch-up-timeout-ms", "0"], "(DETECTOR_RULES_CATCH_UP_TIMEOUT_MS) must be within 1..31622400000"),
        (["--rules-catch-up-timeout-ms", "31622400001"], "must be within 1..31622400000, got 31622400001"),
        (["--metrics-port", "-1"], "--metrics-port (DETECTOR_METRICS_PORT) must be within 0..65535, got -1"),
        (["--metrics-port", "65536"], "must be within 0..65535, got 65536"),
        (["--evaluator-metrics-port", "-1"], "(DETECTOR_EVALUATOR_METRICS_PORT) must be within 0..65535, got -1"),
        (["--liveness-timeout-s", "0"], "(DETECTOR_LIVENESS_TIMEOUT_S) must be > 0, got 0.0"),
        (["--liveness-timeout-s", "nan"], "(DETECTOR_LIVENESS_TIMEOUT_S) must be > 0, got nan"),
        (["--checkpoint-interval", "60s"], "argument --checkpoint-interval: '60s' is not an interval"),
        (["--checkpoint-interval", "0 seconds"], "'0 seconds' is not an interval: a positive whole number and a unit"),
    ],
)
def test_settings_that_cannot_apply_are_refused_with_a_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse_config(argv, env={})
    assert message in capsys.readouterr().err


def test_the_ranges_stop_at_the_longest_window_and_the_help_gives_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert MAX_DURATION_MS == 366 * 24 * 3600 * 1000, "a duration setting is at most the longest window, 366 days"
    at_most = parse_config(["--lateness-ms", str(MAX_DURATION_MS), "--sweep-interval-ms", str(MAX_DURATION_MS)], {})
    assert (at_most.lateness_ms, at_most.sweep_interval_ms) == (MAX_DURATION_MS, MAX_DURATION_MS)
    widest = parse_config(["--shuffle-partitions", str(RANGES["--shuffle-partitions"][1])], {})
    slots = int(widest.master.removeprefix("local[").removesuffix("]"))
    assert slots <= 2**31 - 1 < slots + 2, "the default master's slots fit a Java int, one more partition's would not"
    with pytest.raises(SystemExit):
        parse_config(["--help"], env={})
    # Each option's own entry: from its line in the options list to the next option's.
    entries = dict(re.findall(r"^  (--[a-z-]+) [A-Z_]+\n(.*?)(?=^  --|\Z)", capsys.readouterr().out, re.M | re.S))
    for flag, (least, most) in RANGES.items():
        assert f"within {least}..{most}" in " ".join(entries[flag].split()), flag


def test_the_chart_refuses_what_the_detector_refuses() -> None:
    schema = json.loads((REPO / "charts/fraudstream/values.schema.json").read_text())
    detector = schema["properties"]["detector"]["properties"]
    flags = {"shufflePartitions": "--shuffle-partitions", "latenessMs": "--lateness-ms",
             "futureSkewMs": "--future-skew-ms", "reorderWaitMs": "--reorder-wait-ms",
             "stateCacheMb": "--state-cache-mb", "metricsPort": "--metrics-port",
             "evaluatorMetricsPort": "--evaluator-metrics-port"}  # fmt: skip
    for value, flag in flags.items():
        least, most = RANGES[flag]
        assert detector[value]["minimum"] >= least and detector[value]["maximum"] == most, value


@pytest.mark.parametrize("var", ["DETECTOR_EVALUATOR", "DETECTOR_TRIGGER", "DETECTOR_MAX_OFFSETS_PER_TRIGGER"])
def test_a_setting_of_the_retired_python_evaluator_is_refused_from_the_environment(
    var: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse_config([], env={var: "jvm"})
    assert f"{var} is no longer read (" in capsys.readouterr().err


def test_the_checkpoint_interval_is_a_spark_interval_as_the_chart_allows_it() -> None:
    assert parse_config(["--checkpoint-interval", "1 minute"], env={}).checkpoint_interval == "1 minute"
    assert parse_config([], {"DETECTOR_CHECKPOINT_INTERVAL": "30 seconds"}).checkpoint_interval == "30 seconds"
    schema = json.loads((REPO / "charts/fraudstream/values.schema.json").read_text())
    chart = schema["properties"]["detector"]["properties"]["checkpointInterval"]["pattern"]
    assert chart == CHECKPOINT_INTERVAL.pattern, "the chart refuses what the detector refuses"


def test_metrics_bind_to_a_chosen_address_and_consumer_groups_share_one_prefix() -> None:
    cfg = parse_config([], env={})
    assert (cfg.metrics_addr, cfg.group_id_prefix) == ("0.0.0.0", "fraudstream-detector")
    assert cfg.source_options()["groupIdPrefix"] == "fraudstream-detector"
    env = {"DETECTOR_METRICS_ADDR": "10.1.2.3", "DETECTOR_GROUP_ID_PREFIX": "team-a.detector", "KAFKA_BOOTSTRAP": "k:1"}
    cfg = parse_config([], env)
    assert (cfg.metrics_addr, cfg.group_id_prefix) == ("10.1.2.3", "team-a.detector")
    assert cfg.source_options() == {"kafka.bootstrap.servers": "k:1", "groupIdPrefix": "team-a.detector"}
    assert parse_config(["--metrics-addr", "127.0.0.1"], env).metrics_addr == "127.0.0.1"
