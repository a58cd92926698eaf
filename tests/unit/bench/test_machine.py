from __future__ import annotations

import time

import pytest

from bench import machine
from bench.machine import Clocks, CpuTimes, cpu_shares, paused_s

# /proc/stat as Linux writes it: the machine's line first, then one per CPU.
STAT = """cpu  3552953 10 871656 2791669 35429 7 85766 188983 0 0
cpu0 1776476 5 435828 1395834 17714 3 42883 94491 0 0
intr 123 0 0
"""


def test_the_machines_cpu_line_is_split_into_busy_idle_and_stolen_ticks() -> None:
    assert CpuTimes.parse(STAT) == CpuTimes(busy=3552953 + 10 + 871656 + 7 + 85766, idle=2791669 + 35429, steal=188983)


def test_a_kernel_without_a_steal_column_counts_none_stolen() -> None:
    assert CpuTimes.parse("cpu  10 0 5 100 1\n") == CpuTimes(busy=15, idle=101, steal=0)


def test_text_without_the_machines_line_is_refused() -> None:
    with pytest.raises(ValueError, match="no 'cpu' line"):
        CpuTimes.parse("cpu0 1 2 3 4\nintr 5\n")


def test_shares_are_of_the_time_between_the_readings() -> None:
    before = CpuTimes(busy=1_000, idle=5_000, steal=10)
    after = CpuTimes(busy=1_000 + 180, idle=5_000 + 15, steal=10 + 5)
    assert cpu_shares(before, after) == {"busy_pct": 90.0, "steal_pct": 2.5}


def test_no_time_between_the_readings_gives_no_shares() -> None:
    same = CpuTimes(busy=1, idle=2, steal=3)
    assert cpu_shares(same, same) == {"busy_pct": None, "steal_pct": None}


def test_this_machines_readings_a_moment_apart_give_shares_within_bounds() -> None:
    # /proc/stat counts in clock ticks (10 ms): work until a few busy ticks lie between the readings.
    before = CpuTimes.now()
    deadline = time.monotonic() + 10
    while (after := CpuTimes.now()).busy - before.busy < 5 and time.monotonic() < deadline:
        machine.speed_index(rounds=1, iterations=100_000)
    shares = cpu_shares(before, after)
    assert shares["busy_pct"] is not None and 0 < shares["busy_pct"] <= 100
    assert shares["steal_pct"] is not None and 0 <= shares["steal_pct"] <= 100


def test_a_pause_is_the_wall_clocks_lead_over_the_monotonic_clock() -> None:
    before = Clocks(wall_s=1_000.0, monotonic_s=50.0)
    # a ~30 s pause that neither clock counted, then the wall clock stepped forward over it (a snapshot's restore)
    assert paused_s(before, Clocks(wall_s=1_000.0 + 210.5, monotonic_s=50.0 + 180.0)) == 30.5
    assert paused_s(before, Clocks(wall_s=1_000.0 + 180.0, monotonic_s=50.0 + 180.0)) == 0.0
    assert paused_s(before, Clocks(wall_s=1_000.0 + 178.0, monotonic_s=50.0 + 180.0)) == -2.0, "set back"


def test_a_reading_takes_the_wall_clock_and_the_monotonic_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("bench.machine.time.time", lambda: 1_796_628_000.25)
    monkeypatch.setattr("bench.machine.time.monotonic", lambda: 2_254.5)
    assert Clocks.now() == Clocks(wall_s=1_796_628_000.25, monotonic_s=2_254.5)


def test_this_machines_clocks_read_a_moment_apart_show_no_pause() -> None:
    before = Clocks.now()
    machine.speed_index(rounds=1, iterations=100_000)
    after = Clocks.now()
    assert after.monotonic_s > before.monotonic_s
    assert abs(paused_s(before, after)) < 0.5  # fails only if the wall clock is stepped in these few milliseconds


def test_the_speed_index_is_iterations_per_second_of_the_median_round(monkeypatch: pytest.MonkeyPatch) -> None:
    timings = iter([0.5, 0.25, 0.4])
    monkeypatch.setattr(machine, "_timed", lambda iterations: next(timings))
    assert machine.speed_index(rounds=3, iterations=1_000_000) == 2.5


def test_the_speed_index_of_this_machine_is_positive() -> None:
    assert machine.speed_index(rounds=2, iterations=100_000) > 0


@pytest.mark.parametrize(("rounds", "iterations"), [(0, 10), (1, 0)])
def test_a_speed_index_of_nothing_is_refused(rounds: int, iterations: int) -> None:
    with pytest.raises(ValueError, match="at least one round"):
        machine.speed_index(rounds=rounds, iterations=iterations)


def test_the_hardware_names_cpus_model_memory_and_python() -> None:
    facts = machine.hardware()
    assert set(facts) == {"cpus", "cpu_model", "memory_gib", "python"}
    assert int(facts["cpus"]) >= 1 and int(facts["memory_gib"]) >= 1
