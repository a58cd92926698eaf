"""The detector's configuration: command-line flags, defaulting to environment variables, then local defaults."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fraudstream_kafka.settings import KafkaSettings, Topics

EVALUATORS = ("jvm", "python")
# Real-time Mode runs every stage at once: a slot per transactions partition, the rules partition and each bucket.
DEFAULT_MASTERS = {"jvm": "local[8]", "python": "local[2]"}


@dataclass(frozen=True)
class DetectorConfig:
    kafka: KafkaSettings
    topics: Topics
    checkpoint_dir: Path
    lateness_ms: int
    shuffle_partitions: int
    trigger_interval: str
    starting_offsets: str
    max_offsets_per_trigger: int | None
    metrics_port: int
    master: str
    sweep_interval_ms: int = 600_000
    evaluator: str = "jvm"
    checkpoint_interval: str = "5 minutes"
    driver_memory: str = ""
    rules_catch_up_timeout_ms: int = 60_000

    @property
    def buckets(self) -> int:
        """State is sharded into one stateful key per shuffle partition; each holds every rule (broadcast)."""
        return self.shuffle_partitions


def parse_config(argv: Sequence[str] | None = None, env: Mapping[str, str] = os.environ) -> DetectorConfig:
    """Flags override environment variables (named in each flag's help), which override the local defaults."""
    p = argparse.ArgumentParser(prog="fraudstream_detector", description="fraudstream Spark detector")

    def opt(flag: str, var: str, default: str, help_: str, type: type = str) -> None:
        p.add_argument(flag, default=env.get(var, default), type=type, help=f"{help_} (env {var}, default {default!r})")

    opt("--checkpoint-dir", "DETECTOR_CHECKPOINT_DIR", ".local/checkpoints/detector", "checkpoint location")
    opt("--lateness-ms", "DETECTOR_LATENESS_MS", "60000", "allowed lateness per key, ms", type=int)
    opt("--shuffle-partitions", "DETECTOR_SHUFFLE_PARTITIONS", "2", "state partitions (fixed per checkpoint)", type=int)
    opt("--trigger", "DETECTOR_TRIGGER", "0 seconds", "micro-batch trigger interval")
    opt("--starting-offsets", "DETECTOR_STARTING_OFFSETS", "latest", "transactions start without checkpoint")
    opt("--max-offsets-per-trigger", "DETECTOR_MAX_OFFSETS_PER_TRIGGER", "0", "cap per batch, 0 = none", type=int)
    opt("--metrics-port", "DETECTOR_METRICS_PORT", "9108", "Prometheus port", type=int)
    p.add_argument(
        "--evaluator",
        choices=EVALUATORS,
        default=env.get("DETECTOR_EVALUATOR", "jvm"),
        help="jvm: the JVM evaluator under Real-time Mode; python: the PySpark micro-batch evaluator "
        "(env DETECTOR_EVALUATOR, default 'jvm')",
    )
    opt(
        "--checkpoint-interval",
        "DETECTOR_CHECKPOINT_INTERVAL",
        "5 minutes",
        "jvm evaluator: how often Real-time Mode checkpoints progress and state",
    )
    opt(
        "--driver-memory",
        "DETECTOR_DRIVER_MEMORY",
        "",
        "JVM heap of the Spark driver, e.g. 4g; empty keeps spark.driver.memory from spark-defaults.conf (1g)",
    )
    opt(
        "--master",
        "SPARK_MASTER",
        "",
        "Spark master (default local[8] for jvm: a task slot per stage; local[2] for python)",
    )
    opt("--sweep-interval-ms", "DETECTOR_SWEEP_INTERVAL_MS", "600000", "idle key-group sweep period", type=int)
    opt(
        "--rules-catch-up-timeout-ms",
        "DETECTOR_RULES_CATCH_UP_TIMEOUT_MS",
        "60000",
        "jvm evaluator: longest a task holds transactions until it has read the rules topic to its end",
        type=int,
    )
    args = p.parse_args(argv)
    return DetectorConfig(
        kafka=KafkaSettings.from_env(env),
        topics=Topics.from_env(env),
        checkpoint_dir=Path(args.checkpoint_dir),
        lateness_ms=args.lateness_ms,
        shuffle_partitions=args.shuffle_partitions,
        trigger_interval=args.trigger,
        starting_offsets=args.starting_offsets,
        max_offsets_per_trigger=args.max_offsets_per_trigger or None,
        metrics_port=args.metrics_port,
        master=args.master or DEFAULT_MASTERS[args.evaluator],
        sweep_interval_ms=args.sweep_interval_ms,
        evaluator=args.evaluator,
        checkpoint_interval=args.checkpoint_interval,
        driver_memory=args.driver_memory,
        rules_catch_up_timeout_ms=args.rules_catch_up_timeout_ms,
    )
