"""What a benchmark result says about the machine it ran on: its hardware, how fast one of its cores runs a fixed
piece of Python, how busy its CPUs were while the run measured, and whether the machine was paused meanwhile.

The latency of the whole stack on one machine depends on the machine as much as on the code: the same commit gave
`tests/unit` times of 68 s and of 135-164 s on machines that /proc/cpuinfo names alike (docs/BENCHMARKS.md). These
facts let a reader tell a slower or saturated machine from a change in the code.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

PROC_STAT = Path("/proc/stat")
SPEED_LOOP_ITERATIONS = 2_000_000


def hardware() -> dict[str, str]:
    """The CPU count and model, the memory (GiB) and the Python version."""
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((ln.split(":", 1)[1].strip() for ln in cpuinfo if ln.startswith("model name")), "?")
    meminfo = Path("/proc/meminfo").read_text().splitlines()
    mem_kb = next(int(ln.split()[1]) for ln in meminfo if ln.startswith("MemTotal"))
    return {"cpus": str(os.cpu_count()), "cpu_model": cpu, "memory_gib": f"{mem_kb / 2**20:.0f}",
            "python": platform.python_version()}  # fmt: skip


def _speed_loop(n: int) -> int:
    total = 0
    for i in range(n):
        total += i % 7
    return total


def speed_index(rounds: int = 15, iterations: int = SPEED_LOOP_ITERATIONS) -> float:
    """Millions of iterations a second of a fixed single-threaded Python loop, from the median of `rounds` timings.
    The median, not the fastest: on a shared VM one core's speed varies from round to round (13-22 on one idle
    machine within 4 s), and what a latency benchmark meets is the typical speed. Comparable between runs of the
    same Python version only."""
    if rounds < 1 or iterations < 1:
        raise ValueError(f"speed_index needs at least one round and one iteration, got {rounds}, {iterations}")
    return round(iterations / statistics.median(_timed(iterations) for _ in range(rounds)) / 1e6, 2)


def _timed(iterations: int) -> float:
    start = time.perf_counter()
    _speed_loop(iterations)
    return max(time.perf_counter() - start, 1e-9)


@dataclass(frozen=True)
class CpuTimes:
    """The machine's cumulative CPU time over all its CPUs (the `cpu` line of /proc/stat), in clock ticks: busy
    (user, nice, system, irq, softirq; guest time is already inside user), idle (idle, iowait) and stolen by the
    hypervisor."""

    busy: int
    idle: int
    steal: int

    @classmethod
    def parse(cls, stat: str) -> CpuTimes:
        """The times of /proc/stat's text; ValueError if it has no `cpu` line."""
        for line in stat.splitlines():
            fields = line.split()
            if fields and fields[0] == "cpu":
                user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in (fields[1:9] + ["0"] * 8)[:8])
                return cls(busy=user + nice + system + irq + softirq, idle=idle + iowait, steal=steal)
        raise ValueError("no 'cpu' line in /proc/stat")

    @classmethod
    def now(cls) -> CpuTimes:
        return cls.parse(PROC_STAT.read_text())


def cpu_shares(before: CpuTimes, after: CpuTimes) -> dict[str, float | None]:
    """The shares (%) of the machine's CPU time between two readings that were busy and that the hypervisor stole;
    None for both when no time passed between them."""
    busy, idle, steal = after.busy - before.busy, after.idle - before.idle, after.steal - before.steal
    total = busy + idle + steal
    if total <= 0:
        return {"busy_pct": None, "steal_pct": None}
    return {"busy_pct": round(100 * busy / total, 1), "steal_pct": round(100 * steal / total, 1)}


@dataclass(frozen=True)
class Clocks:
    """The wall clock and the monotonic clock, read together (seconds)."""

    wall_s: float
    monotonic_s: float

    @classmethod
    def now(cls) -> Clocks:
        return cls(time.time(), time.monotonic())


def paused_s(before: Clocks, after: Clocks) -> float:
    """How far the wall clock moved beyond the monotonic clock between two readings, in seconds to the millisecond.
    Only a step of the wall clock moves it (NTP's slewing moves both alike): the time a suspend lasted, or a restore
    from a VM snapshot, after which the guest steps its wall clock forward over the pause that neither clock counted
    (as on this project's VMs), or any other step, including one that corrects earlier drift. About 0 when none
    happened; negative if the wall clock was set back."""
    return round((after.wall_s - before.wall_s) - (after.monotonic_s - before.monotonic_s), 3)
