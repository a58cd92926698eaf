"""`make soak`: make bench's measurement for 60 minutes, with what a long run needs on top (CONTRACT section 7).

Runs `bench.run` (same stack, rules, workload and latency measurement; every make bench option passes through,
`--duration-s` defaults to 3600 and `--output` to bench/results/soak.json) with a `Soak` watcher that adds:
- `minutes`: per minute of the window (alerts by their transaction's timestamp, as make bench windows them), p50/p99/
  max alert latency; the detector's heap after GC (the lowest heap occupancy after any collection that ended in that
  minute, from the detector JVM's own GC log, switched on at the start of the window with `jcmd <pid> VM.log`); the
  live old generation as G1's last concurrent marking that ended in that minute found it (`old_live_mb`, from the same
  log: the heap after GC holds, besides the live objects, the garbage G1 has not yet chosen to reclaim); and its
  state on disk (the total size of the files under its checkpoint location: RocksDB snapshots and changelogs, offsets
  and commits; the last sample taken in that minute, sampled every `--sample-interval-s`). A final fragment of 3 s
  or less is not a minute.
- `transitions`: one per checkpoint transition inside the window, i.e. per batch Spark committed (the mtime of
  `<checkpoint>/commits/<batch>`, gathered at every sample, as Spark keeps only the last few), with its stall and,
  from the progress lines of the detector's log, what the parts Spark times cost: the ending batch's state commit
  (its stateful operators' commit times, and RocksDB's own commit phases summed over them) and offsets commit, and
  the next batch's start (latest offsets, write-ahead log, planning); and from the stateful tasks' timeline lines
  (`task timeline:`, one per task of the evaluator's stages) how the stall divides between the tasks stopping, the
  next ones starting and the rules catch-up (`tasks_ms`, see `task_costs`).
- The stall of a transition at T: output is silent while input waits when an alert's transaction is already on the
  transactions topic and no alert at all comes out. For alerts in the order received, alert i ends a silence that
  began at max(received time of alert i-1, Kafka timestamp of alert i's transaction). A transition's stall is the
  longest such silence overlapping [T - reach, T + reach] (`--stall-reach-s`, default 10 s). Outside transitions it
  is about one alert latency (the silence cannot exceed it), so a stall shows as a value well above the latency.
- Late alerts, those over the budget's upper end (BUDGET_HIGH_MS, 500 ms, which issue 12's p99.9 target also names):
  how many the window held, and how many came near each transition (`transitions[].late_alerts`), which says how
  much of the tail the transitions make.
- `p999_ms` over the window, and a plot of every series next to the JSON.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import contextlib
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from bench import run
from bench.cpu_by_thread import stat_fields
from bench.latency import BUDGET_HIGH_MS, percentile
from fraudstream_detector.checkpoint import log_batches
from fraudstream_localstack.processes import StopSignals

MINUTE_MS = 60_000
MB = 1024 * 1024
_SIZE_MB = {"K": 1 / 1024, "M": 1.0, "G": 1024.0}
# A unified-logging `gc` line of a stop-the-world pause, decorated with `timemillis`:
# [1795454339625ms] GC(5) Pause Young (Normal) (G1 Evacuation Pause) 178M->25M(256M) 0.645ms
_GC_PAUSE = re.compile(
    r"^\[(?P<at>\d+)ms\] GC\(\d+\) Pause .* [\d.]+[KMG]->(?P<after>[\d.]+)(?P<unit>[KMG])\([\d.]+[KMG]\) "
    r"(?P<pause>[\d.]+)ms$"
)
# G1's region liveness table (`gc+liveness=trace`), printed after each concurrent marking ("### PHASE Post-Marking")
# and after its cleanup ("### PHASE Post-Cleanup"), one row per region:
# [1796440214336ms] GC(586) ###   OLD  0x0000000700000000-0x0000000700200000    2097152    2077856    2097152  ...
_LIVENESS_PHASE = re.compile(r"^\[(?P<at>\d+)ms\] GC\(\d+\) ### PHASE (?P<phase>[\w-]+)")
_LIVENESS_ROW = re.compile(
    r"^\[\d+ms\] GC\(\d+\) ###\s+(?P<type>[A-Z]+)\s+0x[0-9a-f]+-0x[0-9a-f]+\s+\d+\s+(?P<prev_live>\d+)\s+\d+\s"
)
_LIVENESS_SUMMARY = re.compile(r"^\[\d+ms\] GC\(\d+\) ### SUMMARY ")
# The region types of the old generation: old regions, and the first and further regions of a humongous object.
_OLD_REGIONS = frozenset({"OLD", "HUMS", "HUMC"})


@dataclass(frozen=True)
class GcPause:
    """One stop-the-world collection: when it ended (epoch ms), the heap occupancy after it (MiB), its pause (ms)."""

    at_ms: int
    heap_after_mb: float
    pause_ms: float


@dataclass(frozen=True)
class Marking:
    """One G1 concurrent marking: when its cleanup pause printed the liveness table (epoch ms), and the live bytes the
    marking found in the old generation (MiB; objects allocated there since the marking began count as live)."""

    at_ms: int
    old_live_mb: float


@dataclass(frozen=True)
class DiskSample:
    """The size of the detector's state on disk (bytes) at `at_ms` (epoch ms)."""

    at_ms: float
    state_bytes: int


@dataclass(frozen=True)
class Minute:
    """One minute of the window (1-based). Latencies are None for a minute without alerts, heap figures for a minute
    without a collection, and the disk size for a minute without a sample."""

    minute: int
    alerts: int
    p50_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    heap_after_gc_mb: float | None
    gc_pause_ms: float
    state_disk_mb: float | None
    old_live_mb: float | None = None


@dataclass(frozen=True)
class Transition:
    """A checkpoint transition: Spark committed `batch` `at_s` seconds into the window; `stall_ms` is the longest
    silence while input waited around it (None when no alert came near it at all); `late_alerts` counts the late
    alerts (`transition_stalls`) it is the nearest commit to. The costs are None when the detector's log has no
    progress line for the batch: `state_commit_ms` is the sum of its stateful operators' commit times and
    `rocksdb_commit_ms` RocksDB's commit phases in them (summed over the operators); `spark_ms` holds the ending
    batch's `commitOffsets` and the next batch's `latestOffset`, `walCommit`, `queryPlanning` and `getBatch`."""

    batch: int
    at_s: float
    stall_ms: float | None
    late_alerts: int = 0
    state_commit_ms: float | None = None
    rocksdb_commit_ms: dict[str, float] | None = None
    spark_ms: dict[str, float] | None = None
    tasks_ms: dict[str, float] | None = None


@dataclass(frozen=True)
class BatchProgress:
    """A batch's progress as the detector logs it (`fraudstream_detector.pipeline.record_progress`): Spark's
    `durationMs`, and per stateful operator its commit time and custom metrics."""

    batch: int
    durations_ms: dict[str, float]
    operators: list[tuple[float, dict[str, float]]]


# fraudstream_detector.pipeline logs: "batch 3: 296354 rows, durations {'addBatch': 301359, ...}, state [(rows,
# commitTimeMs, {'rocksdbCommitFlushLatency': 51, ...}), ...]" (Python reprs of a dict and a list of tuples).
_BATCH_PROGRESS = re.compile(
    r" batch (?P<batch>\d+): \d+ rows, durations (?P<durations>\{[^}]*\}), state (?P<state>\[.*\])$"
)
# RocksDB's commit phases among the operators' custom metrics.
_ROCKSDB_COMMIT = re.compile(r"^rocksdb(Commit\w*Latency\w*|ChangeLogWriterCommitLatencyMs|SaveZipFilesLatencyMs)$")
# The evaluator's TaskTimeline lines: "task timeline: operator=evaluate batch=3 partition=1 started=<epoch ms>
# firstRecord=<ms or -> rulesCaughtUp=<ms or -> lastRecord=<ms or -> closed=<ms or -> records=<n>", logged once a
# task runs (closed=-) and again when it closes.
_TASK_TIMELINE = re.compile(
    r"task timeline: operator=(?P<operator>\w+) batch=(?P<batch>\d+) partition=(?P<partition>\d+) "
    r"started=(?P<started>\d+) firstRecord=(?P<first>\d+|-) rulesCaughtUp=(?P<caught_up>\d+|-) "
    r"lastRecord=(?P<last>\d+|-) closed=(?P<closed>\d+|-) records=(?P<records>\d+)$"
)
_ENDING_PHASES = ("commitOffsets",)
_STARTING_PHASES = ("latestOffset", "walCommit", "queryPlanning", "getBatch")


@dataclass(frozen=True)
class TaskSpan:
    """One task of a stateful stage as its last timeline line tells it (epoch ms; None: it did not happen, or not
    yet): initialized (`started_ms`, its state loaded), first and last call with records, rules caught up (the
    evaluator only), closed (after its state commit; None while it runs)."""

    operator: str
    batch: int
    partition: int
    started_ms: int
    first_record_ms: int | None
    rules_caught_up_ms: int | None
    last_record_ms: int | None
    closed_ms: int | None
    records: int


def parse_task_timelines(text: str) -> list[TaskSpan]:
    """Every task of a detector log's timeline lines, as its last line tells it, in the order of their first lines;
    other lines are skipped."""

    def ms(value: str) -> int | None:
        return None if value == "-" else int(value)

    spans: dict[tuple[str, int, int], TaskSpan] = {}
    for line in text.splitlines():
        m = _TASK_TIMELINE.search(line.rstrip())
        if m:
            task = (m["operator"], int(m["batch"]), int(m["partition"]))
            spans[task] = TaskSpan(
                *task, int(m["started"]), ms(m["first"]), ms(m["caught_up"]), ms(m["last"]), ms(m["closed"]),
                int(m["records"]),
            )  # fmt: skip
    return list(spans.values())


def task_costs(batch: int, spans: Sequence[TaskSpan]) -> dict[str, float]:
    """How the transition after `batch` divides, as the stateful tasks saw it (ms; each stage is back when its last
    task is, so every time is the latest over the stage's tasks; a part whose times are missing is left out):
    - `evaluate_last_record_to_closed`: from the evaluator's last record of `batch` to the end of its last task (the
      input's end reaching it, and its state commit);
    - `report_closed_after_evaluate`: how much later the report stage's last task ended (its commit after its input);
    - `closed_to_next_started`: from the last task of `batch` ending to the evaluator's last task of the next batch
      initialized (Spark's offsets commit and planning, task scheduling, the state store's load);
    - `started_to_first_record`: from there to its first record (the sources and the shuffle starting);
    - `rules_catch_up`: from there to the rules caught up (the barrier);
    - `evaluate_gap`: from the evaluator's last record of `batch` to its rules caught up in the next, the whole pause.
    """

    def latest(operator: str, of_batch: int, field: str) -> int | None:
        times = [getattr(s, field) for s in spans if s.operator == operator and s.batch == of_batch]
        return None if not times or None in times else max(times)

    last_record = latest("evaluate", batch, "last_record_ms")
    evaluate_closed = latest("evaluate", batch, "closed_ms")
    report_closed = latest("report", batch, "closed_ms")
    ended = max((t for t in (evaluate_closed, report_closed) if t is not None), default=None)
    started = latest("evaluate", batch + 1, "started_ms")
    first_record = latest("evaluate", batch + 1, "first_record_ms")
    caught_up = latest("evaluate", batch + 1, "rules_caught_up_ms")
    parts = {
        "evaluate_last_record_to_closed": (last_record, evaluate_closed),
        "report_closed_after_evaluate": (evaluate_closed, report_closed),
        "closed_to_next_started": (ended, started),
        "started_to_first_record": (started, first_record),
        "rules_catch_up": (first_record, caught_up),
        "evaluate_gap": (last_record, caught_up),
    }
    return {name: float(to - begin) for name, (begin, to) in parts.items() if begin is not None and to is not None}


def parse_gc_log(text: str) -> list[GcPause]:
    """The pauses of a `-Xlog:gc` (or `jcmd VM.log what=gc`) log decorated with `timemillis`, in log order; lines
    that are not a pause with a heap transition (concurrent phases, other tags) are skipped."""
    pauses = []
    for line in text.splitlines():
        m = _GC_PAUSE.match(line.strip())
        if m:
            after_mb = float(m["after"]) * _SIZE_MB[m["unit"]]
            pauses.append(GcPause(int(m["at"]), after_mb, float(m["pause"])))
    return pauses


def parse_markings(text: str) -> list[Marking]:
    """The concurrent markings of a G1 log with `gc+liveness=trace` (decorated with `timemillis`), in log order: for
    each region table printed after a marking's cleanup, the live bytes of its old and humongous regions, which the
    table's `prev-live` column holds once the cleanup has made that marking the current one. A table counts only
    once its summary line is in the log (one still being written does not); other lines are skipped."""
    markings: list[Marking] = []
    at_ms: int | None = None
    live = 0
    for line in text.splitlines():
        if m := _LIVENESS_PHASE.match(line):
            at_ms, live = (int(m["at"]) if m["phase"] == "Post-Cleanup" else None), 0
        elif at_ms is None:
            continue
        elif m := _LIVENESS_ROW.match(line):
            live += int(m["prev_live"]) if m["type"] in _OLD_REGIONS else 0
        elif _LIVENESS_SUMMARY.match(line):
            markings.append(Marking(at_ms, live / MB))
            at_ms = None
    return markings


def parse_batch_progress(text: str) -> dict[int, BatchProgress]:
    """The batches' progress lines of a detector log by batch id (the last line wins); other lines, and lines whose
    reprs do not parse, are skipped."""
    batches = {}
    for line in text.splitlines():
        m = _BATCH_PROGRESS.search(line.rstrip())
        if not m:
            continue
        try:
            durations = ast.literal_eval(m["durations"])
            state = ast.literal_eval(m["state"])
            operators = [(float(commit_ms), {k: float(v) for k, v in custom.items()}) for _, commit_ms, custom in state]
        except (ValueError, SyntaxError, TypeError, AttributeError):
            continue
        batch = int(m["batch"])
        batches[batch] = BatchProgress(batch, {k: float(v) for k, v in durations.items()}, operators)
    return batches


def with_costs(
    transition: Transition, progress: dict[int, BatchProgress], spans: Sequence[TaskSpan] = ()
) -> Transition:
    """`transition` with the costs Spark timed (Transition's fields) from the progress of its batch and the next, and
    with the parts its stateful tasks saw (`task_costs`) from their timeline `spans`."""
    tasks = task_costs(transition.batch, spans)
    if tasks:
        transition = replace(transition, tasks_ms=tasks)
    ending, starting = progress.get(transition.batch), progress.get(transition.batch + 1)
    if ending is None:
        return transition
    rocksdb: dict[str, float] = {}
    for _, custom in ending.operators:
        for name, ms in custom.items():
            if _ROCKSDB_COMMIT.match(name):
                rocksdb[name] = rocksdb.get(name, 0.0) + ms
    spark = {p: ending.durations_ms[p] for p in _ENDING_PHASES if p in ending.durations_ms}
    if starting is not None:
        spark.update({p: starting.durations_ms[p] for p in _STARTING_PHASES if p in starting.durations_ms})
    return replace(
        transition,
        state_commit_ms=sum(commit_ms for commit_ms, _ in ending.operators),
        rocksdb_commit_ms=rocksdb,
        spark_ms=spark,
    )


def _stats(latencies: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    if not latencies:
        return None, None, None
    ordered = sorted(latencies)
    return round(percentile(ordered, 50), 1), round(percentile(ordered, 99), 1), round(ordered[-1], 1)


def minute_count(start_ms: float, end_ms: float) -> int:
    """Minutes in [start_ms, end_ms), counting a final fragment only when it is longer than 3 s."""
    return math.ceil(max(0.0, end_ms - start_ms - 3_000) / MINUTE_MS)


class _Timed(Protocol):
    """Anything that happened at a time (epoch ms)."""

    @property
    def at_ms(self) -> float: ...


_T = TypeVar("_T", bound=_Timed)


def _last_per_minute(items: Sequence[_T], start_ms: float, count: int) -> list[_T | None]:
    """Per minute k of the `count` from `start_ms`, the latest of `items` that happened in it (None: none did)."""
    last: list[_T | None] = [None] * count
    for item in sorted(items, key=lambda i: i.at_ms):
        k = int((item.at_ms - start_ms) // MINUTE_MS)
        if 0 <= k < count:
            last[k] = item
    return last


def per_minute(
    window: Sequence[run.AlertSample],
    start_ms: float,
    end_ms: float,
    gcs: Sequence[GcPause] = (),
    disk: Sequence[DiskSample] = (),
    markings: Sequence[Marking] = (),
) -> list[Minute]:
    """The per-minute series of [start_ms, end_ms): minute k covers [start + (k-1) min, start + k min). Alerts count
    in the minute of their transaction's Kafka timestamp; collections, markings and disk samples in the minute they
    happened (a minute's marking and disk size are its last)."""
    count = minute_count(start_ms, end_ms)
    latencies: list[list[float]] = [[] for _ in range(count)]
    for s in window:
        k = int((s.transaction_ts_ms - start_ms) // MINUTE_MS)
        if 0 <= k < count:
            latencies[k].append(s.latency_ms)
    heaps: list[list[GcPause]] = [[] for _ in range(count)]
    for gc in gcs:
        k = int((gc.at_ms - start_ms) // MINUTE_MS)
        if 0 <= k < count:
            heaps[k].append(gc)
    last_disk, last_marking = _last_per_minute(disk, start_ms, count), _last_per_minute(markings, start_ms, count)
    minutes = []
    for k in range(count):
        p50, p99, top = _stats(latencies[k])
        heap = min((gc.heap_after_mb for gc in heaps[k]), default=None)
        state, marking = last_disk[k], last_marking[k]
        minutes.append(
            Minute(
                minute=k + 1,
                alerts=len(latencies[k]),
                p50_ms=p50,
                p99_ms=p99,
                max_ms=top,
                heap_after_gc_mb=None if heap is None else round(heap, 1),
                gc_pause_ms=round(sum(gc.pause_ms for gc in heaps[k]), 1),
                state_disk_mb=None if state is None else round(state.state_bytes / MB, 2),
                old_live_mb=None if marking is None else round(marking.old_live_mb, 1),
            )
        )
    return minutes


def silences(alerts: Sequence[run.AlertSample]) -> list[tuple[float, float]]:
    """The (from_ms, to_ms) spans in which an alert's transaction was waiting and no alert came out: for alerts in
    the order received, alert i's span runs from max(previous alert received, its transaction's timestamp) to its
    own reception (the first alert's from its transaction's timestamp). Empty spans are left out."""
    spans = []
    previous_ms = -math.inf
    for s in sorted(alerts, key=lambda a: a.received_ms):
        begin = max(previous_ms, float(s.transaction_ts_ms))
        if s.received_ms > begin:
            spans.append((begin, s.received_ms))
        previous_ms = s.received_ms
    return spans


def transition_stalls(
    alerts: Sequence[run.AlertSample],
    commits: Sequence[tuple[int, float]],
    start_ms: float,
    end_ms: float,
    reach_ms: float = 10_000,
) -> list[Transition]:
    """One Transition per (batch, commit epoch ms) in [start_ms, end_ms]: its stall is the longest silence
    (`silences`) overlapping [commit - reach_ms, commit + reach_ms], and its late alerts those over BUDGET_HIGH_MS
    whose transaction's timestamp is within reach_ms of it and nearer to it than to any other commit, inside the
    window or not (a tie goes to the earlier commit)."""
    spans = silences(alerts)
    ends = [to for _, to in spans]
    ordered = sorted(commits, key=lambda c: c[1])
    times = [at_ms for _, at_ms in ordered]
    late = [0] * len(ordered)
    for alert in alerts:
        if alert.latency_ms > BUDGET_HIGH_MS and times:
            tx_ms = alert.transaction_ts_ms
            after = bisect.bisect_left(times, tx_ms)
            nearest = min((i for i in (after - 1, after) if 0 <= i < len(times)), key=lambda i: abs(tx_ms - times[i]))
            if abs(tx_ms - times[nearest]) <= reach_ms:
                late[nearest] += 1
    transitions = []
    for (batch, at_ms), late_alerts in zip(ordered, late, strict=True):
        if not start_ms <= at_ms <= end_ms:
            continue
        near = [
            to - begin for begin, to in spans[bisect.bisect_left(ends, at_ms - reach_ms) :] if begin <= at_ms + reach_ms
        ]
        stall = round(max(near), 1) if near else None
        transitions.append(Transition(batch, round((at_ms - start_ms) / 1000, 1), stall, late_alerts))
    return transitions


def commit_times(checkpoint_dir: Path) -> list[tuple[int, float]]:
    """(batch, epoch ms) of every batch Spark committed under `checkpoint_dir` (`commits/<batch>` and its mtime); a
    commit Spark deletes while it is read is left out (a later sample no longer sees it either)."""
    times = []
    for batch in log_batches(checkpoint_dir, "commits"):
        try:
            times.append((batch, (checkpoint_dir / "commits" / str(batch)).stat().st_mtime * 1000))
        except FileNotFoundError:
            continue
    return times


def tree_bytes(path: Path) -> int:
    """The total size of the regular files under `path` (0 when it does not exist); files that vanish while it walks
    (RocksDB and Spark delete old versions) are skipped."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def process_group_java(pgid: int, proc: Path = Path("/proc")) -> int | None:
    """The pid of the `java` process in process group `pgid` (the detector's Spark driver JVM), if there is one."""
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm, rest = stat_fields(stat)  # rest: state, ppid, pgrp, ...
        if comm == "java" and int(rest[2]) == pgid:
            return int(entry.name)
    return None


def enable_gc_log(pid: int, path: Path) -> None:
    """Has the running JVM `pid` log every collection to `path`, and G1's region liveness after each concurrent
    marking (Java 9+ unified logging, switched on through the attach API by `jcmd VM.log`: nothing to configure at
    its start, no collection forced; the liveness table is printed inside a marking's remark and cleanup pauses, which
    it lengthens by up to some tens of milliseconds at the defaults, docs/BENCHMARKS.md). Raises CalledProcessError
    when jcmd fails."""
    argv = ["jcmd", str(pid), "VM.log", f"output={path}", "what=gc,gc+liveness=trace", "decorators=timemillis"]
    subprocess.run(argv, check=True, capture_output=True, timeout=30)


class Soak:
    """The soak's Watcher (bench.run.Watcher): samples while the window runs, then reports and plots its series."""

    def __init__(self, sample_interval_s: float = 10.0, reach_ms: float = 10_000) -> None:
        self.sample_interval_s = sample_interval_s
        self.reach_ms = reach_ms
        self.disk: list[DiskSample] = []
        self.commits: list[tuple[int, float]] = []
        self.gc_log: Path | None = None
        self.gc_log_error = ""
        self.detector_log: Path | None = None

    def watch(self, measurement: run.Measurement) -> None:
        self.detector_log = measurement.work / "detector.log"
        self._start_gc_log(measurement)
        end_s = measurement.start_ms / 1000 + measurement.duration_s
        # Spark keeps only the last few commits (session.CHECKPOINT_DEFAULTS): each sample adds those it finds.
        commits: dict[int, float] = {}
        while (now_s := time.time()) < end_s:
            self.disk.append(DiskSample(now_s * 1000, tree_bytes(measurement.checkpoint_dir)))
            commits.update(commit_times(measurement.checkpoint_dir))
            time.sleep(max(0.0, min(self.sample_interval_s - (time.time() - now_s), end_s - time.time())))
        self.disk.append(DiskSample(time.time() * 1000, tree_bytes(measurement.checkpoint_dir)))
        commits.update(commit_times(measurement.checkpoint_dir))
        self.commits = sorted(commits.items())

    def _start_gc_log(self, measurement: run.Measurement) -> None:
        jvm = process_group_java(measurement.detector_pid) if measurement.detector_pid else None
        if jvm is None:
            self.gc_log_error = f"no java process in the detector's process group {measurement.detector_pid}"
            return
        path = measurement.work / "detector-gc.log"
        try:
            enable_gc_log(jvm, path)
            self.gc_log = path
        except (OSError, subprocess.SubprocessError) as exc:
            self.gc_log_error = f"jcmd {jvm} VM.log failed: {exc}"

    def report(self, window: Sequence[run.AlertSample], start_ms: float, end_ms: float) -> dict[str, Any]:
        gc_text = self.gc_log.read_text() if self.gc_log and self.gc_log.exists() else ""
        gcs, markings = parse_gc_log(gc_text), parse_markings(gc_text)
        latencies = sorted(s.latency_ms for s in window)
        log = self.detector_log
        text = log.read_text(errors="replace") if log and log.exists() else ""
        progress, spans = parse_batch_progress(text), parse_task_timelines(text)
        transitions = [
            with_costs(t, progress, spans)
            for t in transition_stalls(window, self.commits, start_ms, end_ms, self.reach_ms)
        ]
        stalls = [t.stall_ms for t in transitions if t.stall_ms is not None]
        return {
            "p999_ms": round(percentile(latencies, 99.9), 1),
            "max_stall_ms": max(stalls, default=None),
            "late_alerts": len(latencies) - bisect.bisect_right(latencies, BUDGET_HIGH_MS),
            "late_alerts_near_transitions": sum(t.late_alerts for t in transitions),
            "minutes": [asdict(m) for m in per_minute(window, start_ms, end_ms, gcs, self.disk, markings)],
            "transitions": [asdict(t) for t in transitions],
            "gc_log": str(self.gc_log) if self.gc_log else self.gc_log_error,
        }

    def plot(self, path: Path, result: dict[str, Any], samples: list[tuple[float, float]], start_ms: float) -> None:
        plt = run.pyplot()
        fig, axes = plt.subplots(3, 2, figsize=(13, 12))
        run.draw_latency(axes[0][0], axes[0][1], samples, start_ms)
        minutes, transitions = result["minutes"], result["transitions"]
        for t in transitions:
            axes[0][0].axvline(t["at_s"], color="grey", linewidth=0.8, alpha=0.6)
        xs = [m["minute"] for m in minutes]
        for key, label in (("p50_ms", "p50"), ("p99_ms", "p99"), ("max_ms", "max")):
            axes[1][0].plot(xs, [_nan(m[key]) for m in minutes], marker=".", label=label)
        axes[1][0].set(xlabel="minute", ylabel="alert latency (ms)", title="latency per minute")
        axes[1][0].legend(loc="upper right")
        axes[1][1].bar([t["at_s"] / 60 for t in transitions], [_nan(t["stall_ms"]) for t in transitions], width=0.3)
        axes[1][1].axhline(BUDGET_HIGH_MS, color="red", linestyle="--", label=f"{BUDGET_HIGH_MS:.0f} ms")
        axes[1][1].set(xlabel="minute", ylabel="stall (ms)", title="checkpoint transition stalls")
        axes[1][1].set_xlim(0, max(len(minutes), 1))
        axes[1][1].legend(loc="upper right")
        axes[2][0].plot(xs, [_nan(m["heap_after_gc_mb"]) for m in minutes], marker=".", label="heap after GC")
        marked = [(m["minute"], m["old_live_mb"]) for m in minutes if m.get("old_live_mb") is not None]
        axes[2][0].plot([x for x, _ in marked], [y for _, y in marked], marker="o", label="old gen live (G1 marking)")
        axes[2][0].set(xlabel="minute", ylabel="MiB", title="detector heap after GC (lowest in the minute)")
        axes[2][0].legend(loc="lower right")
        axes[2][1].plot(xs, [_nan(m["state_disk_mb"]) for m in minutes], marker=".")
        axes[2][1].set(xlabel="minute", ylabel="MiB", title="state on disk (checkpoint location)")
        fig.suptitle(f"fraudstream soak: {result['rate_tps']:.0f} tx/s for {result['duration_s'] / 60:.0f} min")
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="bench.soak",
        description=__doc__,
        epilog="Every other option is make bench's (python -m bench.run --help): --rate, --profile, --detector-arg...",
        allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--sample-interval-s", type=float, default=10.0, help="how often the state size is sampled")
    p.add_argument("--stall-reach-s", type=float, default=10.0, help="how far around a transition a stall counts")
    own, rest = p.parse_known_args(argv)
    defaults = ["--duration-s", "3600", "--output", str(run.RESULTS / "soak.json"), "--label", "soak"]
    return run.main([*defaults, *rest], watcher=Soak(own.sample_interval_s, own.stall_reach_s * 1000))


if __name__ == "__main__":
    StopSignals()  # SIGTERM too unwinds through main's cleanup, which stops everything the run started
    sys.exit(main())
