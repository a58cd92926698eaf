"""`make bench`: end-to-end alert latency of the full local stack (CONTRACT section 7).

`--profile flink-demo` runs the Flink fraud-detection demo's six rules on its transaction shape instead of the default
rules and workload; `--window-precision-seconds S` buckets every rule of a day or more (bench/rules.py). `main` takes a
`Watcher`, which is how bench.soak adds its per-minute series and transitions to the same measurement.

Starts Kafka, the control plane, the operator and the detector on free ports, applies N rules as FraudRules,
runs the generator at the given rate for warm-up + duration, and measures every alert with an independent
consumer of the alerts topic: latency = time the consumer receives the alert - the transaction's Kafka
timestamp. Writes bench/results/latest.json, a plot next to it, and a row in docs/BENCHMARKS.md.

`--k8s-env .local/k8s.env` measures the chart that `make k8s-deploy` installed on that node instead (bench/targets.py):
the release upgraded with its in-cluster generator off, its FraudRules replaced by the benchmark's, the load and the
measuring consumer still on this machine, which reaches the cluster's Kafka through the cluster's DNS.

`--kafka-security sasl_ssl|mtls` runs the stack on a secured broker (TLS, ACLs, each component its own principal,
as `make run KAFKA_SECURITY=...`); the measuring consumer then connects as the admin over the same listener.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import shutil
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from confluent_kafka import Consumer, TopicPartition

from bench import cpu_by_thread, machine, provenance, rules
from bench.latency import (
    BUDGET_HIGH_MS,
    BUDGET_LOW_MS,
    finest_bucket_ms,
    histogram_quantile,
    parse_histogram,
    percentile,
)
from bench.rules import write_manifests
from bench.targets import DeployedTarget, LocalTarget, in_cluster_dns
from fraudstream_kafka.settings import ConfigValue, KafkaSettings
from fraudstream_localstack.kafka_security import KafkaSecurity
from fraudstream_localstack.layout import ROOT
from fraudstream_localstack.processes import ManagedProcess, StopSignals

RESULTS = ROOT / "bench" / "results"
BENCHMARKS_MD = ROOT / "docs" / "BENCHMARKS.md"
# A step of the wall clock this long within the window is named in the table and on the console: a restore from a VM
# snapshot paused a run for ~30 s on 2026-12-07 (docs/BENCHMARKS.md), which the latencies alone showed as a hole and
# a stall.
PAUSE_NOTED_S = 1.0


@dataclass(frozen=True)
class AlertSample:
    """One alert as the independent consumer saw it: its times in epoch ms, and which rule raised it for which payer
    (the transaction's `payerId`, the default profile's message key; empty when it has none, as in flink-demo's), to
    tell a late path from a late machine.

    The phases of its latency: ingest -> detect (`detected_ms - transaction_ts_ms`: broker, source, evaluation),
    detect -> send (`sent_ms - detected_ms`: the alert's own Kafka CreateTime, set by the detector's producer) and
    send -> receive (`received_ms - sent_ms`: broker acknowledgement and this consumer's fetch).
    """

    received_ms: float
    transaction_ts_ms: int
    detected_ms: int
    sent_ms: int
    rule_id: str = ""
    payer_id: str = ""

    @classmethod
    def of(cls, alert: Mapping[str, Any], received_ms: float, sent_ms: int) -> AlertSample:
        """The sample of an alert (CONTRACT section 5) received at `received_ms` and sent at `sent_ms`; a rule or a
        payer that the alert does not hold (or holds as null) is empty."""
        transaction = alert.get("transaction")
        payer = transaction.get("payerId") if isinstance(transaction, Mapping) else None
        rule = alert.get("ruleId")
        return cls(
            received_ms,
            int(alert["transactionTimestamp"]),
            int(alert["detectedAt"]),
            sent_ms,
            "" if rule is None else str(rule),
            "" if payer is None else str(payer),
        )

    @property
    def latency_ms(self) -> float:
        return self.received_ms - self.transaction_ts_ms


PHASES: dict[str, Callable[[AlertSample], float]] = {
    "ingest_to_detect": lambda s: s.detected_ms - s.transaction_ts_ms,
    "detect_to_send": lambda s: s.sent_ms - s.detected_ms,
    "send_to_receive": lambda s: s.received_ms - s.sent_ms,
}


@dataclass
class AlertClock:
    """An independent consumer of the alerts topic: one AlertSample per alert."""

    samples: list[AlertSample] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self, kafka: KafkaSettings, topic: str, ready: threading.Event) -> None:
        options: dict[str, ConfigValue] = {
            "group.id": f"bench-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "latest",
            "fetch.wait.max.ms": 5,
            "enable.auto.commit": False,
        }
        consumer = Consumer(kafka.client_config(**options))
        consumer.subscribe([topic], on_assign=lambda c, parts: ready.set())
        try:
            # One message per poll, stamped the moment it is handed over: consume(n, timeout) would hold the first
            # alert of a batch until the batch filled or the timeout passed, and add that wait to its latency.
            while not self._stop.is_set():
                msg = consumer.poll(0.05)
                if msg is None or msg.error() is not None:
                    continue
                received_ms = time.time() * 1000
                value = msg.value()
                if value is not None:  # an alert always has a value; a stray tombstone is not one
                    self.samples.append(AlertSample.of(json.loads(value), received_ms, msg.timestamp()[1]))
        finally:
            consumer.close()

    def stop(self) -> None:
        self._stop.set()


def scrape(urls: Sequence[str]) -> str:
    """The expositions of the endpoints that answer, one after the other (the detector's driver serves the batch
    metrics; each JVM that runs the evaluator's tasks serves the alert latency). One that does not answer adds
    nothing, and shows as a detector histogram that disagrees with the independent measurement."""
    texts = []
    for url in urls:
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                texts.append(resp.read().decode())
        except OSError as exc:
            print(f"bench: no metrics from {url}: {exc}", flush=True)
    return "\n".join(texts)


def end_offsets(kafka: KafkaSettings, topic: str) -> int:
    consumer = Consumer(kafka.client_config(**{"group.id": f"bench-offsets-{uuid.uuid4().hex[:6]}"}))
    try:
        parts = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        return sum(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts)
    finally:
        consumer.close()


def pyplot() -> Any:
    """matplotlib.pyplot on the file-only Agg backend (imported late: only runs that plot need it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot(path: Path, samples: list[tuple[float, float]], start_ms: float) -> None:
    """The latency plot of make bench: latency over time and its distribution, against the budget."""
    plt = pyplot()
    fig, (over_time, dist) = plt.subplots(1, 2, figsize=(12, 4.5))
    draw_latency(over_time, dist, samples, start_ms)
    fig.suptitle("fraudstream end-to-end alert latency")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def draw_latency(over_time: Any, dist: Any, samples: list[tuple[float, float]], start_ms: float) -> None:
    """Draws (received epoch ms, latency ms) samples on two axes: latency against seconds since `start_ms`, and the
    latency histogram; both with the 300 and 500 ms budget lines."""
    xs = [(t - start_ms) / 1000 for t, _ in samples]
    ys = [latency for _, latency in samples]
    over_time.scatter(xs, ys, s=2)
    over_time.set_xlabel("seconds since measurement start")
    over_time.set_ylabel("alert latency (ms)")
    dist.hist(ys, bins=60)
    dist.set_xlabel("alert latency (ms)")
    dist.set_ylabel("alerts")
    for axis, line in ((over_time.axhline, True), (dist.axvline, False)):
        for budget_ms, colour in ((BUDGET_LOW_MS, "orange"), (BUDGET_HIGH_MS, "red")):
            axis(budget_ms, color=colour, linestyle="--", label=f"{budget_ms:.0f} ms budget")
        if line:
            over_time.legend(loc="upper right")


@dataclass(frozen=True)
class Measurement:
    """The measurement window as a Watcher sees it: it began at `start_ms` (epoch ms) and lasts `duration_s`;
    `detector_pid` leads the detector's process group (its Spark JVM is in that group); `checkpoint_dir` is the
    detector's checkpoint location; `work` is the run's scratch directory."""

    work: Path
    checkpoint_dir: Path
    detector_pid: int | None
    start_ms: float
    duration_s: float


class Watcher(Protocol):
    """What a run does during and after its measurement window, beyond measuring alert latency."""

    def watch(self, measurement: Measurement) -> None:
        """Returns once `measurement.duration_s` have passed since `measurement.start_ms`."""

    def report(self, window: Sequence[AlertSample], start_ms: float, end_ms: float) -> dict[str, Any]:
        """Keys to add to the result JSON; `window` holds the alerts for transactions of [start_ms, end_ms)."""

    def plot(self, path: Path, result: dict[str, Any], samples: list[tuple[float, float]], start_ms: float) -> None:
        """Writes the run's plot to `path` (samples: received epoch ms, latency ms)."""


class Wait:
    """make bench's Watcher: waits out the window, adds nothing, plots the latency."""

    def watch(self, measurement: Measurement) -> None:
        time.sleep(max(0.0, measurement.start_ms / 1000 + measurement.duration_s - time.time()))

    def report(self, window: Sequence[AlertSample], start_ms: float, end_ms: float) -> dict[str, Any]:
        return {}

    def plot(self, path: Path, result: dict[str, Any], samples: list[tuple[float, float]], start_ms: float) -> None:
        plot(path, samples, start_ms)


def main(argv: list[str] | None = None, watcher: Watcher | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench", description=__doc__)
    p.add_argument("--rate", type=float, default=1000.0)
    p.add_argument("--duration-s", type=float, default=180.0)
    p.add_argument("--warmup-s", type=float, default=30.0)
    p.add_argument("--rules", type=int, help=f"default profile: how many rules (default {rules.DEFAULT_COUNT})")
    p.add_argument("--payers", type=int, default=100_000)
    p.add_argument(
        "--profile", type=rules.Profile, choices=list(rules.Profile), default="default", help="rules, workload"
    )
    p.add_argument("--window-precision-seconds", type=int, help="windowPrecisionSeconds of every rule of >= 1 day")
    p.add_argument("--detector-arg", action="append", default=[], help="extra detector flag (repeatable)")
    p.add_argument("--label", default="", help="free text recorded with the result (e.g. the lever tried)")
    p.add_argument(
        "--keep-data",
        action="store_true",
        help="keep the stack's stored data (the detector's checkpoint, Kafka's and etcd's data) in the run's scratch "
        "directory; removed after a successful run by default, while the logs and alerts.csv stay",
    )
    p.add_argument("--output", type=Path, default=RESULTS / "latest.json", help="result JSON; the plot goes next to it")
    p.add_argument(
        "--cpu-by-thread",
        action="store_true",
        help="also record the cores each part of the stack used (the detector's tasks, JIT and GC, the broker, the "
        "generator...) in 10 s windows from the load's start, read from /proc each second (bench/cpu_by_thread.py)",
    )
    p.add_argument(
        "--kafka-security",
        type=KafkaSecurity,
        choices=list(KafkaSecurity),
        default=KafkaSecurity.PLAINTEXT,
        help="plaintext; sasl_ssl (TLS, SCRAM-SHA-512) or mtls (mutual TLS), both with ACLs per component",
    )
    p.add_argument(
        "--k8s-env",
        type=Path,
        help="measure the chart deployed by `make k8s-deploy` on the node of this env file (.local/k8s.env) instead "
        "of a local stack of the run's own",
    )
    p.add_argument(
        "--k8s-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --k8s-env: a chart value for the measured release (helm --set; repeatable), e.g. "
        "detector.executor.memory=2g",
    )
    args = p.parse_args(argv)
    if args.k8s_set and not args.k8s_env:
        p.error("--k8s-set sets values of the release that --k8s-env measures")
    manifests, watcher = rules.for_options(p, args), watcher or Wait()
    if args.k8s_env:
        if not isinstance(watcher, Wait):
            p.error("--k8s-env measures alert latency only (make bench); soak's watchers need the local stack")
        if args.kafka_security is not KafkaSecurity.PLAINTEXT or args.detector_arg:
            p.error("--k8s-env measures the release as deployed: set its Kafka and detector through the chart")
        in_cluster_dns(args.k8s_env, sys.argv[1:] if argv is None else argv)
    work = Path(tempfile.mkdtemp(prefix="fraudstream-bench-"))
    rules_dir = write_manifests(work / "rules", manifests)
    target: LocalTarget | DeployedTarget = (
        DeployedTarget(args.k8s_env, rules_dir, args.k8s_set)
        if args.k8s_env
        else LocalTarget(work, rules_dir, args.detector_arg, args.kafka_security)
    )
    topics = target.topics
    clock = AlertClock()
    threads = cpu_by_thread.Sampler() if args.cpu_by_thread else None
    speed = machine.speed_index()  # before the stack starts, on a machine with nothing of the run's yet
    try:
        print(f"bench: starting {target.label} ({work})", flush=True)
        target.start()
        code = provenance.code(target.runnable)
        kafka = target.kafka
        ready = threading.Event()
        consumer = threading.Thread(target=clock.run, args=(kafka, topics.alerts, ready), daemon=True)
        consumer.start()
        ready.wait(30)
        det_urls = target.metrics_urls()
        generator = ManagedProcess(
            "generator",
            [sys.executable, "-m", "fraudstream_generator", "--rate", str(args.rate), "--payers", str(args.payers),
             "--duration-s", str(args.warmup_s + args.duration_s), "--profile", args.profile.value],
            work / "generator.log",
            env=target.generator_env(),
        ).start()  # fmt: skip
        if threads:
            threads.start()
        print(
            f"bench: {args.rate:.0f} tx/s, warm-up {args.warmup_s:.0f}s, measuring {args.duration_s:.0f}s", flush=True
        )
        tx_before = end_offsets(kafka, topics.transactions)
        time.sleep(args.warmup_s)  # the load itself sets the pace here; nothing is being waited for
        clocks_start = machine.Clocks.now()
        start_ms = clocks_start.wall_s * 1000
        cpu_start = machine.CpuTimes.now()
        tx_start = end_offsets(kafka, topics.transactions)
        metrics_start = scrape(det_urls)  # one scrape: both histograms describe the same instant
        hist_start = parse_histogram(metrics_start, "fraud_alert_latency_seconds")
        batches_start = parse_histogram(metrics_start, "fraud_batch_duration_seconds")
        watcher.watch(
            Measurement(
                work, target.checkpoint_dir or work / "checkpoint", target.detector_pid, start_ms, args.duration_s
            )
        )
        clocks_end = machine.Clocks.now()
        end_ms = clocks_end.wall_s * 1000
        cpu_end = machine.CpuTimes.now()
        tx_end = end_offsets(kafka, topics.transactions)
        generator.stop(grace_s=60)
        if threads:
            threads.stop()
        # Alerts for transactions sent in the window may still be on their way: wait a bounded drain.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(s.transaction_ts_ms >= end_ms - 1 for s in clock.samples[-50:]):
            time.sleep(0.5)
        metrics_end = scrape(det_urls)
        hist_end = parse_histogram(metrics_end, "fraud_alert_latency_seconds")
        batches_end = parse_histogram(metrics_end, "fraud_batch_duration_seconds")
    finally:
        if threads:
            threads.stop()
        clock.stop()
        target.stop()
    window = sorted((s for s in clock.samples if start_ms <= s.transaction_ts_ms < end_ms), key=lambda s: s.received_ms)
    write_samples(work / "alerts.csv", window)
    measured = [(s.received_ms, s.latency_ms) for s in window]
    latencies = sorted(lat for _, lat in measured)
    half = len(measured) // 2
    result = {
        "rate_tps": args.rate,
        "achieved_tps": round((tx_end - tx_start) / ((end_ms - start_ms) / 1000), 1),
        "duration_s": args.duration_s,
        "warmup_s": args.warmup_s,
        "transactions": tx_end - tx_start,
        "transactions_total": tx_end - tx_before,
        "alerts": len(latencies),
        "p50_ms": round(percentile(latencies, 50), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "p99_ms": round(percentile(latencies, 99), 1),
        "max_ms": round(latencies[-1], 1) if latencies else None,
        "detector_p50_ms": round(histogram_quantile(0.50, hist_start, hist_end) * 1000, 1),
        "detector_p99_ms": round(histogram_quantile(0.99, hist_start, hist_end) * 1000, 1),
        "batch_p50_ms": round(histogram_quantile(0.50, batches_start, batches_end) * 1000, 1),
        "batch_p99_ms": round(histogram_quantile(0.99, batches_start, batches_end) * 1000, 1),
        "first_half_p99_ms": round(percentile(sorted(lat for _, lat in measured[:half]), 99), 1),
        "second_half_p99_ms": round(percentile(sorted(lat for _, lat in measured[half:]), 99), 1),
        "phases_ms": {name: spread([phase(s) for s in window]) for name, phase in PHASES.items()},
        "samples_csv": str(work / "alerts.csv"),
        "rules": len(manifests),
        "profile": args.profile.value,
        "window_precision_seconds": args.window_precision_seconds,
        "payers": args.payers,
        "detector_args": args.detector_arg,
        "kafka_security": args.kafka_security.value,
        "target": "k8s" if args.k8s_env else "local",
        "chart_settings": args.k8s_set,
        "label": args.label,
        "code": code,
        "machine": {**machine.hardware(), "speed_index": speed},
        "cpu_during_window": machine.cpu_shares(cpu_start, cpu_end),
        "paused_s": machine.paused_s(clocks_start, clocks_end),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    result["budget_met"] = bool(latencies) and result["p99_ms"] <= BUDGET_HIGH_MS and result["p50_ms"] <= BUDGET_LOW_MS
    resolution_ms = finest_bucket_ms(hist_end)
    result["detector_agrees"] = agrees(result["detector_p50_ms"], result["p50_ms"], resolution_ms) and agrees(
        result["detector_p99_ms"], result["p99_ms"], resolution_ms
    )
    if threads:
        result["cpu_by_thread"] = threads.report()
    result.update(watcher.report(window, start_ms, end_ms))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    watcher.plot(args.output.with_suffix(".png"), result, measured, start_ms)
    append_markdown(result)
    print(json.dumps(result, indent=2))
    if step := _clock_step(result["paused_s"]):
        print(f"bench: {step} over the window (the wall clock stepped against the monotonic clock; forward: the "
              "machine was paused, as by a VM snapshot); the figures include it", flush=True)  # fmt: skip
    if not args.keep_data:
        remove_stored_data(target.stored_data())
    return 0


def remove_stored_data(paths: list[Path]) -> None:
    """Removes a finished run's stored data (LocalTarget.stored_data), saying what went; a failed run keeps it."""
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)
    if paths:
        print(f"bench: removed the stored data ({', '.join(map(str, paths))}); --keep-data keeps it", flush=True)


def agrees(reported_ms: float, measured_ms: float, resolution_ms: float, tolerance: float = 0.2) -> bool:
    """Whether the detector's own quantile is within `tolerance` (relative) of the independently measured one, or
    within `resolution_ms` (its histogram's finest bucket width, `finest_bucket_ms`) of it, whichever is wider."""
    allowed = max(tolerance * measured_ms, resolution_ms if math.isfinite(resolution_ms) else 0.0)
    return measured_ms > 0 and abs(reported_ms - measured_ms) <= allowed


def spread(values: list[float]) -> dict[str, float]:
    """p50, p99 and max of some latencies, in ms."""
    ordered = sorted(values)
    return {
        "p50": round(percentile(ordered, 50), 1),
        "p99": round(percentile(ordered, 99), 1),
        "max": round(ordered[-1], 1) if ordered else math.nan,
    }


def write_samples(path: Path, samples: list[AlertSample]) -> None:
    """Every measured alert, for timelines: received, transaction timestamp, detected, sent (epoch ms), the rule and
    the payer (CSV-quoted: both are free text)."""
    with open(path, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["received_ms", "transaction_ts_ms", "detected_ms", "sent_ms", "rule_id", "payer_id"])
        for s in samples:
            out.writerow([f"{s.received_ms:.1f}", s.transaction_ts_ms, s.detected_ms, s.sent_ms, s.rule_id, s.payer_id])


def _security_note(r: dict[str, object]) -> str:
    """Where the run measured and how its Kafka was secured, for the table's label column (nothing for the local
    stack on plaintext)."""
    security = r.get("kafka_security", "plaintext")
    settings = r.get("chart_settings") or []
    assert isinstance(settings, list)
    chart = "".join(f"; {setting}" for setting in settings)
    notes = [f"[k8s-deploy: driver + executor pods{chart}]"] if r.get("target") == "k8s" else []
    return " ".join(notes + ([] if security == "plaintext" else [f"[Kafka {security}]"]))


def _code_note(r: dict[str, object]) -> str:
    """The code the run measured (`provenance`), for the table's label column: the commit, how many files differed
    from it, and the first 12 hex digits of the evaluator jar's SHA-256 or the image the detector ran (nothing for a
    result without them)."""
    code = r.get("code")
    if not isinstance(code, dict) or not code.get("commit"):
        return ""
    parts = [f"at {str(code['commit'])[:7]}"]
    if code.get("changed_files"):
        changed = code["changed_files"]
        parts.append(f"{changed} file{'' if changed == 1 else 's'} changed")
    if code.get("evaluator_jar_sha256"):
        parts.append(f"evaluator {str(code['evaluator_jar_sha256'])[:12]}")
    if code.get("image"):
        parts.append(f"image {code['image']}")
    return "[" + "; ".join(parts) + "]"


def _clock_step(paused: object) -> str:
    """A step of the wall clock within the window (`machine.paused_s`) of at least PAUSE_NOTED_S either way, as the
    table and the console name it; "" for none (or a result without the reading)."""
    if not isinstance(paused, (int, float)) or abs(paused) < PAUSE_NOTED_S:
        return ""
    return f"paused {paused} s" if paused > 0 else f"clock set back {-paused} s"


def _machine_note(m: dict[str, object], cpu: object, paused: object = None) -> str:
    """The table's machine column: CPUs, model and memory, then (in runs since they were recorded) the machine's
    speed index and how busy its CPUs were over the window, with any share the hypervisor stole, and a step of the
    wall clock within the window (`_clock_step`)."""
    note = f"{m['cpus']} CPU {m['cpu_model']}, {m['memory_gib']} GiB"
    if m.get("speed_index") is not None:
        note += f", speed {m['speed_index']}"
    if isinstance(cpu, dict) and cpu.get("busy_pct") is not None:
        note += f", {cpu['busy_pct']}% busy" + (f" ({cpu['steal_pct']}% stolen)" if cpu.get("steal_pct") else "")
    if step := _clock_step(paused):
        note += f", **{step}**"
    return note


def append_markdown(r: dict[str, object]) -> None:
    if not BENCHMARKS_MD.exists():
        BENCHMARKS_MD.parent.mkdir(parents=True, exist_ok=True)
        BENCHMARKS_MD.write_text(
            "# Benchmarks\n\nRows appended by `make bench` (bench/run.py). Latency = alert received by an independent "
            "consumer - transaction Kafka timestamp.\n\n"
            "| when (UTC) | label | rate | achieved | rules | payers | alerts | p50 ms | p95 ms | p99 ms | max ms "
            "| detector p99 ms | batch p50 ms | machine |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        )
    m = r["machine"]
    assert isinstance(m, dict)
    label = " ".join(str(part) for part in (r["label"], _security_note(r), _code_note(r)) if part) or "-"
    row = (
        f"| {r['finished_at']} | {label} | {r['rate_tps']} | {r['achieved_tps']} | {r['rules']} "
        f"| {r['payers']} | {r['alerts']} | {r['p50_ms']} | {r['p95_ms']} | {r['p99_ms']} | {r['max_ms']} "
        f"| {r['detector_p99_ms']} | {r['batch_p50_ms']} "
        f"| {_machine_note(m, r.get('cpu_during_window'), r.get('paused_s'))} |\n"
    )
    with open(BENCHMARKS_MD, "a") as f:
        f.write(row)


if __name__ == "__main__":
    StopSignals()  # SIGTERM too unwinds through main's cleanup, which stops everything the run started
    sys.exit(main())
