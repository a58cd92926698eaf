"""The detector's configuration: command-line flags, defaulting to environment variables, then local defaults."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fraudstream_kafka.acls import DETECTOR_GROUP_PREFIX
from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_rules.model import MAX_WINDOW_MINUTES

# Settings of the retired Python evaluator: still set in an environment, they are refused with this reason rather
# than ignored (their flags are unknown to the parser, which refuses them itself).
REMOVED_SETTINGS = {
    "DETECTOR_EVALUATOR": "there is one evaluator, the JVM evaluator under Real-time Mode",
    "DETECTOR_TRIGGER": "Real-time Mode checkpoints every DETECTOR_CHECKPOINT_INTERVAL",
    "DETECTOR_MAX_OFFSETS_PER_TRIGGER": "Real-time Mode reads each record as it arrives, in no batches",
}
# The longest a millisecond setting may be: the longest window a rule may have (366 days). The JVM adds these settings
# to epoch milliseconds, which only values near Long.MAX_VALUE would overflow (one above it failed only once the query
# started); no use needs more than the longest window.
MAX_DURATION_MS = MAX_WINDOW_MINUTES * 60_000
# The most shuffle partitions: the default master's task slots, local[2 x partitions + 4], must still be a Java int.
MAX_SHUFFLE_PARTITIONS = (2**31 - 1 - 4) // 2
# Each number's range, least and most, by flag: the messages, the --help strings and, for the settings the chart
# exposes, its values.schema.json's maxima (held to these by a test) follow it. A catch-up timeout of 0 would release a
# task's records before it had read the rules; a sweep interval of 0 would sweep on every call; no buckets, no state.
# The cache's bytes (MiB x 2**20) are a Java long.
RANGES: dict[str, tuple[int, int]] = {
    "--lateness-ms": (0, MAX_DURATION_MS),
    "--future-skew-ms": (0, MAX_DURATION_MS),
    "--reorder-wait-ms": (0, MAX_DURATION_MS),
    "--sweep-interval-ms": (1, MAX_DURATION_MS),
    "--rules-catch-up-timeout-ms": (1, MAX_DURATION_MS),
    "--state-cache-mb": (0, (2**63 - 1) >> 20),
    "--shuffle-partitions": (1, MAX_SHUFFLE_PARTITIONS),
    "--metrics-port": (0, 65_535),
    "--evaluator-metrics-port": (0, 65_535),
}
# A Real-time Mode batch duration as the detector accepts it (the chart's values.schema.json has the same pattern):
# Spark refuses anything it cannot read as an interval, but only once the query starts, with a stack trace.
CHECKPOINT_INTERVAL = re.compile(r"^[1-9][0-9]* (millisecond|second|minute|hour)s?$")


def default_master(buckets: int) -> str:
    """A local master with a task slot for every stage of the query, which Real-time Mode runs at once: one per
    transactions partition (up to 3), the rules partition, each bucket and each report partition (as many as the
    buckets); the chart's mode=deployment gives the driver the same. local[8] at the default 2 buckets."""
    return f"local[{2 * buckets + 4}]"


# A master that runs every task in the driver's JVM (local-cluster[...] runs executors).
LOCAL_MASTER = re.compile(r"^local(\[[^\]]*\])?$")


def checkpoint_interval(value: str) -> str:
    """`value` if it is a positive whole number of milliseconds, seconds, minutes or hours ("5 minutes"); else an
    argparse error that says so."""
    if not CHECKPOINT_INTERVAL.match(value):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an interval: a positive whole number and a unit, e.g. '30 seconds' or '5 minutes' "
            "(units: millisecond, second, minute, hour, singular or plural)"
        )
    return value


def _bounds(least: int, most: int) -> str:
    """A range as the messages and --help strings give it."""
    return f"within {least}..{most}"


def _on_off(value: str) -> bool:
    """True for "on", False for "off"; else an argparse error that says so."""
    if value not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"{value!r} is neither 'on' nor 'off'")
    return value == "on"


@dataclass(frozen=True)
class DetectorConfig:
    kafka: KafkaSettings
    topics: Topics
    checkpoint_dir: Path
    lateness_ms: int
    shuffle_partitions: int
    starting_offsets: str
    metrics_port: int
    master: str
    sweep_interval_ms: int = 600_000
    checkpoint_interval: str = "5 minutes"
    driver_memory: str = ""
    rules_catch_up_timeout_ms: int = 60_000
    future_skew_ms: int = 300_000
    reorder_wait_ms: int = 0
    liveness_timeout_s: float = 120.0
    metrics_addr: str = "0.0.0.0"
    evaluator_metrics_port: int = 9111
    group_id_prefix: str = DETECTOR_GROUP_PREFIX
    state_cache_mb: int = 0
    route_transactions: bool = True

    def source_options(self) -> dict[str, str]:
        """The Spark Kafka options of the detector's sources: the client settings, and the consumer groups' prefix
        (Spark names its groups `<prefix>-<uuid>-...`), so that an ACL on that prefix is all the groups need."""
        return {**self.kafka.spark_options(), "groupIdPrefix": self.group_id_prefix}

    @property
    def buckets(self) -> int:
        """State is sharded into one stateful key per shuffle partition; each holds every rule (broadcast)."""
        return self.shuffle_partitions

    @property
    def routes_transactions(self) -> bool:
        """Whether each transaction goes only to the buckets that own one of its groups, plus the one that reports it
        (Router.java), rather than to every bucket: when asked, with no reorder wait (whose release counts on every
        bucket seeing every partition's records) and a local master (with executors, the sources and buckets need not
        share the JVM whose key groups route)."""
        return self.route_transactions and self.reorder_wait_ms == 0 and LOCAL_MASTER.match(self.master) is not None


def parse_config(argv: Sequence[str] | None = None, env: Mapping[str, str] = os.environ) -> DetectorConfig:
    """Flags override environment variables (named in each flag's help), which override the local defaults.

    No setting is silently ignored: an unknown flag, a variable of REMOVED_SETTINGS, and a number that cannot apply
    (out of its RANGES, named in the message with the flag and its variable; the --help strings give the ranges too)
    are refused (argparse exits with a message saying why).
    """
    # No abbreviations: a retired flag such as --evaluator must not pass for a prefix of a current one.
    p = argparse.ArgumentParser(
        prog="fraudstream_detector", description="fraudstream Spark detector", allow_abbrev=False
    )

    variables: dict[str, str] = {}

    def opt(flag: str, var: str, default: str, help_: str, type: Callable[[str], object] = str) -> None:
        variables[flag] = var
        within = f", {_bounds(*RANGES[flag])}" if flag in RANGES else ""
        p.add_argument(
            flag, default=env.get(var, default), type=type, help=f"{help_} (env {var}, default {default!r}{within})"
        )

    opt("--checkpoint-dir", "DETECTOR_CHECKPOINT_DIR", ".local/checkpoints/detector", "checkpoint location")
    opt("--lateness-ms", "DETECTOR_LATENESS_MS", "60000", "allowed lateness beyond a key group's widest window", int)
    opt(
        "--future-skew-ms",
        "DETECTOR_FUTURE_SKEW_MS",
        "300000",
        "how far an eventTime may lie ahead of its Kafka timestamp before it goes to the DLQ as future",
        int,
    )
    opt(
        "--reorder-wait-ms",
        "DETECTOR_REORDER_WAIT_MS",
        "0",
        "how long a record may wait for earlier-ingested records of other partitions",
        int,
    )
    opt("--shuffle-partitions", "DETECTOR_SHUFFLE_PARTITIONS", "2", "state partitions (fixed per checkpoint)", type=int)
    opt("--starting-offsets", "DETECTOR_STARTING_OFFSETS", "latest", "transactions start without checkpoint")
    opt("--metrics-port", "DETECTOR_METRICS_PORT", "9108", "port of /metrics, /livez and /readyz", type=int)
    opt("--metrics-addr", "DETECTOR_METRICS_ADDR", "0.0.0.0", "address /metrics, /livez and /readyz bind to")
    opt(
        "--evaluator-metrics-port",
        "DETECTOR_EVALUATOR_METRICS_PORT",
        "9111",
        "port of the evaluation metrics each JVM that runs the evaluator's tasks serves (every executor, or the "
        "driver with a local[N] master), on every interface; 0: not served",
        type=int,
    )
    opt(
        "--group-id-prefix",
        "DETECTOR_GROUP_ID_PREFIX",
        DETECTOR_GROUP_PREFIX,
        "prefix of every Kafka consumer group the detector uses (grant READ on groups with this prefix)",
    )
    opt(
        "--liveness-timeout-s",
        "DETECTOR_LIVENESS_TIMEOUT_S",
        "120",
        "/livez fails once the query is down, or input waits without progress, for this long",
        type=float,
    )
    opt(
        "--checkpoint-interval",
        "DETECTOR_CHECKPOINT_INTERVAL",
        "5 minutes",
        "how often Real-time Mode checkpoints progress and state",
        checkpoint_interval,
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
        "Spark master (default local[2 x shuffle partitions + 4]: a task slot per stage)",
    )
    opt("--sweep-interval-ms", "DETECTOR_SWEEP_INTERVAL_MS", "600000", "idle key-group sweep period", type=int)
    opt(
        "--rules-catch-up-timeout-ms",
        "DETECTOR_RULES_CATCH_UP_TIMEOUT_MS",
        "60000",
        "longest a task holds transactions until it has read the rules topic to its end",
        type=int,
    )
    opt(
        "--state-cache-mb",
        "DETECTOR_STATE_CACHE_MB",
        "0",
        "heap each evaluator JVM gives its cache of group windows, in MiB (0: a quarter of its heap)",
        type=int,
    )
    opt(
        "--route-transactions",
        "DETECTOR_ROUTE_TRANSACTIONS",
        "on",
        "on: each transaction goes only to the buckets that own one of its groups (with no reorder wait and a local "
        "master); off: to every bucket",
        _on_off,
    )
    args = p.parse_args(argv)
    for flag, (least, most) in RANGES.items():
        value = getattr(args, flag.removeprefix("--").replace("-", "_"))
        if not least <= value <= most:
            p.error(f"{flag} ({variables[flag]}) must be {_bounds(least, most)}, got {value}")
    if not args.liveness_timeout_s > 0:  # NaN too
        var = variables["--liveness-timeout-s"]
        p.error(f"--liveness-timeout-s ({var}) must be > 0, got {args.liveness_timeout_s}")
    for var, why in REMOVED_SETTINGS.items():
        if var in env:
            p.error(f"{var} is no longer read ({why}): unset it (the Python evaluator was retired)")
    return DetectorConfig(
        kafka=KafkaSettings.from_env(env),
        topics=Topics.from_env(env),
        checkpoint_dir=Path(args.checkpoint_dir),
        lateness_ms=args.lateness_ms,
        shuffle_partitions=args.shuffle_partitions,
        starting_offsets=args.starting_offsets,
        metrics_port=args.metrics_port,
        master=args.master or default_master(args.shuffle_partitions),
        sweep_interval_ms=args.sweep_interval_ms,
        checkpoint_interval=args.checkpoint_interval,
        driver_memory=args.driver_memory,
        rules_catch_up_timeout_ms=args.rules_catch_up_timeout_ms,
        future_skew_ms=args.future_skew_ms,
        reorder_wait_ms=args.reorder_wait_ms,
        liveness_timeout_s=args.liveness_timeout_s,
        metrics_addr=args.metrics_addr,
        evaluator_metrics_port=args.evaluator_metrics_port,
        group_id_prefix=args.group_id_prefix,
        state_cache_mb=args.state_cache_mb,
        route_transactions=args.route_transactions,
    )
