"""Micro-benchmark: the JVM evaluating stage's CPU time and allocation per transaction, on the benchmark's workload.

It records the profile's rules and `--transactions` transactions of the generator's workload (same seed, one
transaction per `1000 / --rate` ms of event time) and replays them through the evaluator's BucketProcessor in
Spark's TwsTester (`io.fraudstream.evaluator.spark.EvaluatorCost`, in the evaluator's test classes): every record
to every bucket, a call each, as the detector's query feeds them. Nothing else is measured: no Kafka, no Spark task,
no RocksDB. The figures are the calling thread's CPU time (so other load on the machine does not blur them) and its
allocation, per transaction and summed over the buckets, for each round of `--round` transactions, and apart from
them the router's (`Routes.of`, which the detector's first stage calls once per transaction); it prints the
median and the spread of the rounds after the first `--warmup-rounds` (the JIT's), with the `code` it measured
(bench/provenance.py). Use it to compare two builds of the evaluator on one machine; the end-to-end latency is
`make bench`'s.

Usage: .venv/bin/python -m bench.evaluator_cost [--profile default] [--transactions 200000] [--round 20000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from bench import provenance
from bench.rules import benchmark_manifests
from fraudstream_detector.session import connector_jars, pyspark_jars
from fraudstream_generator.__main__ import build_workload, parse_args
from fraudstream_generator.workload import Profile
from fraudstream_localstack.layout import EVALUATOR_TESTS_JAR, build_evaluator
from fraudstream_rules.model import Rule, parse_spec

DRIVER = "io.fraudstream.evaluator.spark.EvaluatorCost"
T0_MS = 1_700_000_000_000
INGEST_DELAY_MS = 2  # the Kafka timestamp's lag behind the event time


def records(profile: Profile, rules: int, transactions: int, rate: float, payers: int) -> Iterator[dict[str, object]]:
    """The rule messages of the profile's rules, then its transactions, as EvaluatorCost reads them."""
    for manifest in benchmark_manifests(profile, rules):
        meta = manifest["metadata"]
        rule = Rule(f"{meta['namespace']}/{meta['name']}", 1, f"uid-{meta['name']}", parse_spec(manifest["spec"]))
        yield {"kind": "rule", "ruleId": rule.rule_id, "value": rule.to_message_value().decode(), "ts": T0_MS}
    workload = build_workload(parse_args(["--profile", profile.value, "--payers", str(payers)]))
    step_ms = 1000 / rate
    for i in range(transactions):
        now_ms = T0_MS + 1_000 + round(i * step_ms)
        tx = workload.next(now_ms)
        yield {"kind": "tx", "value": json.dumps(tx.body), "ts": now_ms + INGEST_DELAY_MS, "partition": 0, "offset": i}


def measure(
    recorded: Iterable[dict[str, object]], buckets: int, per_round: int, heap: str, jar: Path | None = None
) -> list[dict[str, int]]:
    """Replays `recorded` (as `records` gives them) through the driver in a JVM of `heap` (-Xms and -Xmx), with the
    evaluator `jar` (the checkout's, built if stale, when None); one dict per round of `per_round` transactions."""
    jar = jar or build_evaluator()
    with tempfile.TemporaryDirectory(prefix="fraudstream-evaluator-cost-") as scratch:
        path = Path(scratch) / "records.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for record in recorded:
                out.write(json.dumps(record) + "\n")
        classpath = ":".join([str(jar), str(EVALUATOR_TESTS_JAR), *map(str, connector_jars()), f"{pyspark_jars()}/*"])
        arguments = [str(path), str(buckets), str(per_round)]
        command = ["java", f"-Xmx{heap}", f"-Xms{heap}", "-cp", classpath, DRIVER, *arguments]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"evaluator_cost: the driver failed (exit {result.returncode}):\n{result.stderr[-4000:]}")
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def summary(rounds: list[dict[str, int]], warmup_rounds: int) -> dict[str, float]:
    """Median, lowest and highest CPU ns and allocated bytes per transaction over the rounds after the warm-up, the
    evaluation's and the router's."""
    measured = rounds[warmup_rounds:]
    if not measured:
        raise SystemExit(f"evaluator_cost: {len(rounds)} rounds, all of them warm-up")
    cpu = [r["cpuNsPerTx"] for r in measured]
    alloc = [r["allocBytesPerTx"] for r in measured]
    return {
        "rounds": len(measured),
        "cpu_ns_per_tx_median": statistics.median(cpu),
        "cpu_ns_per_tx_min": min(cpu),
        "cpu_ns_per_tx_max": max(cpu),
        "alloc_bytes_per_tx_median": statistics.median(alloc),
        "output_rows": sum(r["outputRows"] for r in measured),
        "route_cpu_ns_per_tx_median": statistics.median(r["routeCpuNsPerTx"] for r in measured),
        "route_alloc_bytes_per_tx_median": statistics.median(r["routeAllocBytesPerTx"] for r in measured),
        "routed_buckets": sum(r["routedBuckets"] for r in measured),
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--profile", type=Profile, choices=list(Profile), default=Profile.DEFAULT)
    p.add_argument("--rules", type=int, default=50, help="rules of the default profile (flink-demo has its six)")
    p.add_argument("--payers", type=int, default=100_000)
    p.add_argument("--rate", type=float, default=1_000.0, help="transactions per second of event time")
    p.add_argument("--transactions", type=int, default=200_000)
    p.add_argument("--round", type=int, default=20_000, help="transactions per measured round")
    p.add_argument("--warmup-rounds", type=int, default=3)
    p.add_argument("--buckets", type=int, default=2)
    p.add_argument("--heap", default="4g", help="the driver JVM's heap (-Xms and -Xmx)")
    args = p.parse_args(argv)
    recorded = records(args.profile, args.rules, args.transactions, args.rate, args.payers)
    jar = build_evaluator()
    code = provenance.code(provenance.runnable(jar))  # before the run: the jar it measures, not a later build
    rounds = measure(recorded, args.buckets, args.round, args.heap, jar)
    for r in rounds:
        print(json.dumps(r))
    print(json.dumps({**summary(rounds, args.warmup_rounds), "code": code}))


if __name__ == "__main__":
    main()
