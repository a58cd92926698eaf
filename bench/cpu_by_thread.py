"""`bench.run --cpu-by-thread`: which parts of the stack used the machine's cores while the load ran, in windows
from the load's start: the detector's task threads, its JIT compilers, its garbage collector, RocksDB's compaction,
the broker and its JIT, the generator, the rest.

Linux counts CPU time (utime + stime, in clock ticks) for each process in /proc/<pid>/stat, its ended threads
included, and for each thread in /proc/<pid>/task/<tid>/stat. A `Sampler` reads every process once per interval,
and the threads of the processes a thread group looks into (the two JVMs); the ticks a process or thread gained
between two reads are charged to the groups it belongs to (`GROUPS`), and a window's cores are its charged ticks
over its length in seconds. The accounting (`Ledger`) promises:
- a process or thread is known by its id and its start time (Linux reuses ids), and is charged what it gained since
  it was last read, so a read that misses one (a process being created, a /proc read that failed) moves that time
  into a later interval and never charges a lifetime twice;
- one first seen after the sampling began is charged all its ticks if it started after the first read, and none if
  it started before (its earlier ticks are not this run's);
- a process that ends between two reads loses what it used since its last read; so does a thread, so a window in
  which many threads end (a checkpoint transition's) undercounts the thread groups, not their processes.
Linux truncates thread names to 15 characters; thread groups match names by prefix. `machine` is /proc/stat's busy
time of all CPUs, the kernel's included, so it is not the sum of the groups.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench import machine

PROC = Path("/proc")
CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
INTERVAL_S = 1.0
WINDOW_S = 10.0

# (process kind, text its command line holds), the first match wins: Spark's JVM also names the detector's module.
PROCESS_KINDS: tuple[tuple[str, str], ...] = (
    ("detector_jvm", "org.apache.spark.deploy.SparkSubmit"),
    ("broker_jvm", "kafka.Kafka"),
    ("generator", "fraudstream_generator"),
    ("detector_python", "fraudstream_detector"),
    ("operator", "fraudstream_operator"),
    ("control_plane", "kube-apiserver"),
    ("control_plane", "etcd"),
)


@dataclass(frozen=True)
class Group:
    """The whole of each process of kind `process` (`names` empty), or the threads of such processes whose name starts
    with one of `names`."""

    process: str
    names: tuple[str, ...] = ()
    description: str = ""

    def holds(self, use: CpuUse) -> bool:
        """Whether this group is charged what `use` gains."""
        if use.process != self.process:
            return False
        return use.thread is None if not self.names else use.thread is not None and use.thread.startswith(self.names)


GROUPS: Mapping[str, Group] = {
    "detector_jvm": Group("detector_jvm", description="the detector's Spark JVM (driver and executor), every thread"),
    "detector_tasks": Group(
        "detector_jvm", ("Executor task l",), "the detector's task threads (every stage's tasks: sources, evaluation)"
    ),
    "detector_jit": Group("detector_jvm", ("C1 CompilerThre", "C2 CompilerThre"), "the detector's JIT compilers"),
    "detector_gc": Group("detector_jvm", ("GC Thread", "G1 "), "the detector's G1 threads (pauses, marking...)"),
    "rocksdb_compaction": Group("detector_jvm", ("rocksdb:low",), "RocksDB's compaction pool in the detector"),
    "broker_jvm": Group("broker_jvm", description="the Kafka broker's JVM, every thread"),
    "broker_jit": Group("broker_jvm", ("C1 CompilerThre", "C2 CompilerThre"), "the broker's JIT compilers"),
    "generator": Group("generator", description="the load generator (Python and librdkafka's threads)"),
    "detector_python": Group("detector_python", description="the detector's Python driver process"),
    "operator": Group("operator", description="the kopf operator"),
    "control_plane": Group("control_plane", description="kube-apiserver and etcd"),
    "other": Group("other", description="every other process on the machine, this benchmark's own included"),
}
THREADED = frozenset(group.process for group in GROUPS.values() if group.names)


def stat_fields(text: str) -> tuple[str, list[str]]:
    """A /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat line split into its name (comm, which may hold spaces and
    parentheses) and the fields after it, from state (proc(5)'s field 3) on; ValueError when it is not one."""
    open_at, close_at = text.find("("), text.rfind(")")
    if open_at < 0 or close_at < open_at:
        raise ValueError(f"not a /proc stat line: {text[:80]!r}")
    return text[open_at + 1 : close_at], text[close_at + 2 :].split()


@dataclass(frozen=True)
class CpuUse:
    """The CPU time (utime + stime, clock ticks) a process of kind `process` had used when read: all its threads, the
    ended ones included, when `thread` is None, else that one thread (`thread` is its name). `started` is when the
    process or thread started, in clock ticks since boot."""

    process: str
    thread: str | None
    started: int
    ticks: int

    @classmethod
    def parse(cls, process: str, stat: str, *, thread: bool) -> CpuUse:
        name, rest = stat_fields(stat)
        # rest[0] is field 3 (state): utime, stime are fields 14 and 15, starttime field 22.
        return cls(process, name if thread else None, int(rest[19]), int(rest[11]) + int(rest[12]))


# A reading's key of a use: (pid or tid, started, whether it is one thread); Linux reuses ids, and a process's id is
# also its main thread's.
UseKey = tuple[int, int, bool]


@dataclass(frozen=True)
class Reading:
    """What the sampler read at `at_s` (seconds since the load's start): every process, and the threads of THREADED
    kinds; `uptime_ticks` is the machine's uptime then, in clock ticks; `busy_ticks` its CPUs' busy time
    (/proc/stat)."""

    at_s: float
    uptime_ticks: int
    busy_ticks: int
    uses: Mapping[UseKey, CpuUse]


@dataclass(frozen=True)
class Interval:
    """The time between two readings: its end (seconds since the load's start), its length, and the ticks charged to
    each group and to `machine`."""

    end_s: float
    length_s: float
    charged: Mapping[str, int]


@dataclass
class Ledger:
    """Charges each interval between readings to the groups (module docstring), in `intervals`."""

    groups: Mapping[str, Group] = field(default_factory=lambda: GROUPS)
    intervals: list[Interval] = field(default_factory=list, init=False)
    _first: Reading | None = field(default=None, init=False)
    _last: Reading | None = field(default=None, init=False)
    _ticks: dict[UseKey, int] = field(default_factory=dict, init=False)

    def add(self, reading: Reading) -> None:
        """Charges what happened since the previous reading (nothing for the first, which is the baseline)."""
        charged = dict.fromkeys(self.groups, 0)
        for key, use in reading.uses.items():
            before = self._ticks.get(key)
            if before is None and self._first is not None and use.started >= self._first.uptime_ticks:
                before = 0
            self._ticks[key] = use.ticks
            if before is None:  # the first reading, or a use from before it read for the first time
                continue
            for name, group in self.groups.items():
                if group.holds(use):
                    charged[name] += use.ticks - before
        if self._last is not None:
            charged["machine"] = reading.busy_ticks - self._last.busy_ticks
            self.intervals.append(Interval(reading.at_s, reading.at_s - self._last.at_s, charged))
        self._first = self._first or reading
        self._last = reading

    def windows(self, window_s: float, ticks_per_s: float) -> list[dict[str, float]]:
        """Cores per group (and `machine`) in consecutive windows of `window_s` from the load's start; an interval
        belongs to the window its end falls in, and a window's length is the sum of its intervals'. A window whose
        intervals took no time (readings at one instant) has no cores to give and is left out."""
        if window_s <= 0:
            raise ValueError(f"a window must last some time, got {window_s} s")
        by_window: dict[int, list[Interval]] = {}
        for interval in self.intervals:
            by_window.setdefault(int(interval.end_s // window_s), []).append(interval)
        rows = []
        for index in sorted(by_window):
            parts = by_window[index]
            seconds = sum(part.length_s for part in parts)
            if seconds <= 0:
                continue
            row: dict[str, float] = {"from_s": index * window_s, "to_s": (index + 1) * window_s}
            for name in [*self.groups, "machine"]:
                row[name] = round(sum(part.charged.get(name, 0) for part in parts) / ticks_per_s / seconds, 3)
            rows.append(row)
        return rows


def process_kind(cmdline: str) -> str:
    """The kind (PROCESS_KINDS) of a process with this command line (arguments joined by spaces), else `other`."""
    return next((kind for kind, text in PROCESS_KINDS if text in cmdline), "other")


def _text(path: str) -> str:
    with open(path, "rb") as f:
        return f.read().decode(errors="replace")


class ProcReader:
    """Reads every process's CPU use from /proc, and that of each thread of the processes whose kind is in `threaded`
    (the only ones a thread group needs, which keeps a reading cheap); processes and threads that end while it reads
    are left out. A process's kind is read from its command line when it is first seen, and again when its name
    changes (an exec: spark-submit is a shell script that execs Java)."""

    def __init__(self, proc: Path = PROC, threaded: frozenset[str] = THREADED) -> None:
        self._proc, self._threaded = str(proc), threaded
        self._kinds: dict[tuple[int, int, str], str] = {}

    def __call__(self) -> dict[UseKey, CpuUse]:
        uses: dict[UseKey, CpuUse] = {}
        kinds: dict[tuple[int, int, str], str] = {}
        for pid in os.listdir(self._proc):
            if not pid.isdigit():
                continue
            base = f"{self._proc}/{pid}"
            try:
                named = CpuUse.parse("", _text(f"{base}/stat"), thread=True)  # as a thread, to keep its name
                known = (int(pid), named.started, named.thread or "")
                kind = self._kinds.get(known)
                if kind is None:
                    kind = process_kind(_text(f"{base}/cmdline").replace("\0", " "))
                tids = os.listdir(f"{base}/task") if kind in self._threaded else []
            except (OSError, ValueError, IndexError):
                continue
            kinds[known] = kind
            uses[(int(pid), named.started, False)] = replace(named, process=kind, thread=None)
            for tid in tids:
                try:
                    one = CpuUse.parse(kind, _text(f"{base}/task/{tid}/stat"), thread=True)
                except (OSError, ValueError, IndexError):
                    continue
                uses[(int(tid), one.started, True)] = one
        self._kinds = kinds
        return uses


def uptime_ticks(proc: Path = PROC) -> int:
    """How long the machine has been up, in clock ticks (the unit of a process's start in /proc)."""
    return int(float((proc / "uptime").read_text().split()[0]) * CLOCK_TICKS_PER_S)


class Sampler:
    """Reads /proc (`ProcReader`) each `interval_s` on a thread of its own from `start` to `stop`; `report` gives the
    windows. Its own reads are charged to `other`, with this benchmark. A reading that fails is skipped (the next
    one charges its time) and counted in the report, with the last error, rather than ending the sampling."""

    def __init__(
        self,
        interval_s: float = INTERVAL_S,
        read: Callable[[], Mapping[UseKey, CpuUse]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._interval_s, self._read, self._clock = interval_s, read or ProcReader(), clock
        self._ledger = Ledger()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-by-thread", daemon=True)
        self._start_s = 0.0
        self._failed, self._last_error = 0, ""

    def start(self) -> Sampler:
        self._start_s = self._clock()
        self.sample()
        self._thread.start()
        return self

    def sample(self) -> None:
        """One reading, added to the ledger."""
        at_s = self._clock() - self._start_s
        busy, uptime = machine.CpuTimes.now().busy, uptime_ticks()
        self._ledger.add(Reading(at_s, uptime, busy, self._read()))

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self.sample()
            except Exception as exc:  # any failure of one reading: reported, and the next one may succeed
                self._failed, self._last_error = self._failed + 1, f"{type(exc).__name__}: {exc}"

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def report(self, window_s: float = WINDOW_S) -> dict[str, Any]:
        """The result JSON's `cpu_by_thread`: how it was measured, what each group holds, the windows, and how many
        readings failed (with the last one's error)."""
        return {
            "sampler": f"/proc/<pid>/stat of every process and /proc/<pid>/task/<tid>/stat of the JVMs' threads every "
            f"{self._interval_s:g} s (bench/cpu_by_thread.py); cores per {window_s:g} s window from the load's start; "
            "threads that end undercount their thread groups' windows",
            "groups": {name: group.description for name, group in self._ledger.groups.items()}
            | {"machine": "busy time of all CPUs (/proc/stat), the kernel's included"},
            "windows": self._ledger.windows(window_s, CLOCK_TICKS_PER_S),
            "failed_readings": self._failed,
            "last_error": self._last_error or None,
        }
